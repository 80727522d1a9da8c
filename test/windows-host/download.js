'use strict'

// A graceful stop does not cut a download (test/windows/README.md, manual check 26): a 200 MB
// response is streaming to a client reading at about 40 MB/s when `httpsys stop all`
// runs; the worker's close() waits for the sends already in the kernel (up to just
// before the kill_timeout), so the client gets every byte and the supervisor exits 0.

const assert = require('node:assert/strict')
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

module.exports = {
  group: 'download',
  checks: [
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
