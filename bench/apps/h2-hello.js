'use strict'

// Bare node's own answer to h2 for the same handler (bench/https.js, h2 scenario): the
// http2 compat server with HTTP/1.1 fallback, which is what an app would use without
// httpsys to serve h2 (node's https server speaks HTTP/1.1 only).
const fs = require('node:fs')
const http2 = require('node:http2')

const body = 'hello world\n'
http2.createSecureServer({ key: fs.readFileSync(process.env.KEY_FILE), cert: fs.readFileSync(process.env.CERT_FILE), allowHTTP1: true }, (req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end(body)
}).listen(Number(process.env.PORT) || 8443)
