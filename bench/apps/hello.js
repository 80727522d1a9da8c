'use strict'

// The benchmark's app: the smallest realistic handler (writeHead + end with a body).
const http = require('node:http')

const body = 'hello world\n'
http.createServer((req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end(body)
}).listen(Number(process.env.PORT) || 8080)
