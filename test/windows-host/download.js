'use strict'

// Uploads written in many pieces arrive whole (Wine cannot show it: docs/wine.md 2.10),
// and a graceful stop does not cut a download (test/windows/README.md, manual check 26):
// a 200 MB response is streaming to a client reading at about 40 MB/s when `httpsys stop
// all` runs; the worker's close() waits for the sends already in the kernel (up to just
// before the kill_timeout), so the client gets every byte and the supervisor exits 0.

const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const http = require('node:http')
const path = require('node:path')

const SIZE = 200 * 1024 * 1024
const RATE = 40 * 1024 * 1024 // bytes per second the client reads

/**
 * Downloads url at about RATE, checking every byte (k % 251, apps/host-app.js);
 * calls onProgress(bytes) as it goes. Resolves with { bytes, complete, bad }.
 */
function download (url, onProgress) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    http.get(url, { agent: false }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`))
      let bytes = 0
      let bad = -1
      res.on('data', (chunk) => {
        if (bad === -1) {
          for (let i = 0; i < chunk.length; i++) {
            if (chunk[i] !== (bytes + i) % 251) { bad = bytes + i; break }
          }
        }
        bytes += chunk.length
        onProgress(bytes)
        const ahead = bytes / RATE * 1000 - (Date.now() - started)
        if (ahead > 20) {
          res.pause()
          setTimeout(() => res.resume(), ahead)
        }
      })
      res.on('end', () => resolve({ bytes, complete: res.complete, bad }))
      res.on('aborted', () => resolve({ bytes, complete: false, bad }))
      res.on('error', () => resolve({ bytes, complete: false, bad }))
    }).on('error', reject)
  })
}

const UPLOADS = [0, 1, 65536, 200 * 1024, 1024 * 1024, 8 * 1024 * 1024]
const UPLOAD_PIECE = 16 * 1024

/**
 * POSTs `body` to url in UPLOAD_PIECE writes with a pause every 64 pieces, so it reaches
 * the server in many bursts. Resolves with { status, body }.
 */
function upload (url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: false, headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length } }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }))
      res.on('error', reject)
    })
    req.setTimeout(30000, () => req.destroy(new Error(`POST ${url} of ${body.length} bytes: no answer within 30 s`)))
    req.on('error', reject)
    let at = 0
    let n = 0
    const more = () => {
      while (at < body.length) {
        const ok = req.write(body.subarray(at, at + UPLOAD_PIECE))
        at += UPLOAD_PIECE
        if (!ok) return req.once('drain', more)
        if (++n % 64 === 0) return setTimeout(more, 5)
      }
      req.end()
    }
    more()
  })
}

module.exports = {
  group: 'download',
  checks: [
    {
      name: 'uploads of 0 B to 8 MiB, written in 16 KiB pieces, reach the app intact (HttpReceiveRequestEntityBody)',
      wine: 'Wine\'s http.sys drops a request whose bytes arrive in several bursts once its buffer is full (docs/wine.md 2.10)',
      timeout: 120000,
      async run (t) {
        const h = t.host
        const port = await h.freePort()
        const config = h.writeConfig('upload', {
          backend: 'httpsys',
          apps: [{ name: 'uploads', script: path.join(h.APPS, 'host-app.js'), urls: [`http://+:${port}/`], kill_timeout: '5s' }]
        })
        const sup = h.startSupervisor(t, 'upload', ['-c', config], { cwd: path.dirname(config) })
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        for (const size of UPLOADS) {
          const body = crypto.randomBytes(size)
          const res = await upload(`http://127.0.0.1:${port}/upload`, body)
          assert.equal(res.status, 200, `an upload of ${size} bytes answered ${res.status} ${res.body.slice(0, 300)}`)
          const got = JSON.parse(res.body)
          assert.equal(got.length, size, `an upload of ${size} bytes arrived as ${got.length}`)
          assert.equal(got.sha256, crypto.createHash('sha256').update(body).digest('hex'), `an upload of ${size} bytes arrived altered`)
        }
        assert.equal(await sup.stop(), 0, 'the supervisor did not exit 0')
      }
    },
    {
      name: 'a 200 MB download in progress when httpsys stop all runs arrives whole; the supervisor exits 0',
      wine: 'Wine has no HttpSendResponseEntityBody: a streamed response is held and sent in one piece there (docs/wine.md 2.3)',
      timeout: 180000,
      async run (t) {
        const h = t.host
        const port = await h.freePort()
        const config = h.writeConfig('download', {
          backend: 'httpsys',
          apps: [{ name: 'files', script: path.join(h.APPS, 'host-app.js'), urls: [`http://+:${port}/`], kill_timeout: '60s' }]
        })
        const sup = h.startSupervisor(t, 'download', ['-c', config], { cwd: path.dirname(config) })
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        let stopping = null
        const result = await download(`http://127.0.0.1:${port}/big`, (bytes) => {
          // settled at once: awaited only once the download has ended
          if (stopping === null && bytes >= 16 * 1024 * 1024) stopping = sup.stop().then((code) => code, (err) => err)
        })
        assert.ok(stopping !== null, 'the stop was never asked for')
        assert.equal(result.bad, -1, `byte ${result.bad} is wrong`)
        assert.equal(result.bytes, SIZE, `the client got ${result.bytes} of ${SIZE} bytes`)
        assert.equal(result.complete, true, 'the response did not end normally')
        const code = await stopping
        if (code instanceof Error) throw code
        assert.equal(code, 0, 'the supervisor did not exit 0')
        const drained = sup.records().find((r) => r.event === 'stop:drained')
        if (drained) t.note(`stop:drained ${JSON.stringify({ how: drained.how, ms: drained.ms })}`)
      }
    }
  ]
}
