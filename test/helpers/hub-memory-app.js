'use strict'

// An unmodified-looking node app for the hub's memory test, run with the preload
// (--require src/register.js) against HTTPSYS_HUB: every GET but /ping streams 10 MB
// through res with backpressure (Readable.pipe), so it sends only what the response
// window lets it send.

const http = require('node:http')
const { Readable } = require('node:stream')

const SIZE = 10 * 1024 * 1024
const CHUNK = Buffer.alloc(64 * 1024, 120)

http.createServer((req, res) => {
  if (req.url === '/ping') return res.end('pong')
  res.setHeader('Content-Length', SIZE)
  let sent = 0
  new Readable({
    read () {
      if (sent >= SIZE) return this.push(null)
      sent += CHUNK.length
      this.push(CHUNK)
    }
  }).pipe(res)
}).listen(8080)
