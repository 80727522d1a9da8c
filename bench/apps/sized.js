'use strict'

// A response of BODY_BYTES (the matrix's 10 KB and 1 MB scenarios), made once at start
// so the run measures moving the bytes, not making them.
const http = require('node:http')

const body = Buffer.alloc(Number(process.env.BODY_BYTES) || 10240, 'x')
const headers = { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length }
// CACHE_CONTROL: the matrix's cached scenarios (see hello.js)
if (process.env.CACHE_CONTROL) headers['Cache-Control'] = process.env.CACHE_CONTROL
http.createServer((req, res) => {
  res.writeHead(200, headers)
  res.end(body)
}).listen(Number(process.env.PORT) || 8080)
