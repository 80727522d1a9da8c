'use strict'

// A slowloris against limits.header_timeout on HTTP.SYS (issue 24, defect 6): a client
// that sends a request head one byte a second. The config's header_timeout becomes the
// URL group's HeaderWait timer, which HTTP.SYS applies once a connection's first request
// has reached the queue; a new connection is governed by the machine-wide HeaderWait
// (`netsh http show timeout`, 120 s by default). Both drips run at once: one after a
// first request on a kept-alive connection, one on a new connection.

const assert = require('node:assert/strict')
const net = require('node:net')
const path = require('node:path')
const { need } = require('./lib/host')

const HEADER_TIMEOUT_S = 5
const SLACK_S = 4
const WINE = 'Wine\'s HTTP.SYS has no timers (docs/wine.md 2.10): a slow client is never cut off there'

/**
 * Connects, optionally sends one whole request first (and reads its answer), then sends
 * a request head one byte a second. Resolves with the seconds from the first slow byte
 * to the server's close.
 */
function drip (port, { first }) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const head = `GET /slow HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: ${'x'.repeat(400)}`
    let started = 0
    let timer = null
    let got = ''
    const begin = () => {
      started = Date.now()
      let i = 0
      timer = setInterval(() => {
        if (i < head.length && !socket.destroyed) socket.write(head[i++])
      }, 1000)
    }
    socket.on('connect', () => {
      if (!first) return begin()
      socket.write(`GET /first HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)
    })
    socket.on('data', (d) => {
      got += d.toString('latin1')
      const m = /\r\ncontent-length: *(\d+)/i.exec(got)
      const end = got.indexOf('\r\n\r\n')
      if (first && started === 0 && m && end !== -1 && got.length >= end + 4 + Number(m[1])) begin()
    })
    const done = () => {
      clearInterval(timer)
      if (started === 0) return reject(new Error(`the connection closed before the slow head began (got ${JSON.stringify(got.slice(0, 200))})`))
      resolve((Date.now() - started) / 1000)
    }
    socket.on('close', done)
    socket.on('error', () => {})
  })
}

/** The machine-wide HeaderWait in seconds (netsh http show timeout), 120 when unset. */
async function machineHeaderWait (h) {
  const r = await h.run('netsh', ['http', 'show', 'timeout'])
  const m = /HeaderWaitTimeout\s*:\s*(\d+)/i.exec(r.output)
  return m ? Number(m[1]) : 120
}

module.exports = {
  group: 'slowloris',
  checks: [
    {
      name: `a slow request head after a first request is cut off at header_timeout (${HEADER_TIMEOUT_S} s)`,
      wine: WINE,
      async run (t) {
        const h = t.host
        const port = await h.freePort()
        const config = h.writeConfig('slowloris', {
          backend: 'httpsys',
          limits: { header_timeout: `${HEADER_TIMEOUT_S}s` },
          apps: [{ name: 'slow', script: path.join(h.APPS, 'host-app.js'), urls: [`http://+:${port}/`], kill_timeout: '5s' }]
        })
        const sup = h.startSupervisor(t, 'slowloris', ['-c', config], { cwd: path.dirname(config), forGroup: true })
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        const wait = await machineHeaderWait(h)
        // the new connection's drip runs meanwhile; the next check waits for it
        const fresh = drip(port, { first: false }).then((s) => s, (err) => err)
        Object.assign(t.shared, { sup, fresh, wait })
        const s = await drip(port, { first: true })
        assert.ok(s <= HEADER_TIMEOUT_S + SLACK_S, `closed after ${s.toFixed(1)} s`)
        t.note(`closed after ${s.toFixed(1)} s`)
      }
    },
    {
      name: 'a slow request head on a new connection is cut off within the machine-wide HeaderWait',
      wine: WINE,
      timeout: 300000,
      async run (t) {
        const fresh = need(t.shared.fresh, 'the drip the first slowloris check started')
        const { wait, sup } = t.shared
        const s = await fresh
        if (s instanceof Error) throw s
        assert.ok(s <= Math.max(wait, HEADER_TIMEOUT_S) + SLACK_S, `closed after ${s.toFixed(1)} s (machine-wide HeaderWait ${wait} s)`)
        t.note(`closed after ${s.toFixed(1)} s; header_timeout is ${HEADER_TIMEOUT_S} s, the machine-wide HeaderWait ${wait} s`)
        await sup.stop()
      }
    }
  ]
}
