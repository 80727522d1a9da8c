'use strict'

// The app every supervised check runs (an ordinary node http/https app; the router is
// whatever `httpsys start` picked). What it answers depends on the last path segment:
//
//   .../static/x   cacheable for 60 s (Cache-Control: public, max-age=60): { app, pid, n }
//   .../count      how often static/x reached this process: { app, pid, hits }
//   .../big        200 MB (209715200 bytes), byte k being k % 251, streamed with backpressure
//   .../cancel     a head and 1 KB, then the response is destroyed (HTTP.SYS cancels the
//                  request: on h2 a RST_STREAM, on HTTP/1.1 a reset connection)
//   .../upload     the request body's { length, sha256 }
//   .../tls        { encrypted, protocol, authorized, authorizationError, peer: client CN }
//   anything else  { app, pid, url }
//
// HOST_APP names it in answers; HOST_APP_HTTPS=1 makes it an https server (the key
// material is a placeholder HTTP.SYS never uses: the port's binding serves).

const crypto = require('node:crypto')
const http = require('node:http')
const https = require('node:https')

const APP = process.env.HOST_APP || 'app'
const BIG = 200 * 1024 * 1024
const PIECE = 64 * 1024
let hits = 0

function json (res, status, value, headers = {}) {
  const body = JSON.stringify(value)
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers })
  res.end(body)
}

/** 64 KB of the pattern starting at offset `at` (k % 251: a lost piece shows). */
function piece (at, size) {
  const buf = Buffer.allocUnsafe(size)
  for (let i = 0; i < size; i++) buf[i] = (at + i) % 251
  return buf
}

function big (res) {
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': BIG })
  let sent = 0
  const more = () => {
    while (sent < BIG) {
      const size = Math.min(PIECE, BIG - sent)
      const ok = res.write(piece(sent, size))
      sent += size
      if (!ok) return res.once('drain', more)
    }
    res.end()
  }
  more()
}

function handler (req, res) {
  const last = req.url.split('?')[0].split('/').filter(Boolean).pop() || ''
  if (req.url.includes('/static/')) {
    hits++
    return json(res, 200, { app: APP, pid: process.pid, n: hits }, { 'Cache-Control': 'public, max-age=60' })
  }
  if (last === 'count') return json(res, 200, { app: APP, pid: process.pid, hits }, { 'Cache-Control': 'no-store' })
  if (last === 'big') return big(res)
  if (last === 'cancel') {
    res.writeHead(200, { 'Content-Type': 'text/plain' })
    res.write(Buffer.alloc(1024, 'x'))
    setTimeout(() => res.destroy(), 200)
    return
  }
  if (last === 'upload') {
    const hash = crypto.createHash('sha256')
    let length = 0
    req.on('data', (chunk) => { hash.update(chunk); length += chunk.length })
    req.on('end', () => json(res, 200, { length, sha256: hash.digest('hex') }))
    return
  }
  if (last === 'tls') {
    const s = req.socket
    const peer = typeof s.getPeerCertificate === 'function' ? s.getPeerCertificate() : null
    return json(res, 200, {
      app: APP,
      encrypted: s.encrypted === true,
      protocol: typeof s.getProtocol === 'function' ? s.getProtocol() : null,
      authorized: s.authorized === true,
      authorizationError: s.authorizationError || null,
      peer: peer && peer.subject ? peer.subject.CN : null
    })
  }
  json(res, 200, { app: APP, pid: process.pid, url: req.url })
}

const port = Number(process.env.PORT) || 8080
const server = process.env.HOST_APP_HTTPS === '1'
  ? https.createServer({}, handler)
  : http.createServer(handler)
server.listen(port)
