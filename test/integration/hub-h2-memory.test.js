'use strict'

// An h2 client that opens many streams and never reads must not make the hub hold a
// response window per stream (100 x 256 KiB = 25 MB a connection): the hub grants each
// h2 stream's response window itself, within a per-connection budget (h2-request.js,
// the HTTP/1.1 budget's 1 MiB), so the apps wait in their window instead (issue 23).
// A zero-window client: SETTINGS_INITIAL_WINDOW_SIZE 0 lets the hub send no DATA until
// the client raises it (RFC 9113 6.9.2).

const path = require('node:path')
const http2 = require('node:http2')
const { spawn, fork } = require('node:child_process')
const { startHub, startWorker, socketPath, until } = require('../helpers/hub-harness')
const { makeCerts } = require('../helpers/tls-certs')
const { h2connect, h2, closeSession } = require('../helpers/tls-clients')
const { freePort } = require('../helpers/httpsys-process')
const { HELD_BUDGET } = require('../../src/hub/client-connection')
const { RESPONSE_WINDOW, GRANTED_WINDOW_START } = require('../../src/wire/protocol')
const { RESPONSE_MORE } = require('../../src/wire/contract')

const MB = 1024 * 1024
const STREAMS = 100 // the hub's SETTINGS_MAX_CONCURRENT_STREAMS

jest.setTimeout(90000)

let certs
beforeAll(() => { certs = makeCerts() })
afterAll(() => certs.cleanup())

/** An h2 session whose streams start with a zero window: nothing is sent to it until it raises the window. */
function stalledSession (port) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, settings: { initialWindowSize: 0 } })
    session.once('connect', () => {
      session.removeListener('error', reject)
      session.on('error', () => {})
      resolve(session)
    })
    session.once('error', reject)
  })
}

/** A stream's body and status, once it closes. */
function fetchStream (session, p) {
  return new Promise((resolve) => {
    const r = session.request({ ':path': p })
    const chunks = []
    let status = 0
    r.on('response', (h) => { status = h[':status'] })
    r.on('data', (c) => chunks.push(c))
    r.on('error', () => {})
    r.on('close', () => resolve({ status, body: Buffer.concat(chunks), stream: r }))
  })
}

/** Resolves once fn() has returned the same value for `quiet` ms. */
async function settled (fn, quiet = 400) {
  let last = fn()
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, quiet))
    const now = fn()
    if (now === last) return now
    last = now
  }
}

describe('the h2 held-bytes budget, step by step', () => {
  const SIZE = 2 * RESPONSE_WINDOW // each response outgrows the window
  const WHOLE = {
    '/whole/buffer': Buffer.alloc(200 * 1024, 5),
    '/whole/big': Buffer.alloc(3 * MB, 6), // larger than a RES_BODY piece (1 MiB)
    '/whole/string': '\u00e9'.repeat(40 * 1024) // 80 KB of utf8 in fewer characters
  }
  let hub
  let port
  let w
  let refused
  const sent = new Map()

  beforeAll(async () => {
    port = await freePort()
    hub = await startHub({ tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key }] })
    await hub.createQueue('stream', { urls: [`https://+:${port}/`] })
    refused = new Set()
    // a worker that streams each response with backpressure, as src/http does; the body
    // of /<n> is the byte n % 256, so a byte from another stream would show
    const pump = (x, id) => {
      const fill = Number(x.byId.get(id).url.slice(1)) & 255
      for (;;) {
        const at = sent.get(id)
        if (at >= SIZE) return
        const n = Math.min(64 * 1024, SIZE - at)
        sent.set(id, at + n)
        if (!x.att.sendBody(id, Buffer.alloc(n, fill), at + n < SIZE ? RESPONSE_MORE : 0)) {
          refused.add(id)
          return
        }
      }
    }
    w = await startWorker(hub, {
      queue: 'stream',
      onRequest (req, x) {
        const whole = WHOLE[req.url]
        if (whole !== undefined) {
          // one respond() with the whole body: the worker sends it as it is granted
          x.att.respond(req.id, 200, 'OK', ['Content-Length', String(Buffer.byteLength(whole))], whole, 0)
          return
        }
        sent.set(req.id, 0)
        x.att.respond(req.id, 200, 'OK', ['Content-Length', String(SIZE)], null, RESPONSE_MORE)
        pump(x, req.id)
      },
      onDrain: (id, x) => pump(x, id)
    })
  })

  afterAll(async () => {
    w.att.close()
    await hub.close()
  })

  /** What node's http2 streams of the hub buffer: response bytes the hub holds. */
  function buffered () {
    let n = 0
    for (const c of hub.conns) if (c.open instanceof Set) for (const sc of c.open) n += sc.stream.writableLength
    return n
  }

  test(`a client that opens ${STREAMS} streams and does not read makes the hub hold about the budget, not a window per stream; once it reads, every stream arrives whole`, async () => {
    const before = w.att.socket.bytesWritten
    const session = await stalledSession(port)
    try {
      const streams = []
      for (let i = 0; i < STREAMS; i++) streams.push(fetchStream(session, `/${i}`))
      await until(() => w.requests.length === STREAMS, 10000, `${STREAMS} requests at the worker`)
      // what the worker pushed into the hub (the client took nothing: the hub holds it)
      const pushed = await settled(() => w.att.socket.bytesWritten) - before
      console.log(`h2, ${STREAMS} streams, zero window: the worker sent the hub ${(pushed / MB).toFixed(2)} MB (budget ${HELD_BUDGET / MB} MiB)`)
      expect(pushed).toBeLessThan(HELD_BUDGET + STREAMS * (GRANTED_WINDOW_START + 1024))
      expect(pushed).toBeLessThan(2 * MB) // (a window per stream: 25 MB)
      expect(refused.size).toBe(STREAMS) // every app waits in its window (res.write() false)
      // the client reads now: every stream gets every byte
      session.settings({ initialWindowSize: 65535 })
      session.setLocalWindowSize(8 * MB)
      const res = await Promise.all(streams)
      for (let i = 0; i < STREAMS; i++) {
        expect(res[i].status).toBe(200)
        expect(res[i].body.length).toBe(SIZE)
        expect(res[i].body.every((b) => b === (i & 255))).toBe(true)
      }
      // and the budget is whole again for the connection's next streams
      await until(() => [...hub.conns].every((c) => !(c.charged > 0)), 2000, 'the budget back to 0')
    } finally {
      session.destroy()
    }
  })

  test('a response larger than a stream\'s first window, given to respond() whole, arrives whole', async () => {
    const session = await h2connect(port)
    try {
      const res = await Promise.all(Object.keys(WHOLE).map((p) => h2(session, { ':path': p })))
      Object.values(WHOLE).forEach((body, i) => {
        expect(res[i].status).toBe(200)
        expect(res[i].body.equals(Buffer.from(body))).toBe(true)
      })
    } finally {
      await closeSession(session)
    }
  })

  test('a stream still gets its response while the other streams of its connection hold the budget', async () => {
    // node's client stops granting a paused stream window once it holds 64 KiB
    // (RFC 9113 6.9): the hub holds the rest of each of these responses. (Their bytes
    // count against the connection's window too: a large one leaves room for the last.)
    const session = await h2connect(port)
    session.setLocalWindowSize(16 * MB)
    const paused = []
    try {
      const start = w.requests.length
      for (let i = 0; i < STREAMS - 1; i++) {
        const r = session.request({ ':path': `/${i}` })
        r.on('error', () => {})
        r.pause()
        paused.push(r)
      }
      await until(() => w.requests.length === start + STREAMS - 1, 10000, 'the paused streams at the worker')
      await settled(() => w.att.socket.bytesWritten)
      expect(buffered()).toBeGreaterThan(HELD_BUDGET / 2) // the hub holds (most of) its budget for them
      const res = await h2(session, { ':path': '/77' })
      expect(res.status).toBe(200)
      expect(res.body.length).toBe(SIZE)
      expect(res.body.every((b) => b === 77)).toBe(true)
    } finally {
      session.destroy() // (a graceful close would wait for the paused streams)
    }
  }, 30000)
})

describe('hub memory under h2 clients that never read', () => {
  const HUB = path.join(__dirname, '..', 'helpers', 'hub-memory-hub.js')
  const APP = path.join(__dirname, '..', 'helpers', 'hub-memory-app.js')
  const REGISTER = path.join(__dirname, '..', '..', 'src', 'register.js')
  const CLIENTS = 4
  let hub
  let app
  let port
  const sessions = []

  function ask () {
    return new Promise((resolve) => {
      hub.once('message', resolve)
      hub.send({ type: 'rss' })
    })
  }

  beforeAll(async () => {
    const sock = socketPath()
    port = await freePort()
    hub = fork(HUB, [sock, certs.localhost.cert, certs.localhost.key, String(port)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    const ready = await new Promise((resolve, reject) => {
      hub.once('message', resolve)
      hub.once('exit', (code) => reject(new Error(`hub exited with ${code}`)))
    })
    if (ready.type !== 'ready') throw new Error(ready.message)
    app = spawn(process.execPath, ['--require', REGISTER, APP], {
      env: { ...process.env, HTTPSYS_HUB: sock, HTTPSYS_QUEUE: 'big', HTTPSYS_BACKEND: 'hub' },
      stdio: ['ignore', 'inherit', 'inherit']
    })
    // the request waits in the queue until the app has attached
    const session = await h2connect(port)
    try {
      const pong = await h2(session, { ':path': '/ping' })
      expect(pong.status).toBe(200)
    } finally {
      await closeSession(session)
    }
  })

  afterAll(async () => {
    for (const s of sessions) s.destroy()
    if (app) app.kill('SIGKILL')
    if (hub) {
      hub.send({ type: 'close' })
      await new Promise((resolve) => {
        const t = setTimeout(() => { hub.kill('SIGKILL'); resolve() }, 5000)
        hub.once('exit', () => { clearTimeout(t); resolve() })
      })
    }
  })

  test(`${CLIENTS} h2 clients x ${STREAMS} streams of 10 MB that never read grow the hub by the budget, not by 25 MB each`, async () => {
    // warm up: the pools and buffers an h2 download uses are in the baseline
    const warm = await h2connect(port)
    try {
      const res = await h2(warm, { ':path': '/warm' })
      expect(res.body.length).toBe(10 * MB)
    } finally {
      await closeSession(warm)
    }
    const before = (await ask()).rss
    for (let i = 0; i < CLIENTS; i++) {
      const s = await stalledSession(port)
      sessions.push(s)
      for (let j = 0; j < STREAMS; j++) s.request({ ':path': '/big' }).on('error', () => {})
    }
    const by = Date.now() + 20000
    while ((await ask()).inFlight < CLIENTS * STREAMS) {
      if (Date.now() > by) throw new Error('timed out waiting for every stream at the app')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    // until the hub stops growing: 2 s without 1 MB more
    let peak = before
    let stats = null
    let stableSince = Date.now()
    const deadline = Date.now() + 30000
    while (Date.now() < deadline && Date.now() - stableSince < 2000) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      stats = await ask()
      if (stats.rss > peak + MB) stableSince = Date.now()
      if (stats.rss > peak) peak = stats.rss
    }
    const grown = (peak - before) / MB
    console.log(`h2 hub rss: before ${(before / MB).toFixed(1)} MB, peak ${(peak / MB).toFixed(1)} MB, grown ${grown.toFixed(1)} MB; streams buffer ${(stats.h2Buffered / MB).toFixed(2)} MB; in flight ${stats.inFlight}`)
    // node's http2 streams hold what the hub holds: the budget per connection
    expect(stats.h2Buffered).toBeLessThan(CLIENTS * 2 * MB)
    expect(grown).toBeLessThan(40) // (a window per stream: over 100 MB)
    // the hub still serves everyone else
    for (const s of sessions) s.destroy()
    const session = await h2connect(port)
    try {
      const pong = await h2(session, { ':path': '/ping' })
      expect(pong.status).toBe(200)
    } finally {
      await closeSession(session)
    }
  })
})
