'use strict'

// The benchmark's app: the smallest realistic handler (writeHead + end with a body).
// CACHE_CONTROL (the matrix's cached scenarios) adds that Cache-Control header, which
// lets a router's or proxy's output cache answer for the app.
const http = require('node:http')

const body = 'hello world\n'
const headers = { 'Content-Type': 'text/plain' }
if (process.env.CACHE_CONTROL) headers['Cache-Control'] = process.env.CACHE_CONTROL
http.createServer((req, res) => {
  res.writeHead(200, headers)
  res.end(body)
}).listen(Number(process.env.PORT) || 8080)
