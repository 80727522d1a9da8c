'use strict'

// The upload scenario's app: reads the whole request body (counting it, as a handler
// that streams an upload to storage would not keep it either) and answers its length.
const http = require('node:http')

http.createServer((req, res) => {
  let bytes = 0
  req.on('data', (chunk) => { bytes += chunk.length })
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'text/plain' })
    res.end(`${bytes}\n`)
  })
}).listen(Number(process.env.PORT) || 8080)
