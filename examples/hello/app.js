'use strict'

// The smallest app: plain node http, nothing httpsys-specific. Both of these run it:
//   node examples/hello/app.js
//   npx httpsys start examples/hello/app.js
// Under httpsys the server receives its requests from a request queue instead of a
// socket; listen(port) asks for the prefix http://+:<port>/.

const http = require('node:http')

const port = Number(process.env.PORT) || 8080

const server = http.createServer((req, res) => {
  res.end('hello world\n')
})

server.listen(port, () => {
  console.log(`hello: listening on http://localhost:${port}/ (pid ${process.pid})`)
})
