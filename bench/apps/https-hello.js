'use strict'

// The HTTPS benchmark's app: bench/apps/hello.js over https.createServer, with the key and
// certificate bench/https.js made (KEY_FILE, CERT_FILE). Unchanged under httpsys.
const fs = require('node:fs')
const https = require('node:https')

const body = 'hello world\n'
https.createServer({ key: fs.readFileSync(process.env.KEY_FILE), cert: fs.readFileSync(process.env.CERT_FILE) }, (req, res) => {
  res.writeHead(200, { 'Content-Type': 'text/plain' })
  res.end(body)
}).listen(Number(process.env.PORT) || 8443)
