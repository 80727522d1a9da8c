'use strict'

// An app for the upload integrity stress (router-upload-integrity.test.js), run with the
// preload against the native router: POST /u/<tag>/<length> checks every byte of its
// body against the pattern its tag names (upload-pattern.js) as it arrives, and answers
// "<length> <sha256>" once the whole body came, or 400 "bad at <offset>". Some requests
// read slowly (paused a few ms between chunks) so the router holds their bodies for
// credit. What it saw goes to the parent over IPC: each mismatch, and each request
// that ended early with the bytes it had checked.

const http = require('node:http')
const crypto = require('node:crypto')
const { firstBad } = require('./upload-pattern')

let seq = 0

http.createServer((req, res) => {
  const m = /^\/u\/(\d+)\/(\d+)(\/slow)?$/.exec(req.url)
  if (!m) return res.end('ready')
  const tag = Number(m[1])
  const want = Number(m[2])
  const slow = m[3] !== undefined && (seq++ % 2 === 0)
  const hash = crypto.createHash('sha256')
  let got = 0
  let bad = -1
  req.on('data', (chunk) => {
    if (bad === -1) {
      const at = firstBad(tag, got, chunk)
      if (at !== -1 || got + chunk.length > want) {
        bad = at !== -1 ? got + at : want
        process.send({ type: 'bad', url: req.url, at: bad, len: chunk.length })
      }
    }
    hash.update(chunk)
    got += chunk.length
    if (slow) {
      req.pause()
      setTimeout(() => req.resume(), 2)
    }
  })
  req.on('end', () => {
    if (bad === -1 && got !== want) {
      bad = got
      process.send({ type: 'bad', url: req.url, at: got, len: 0 })
    }
    const text = bad === -1 ? `${got} ${hash.digest('hex')}` : `bad at ${bad}`
    res.writeHead(bad === -1 ? 200 : 400, { 'Content-Length': Buffer.byteLength(text) })
    res.end(text)
    process.send({ type: 'done', ok: bad === -1 })
  })
  req.on('aborted', () => process.send({ type: 'aborted', checked: got, ok: bad === -1 }))
}).listen(8080)
