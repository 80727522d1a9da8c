'use strict'

// HTTP/2 on HTTP.SYS (native/src/queue.cc CloseFlag): a request the worker refuses
// (here a method node does not know: 400 and a close) ends an h2 connection with a
// GOAWAY, not a reset; a response the app destroys is cancelled (HttpCancelHttpRequest),
// which is a RST_STREAM of that stream only: the connection serves on.

const assert = require('node:assert/strict')
const http2 = require('node:http2')
const path = require('node:path')
const { need } = require('./lib/host')
const { binding } = require('./lib/binding')

const HTTPS = 'Wine\'s HTTP.SYS has no HTTPS, so no HTTP/2 (docs/wine.md 2.9)'

function connect (port, certs) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: certs.rootPem, servername: 'localhost' })
    session.once('connect', () => resolve(session))
    session.once('error', reject)
  })
}

/** One stream: resolves with { status, body, rstCode, aborted } once it has closed. */
function exchange (session, headers) {
  return new Promise((resolve) => {
    const stream = session.request(headers, { endStream: true })
    let status = 0
    const chunks = []
    let aborted = false
    stream.on('response', (h) => { status = h[':status'] })
    stream.on('data', (c) => chunks.push(c))
    stream.on('aborted', () => { aborted = true })
    stream.on('error', () => {})
    stream.on('close', () => resolve({ status, body: Buffer.concat(chunks).toString(), rstCode: stream.rstCode, aborted }))
  })
}

module.exports = {
  group: 'h2',
  checks: [
    {
      name: 'a request the worker refuses (an unknown method: 400) ends the h2 connection with GOAWAY',
      wine: HTTPS,
      async run (t) {
        const h = t.host
        const { port, certs } = await binding(t)
        const config = h.writeConfig('h2', {
          backend: 'httpsys',
          apps: [{ name: 'h2', script: path.join(h.APPS, 'host-app.js'), urls: [`https://+:${port}/`], env: { HOST_APP: 'h2', HOST_APP_HTTPS: '1' }, kill_timeout: '5s' }]
        })
        const sup = h.startSupervisor(t, 'h2', ['-c', config], { cwd: path.dirname(config), forGroup: true })
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        Object.assign(t.shared, { port, certs, sup })
        const session = await connect(port, certs)
        try {
          assert.equal(session.alpnProtocol, 'h2')
          const goaway = new Promise((resolve) => session.once('goaway', (code) => resolve(code)))
          const res = await exchange(session, { ':method': 'BREW', ':path': '/pot' })
          assert.equal(res.status, 400)
          const code = await Promise.race([goaway, h.sleep(5000).then(() => 'none')])
          assert.notEqual(code, 'none', 'no GOAWAY within 5 s of the refused request')
          t.note(`GOAWAY with error code ${code}`)
        } finally {
          session.destroy()
        }
      }
    },
    {
      name: 'a response the app destroys is reset with RST_STREAM; the connection serves the next request',
      wine: HTTPS,
      async run (t) {
        const { port, certs } = need(t.shared.sup && t.shared, 'the app of the first h2 check')
        const session = await connect(port, certs)
        try {
          const cancelled = await exchange(session, { ':method': 'GET', ':path': '/cancel' })
          assert.equal(cancelled.status, 200)
          assert.ok(cancelled.rstCode > 0 || cancelled.aborted, `the stream ended normally (rstCode ${cancelled.rstCode}) after ${cancelled.body.length} bytes`)
          assert.ok(!session.destroyed && !session.closed, 'the cancel ended the whole connection')
          const next = await exchange(session, { ':method': 'GET', ':path': '/after' })
          assert.equal(next.status, 200, 'the connection did not serve the next request')
          t.note(`RST_STREAM code ${cancelled.rstCode}`)
        } finally {
          session.destroy()
        }
        await t.shared.sup.stop()
      }
    }
  ]
}
