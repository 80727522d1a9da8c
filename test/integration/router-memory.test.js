'use strict'

// A client that pipelines requests and never reads must not make the hub hold every
// response it asked for: the hub keeps a per-connection budget of response bytes it
// holds (client-connection.js) and stops reading that connection's requests past it,
// so the worker's response window does the waiting. The hub runs in a process of its
// own so that its resident memory is measured alone; the app is a real node process
// with the preload, streaming 10 MB per request with backpressure. On the native router
// (router/, issue 25: the JS hub's budget, in router/internal/conn, heldBudget; src/hub
// ran it too until it was removed), its resident set read from /proc.
// The same for upgraded connections one side of which never reads (a response window
// or a body window each).

const fs = require('node:fs')
const path = require('node:path')
const net = require('node:net')
const { spawn } = require('node:child_process')
const { socketPath, request, until } = require('../helpers/hub-harness')
const { startNativeRouter } = require('../helpers/native-router')
const { ROUTERS } = require('../helpers/routers')

const APP = path.join(__dirname, '..', 'helpers', 'hub-memory-app.js')
const REGISTER = path.join(__dirname, '..', '..', 'src', 'register.js')

const CLIENTS = 40
const PIPELINED = 32
const MB = 1024 * 1024

jest.setTimeout(90000)

// The router in a process of its own, its resident set measured, and the queue 'big'
// on a free port.
const MEASURED = [
  ['the native router', async () => {
    const r = await startNativeRouter()
    const { ports: [port] } = await r.createQueue('big', { urls: ['http://+:0/'] })
    const pid = r.proc.child.pid
    return {
      socketPath: r.socketPath,
      port,
      async stats () {
        const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
        const q = await r.queueStats('big')
        return { rss: Number(m[1]) * 1024, inFlight: q.inFlight, waiting: q.waiting }
      },
      close: () => r.close()
    }
  }]
]

// (the native router's resident set is read from /proc)
const onLinux = process.platform === 'linux' ? describe : describe.skip

onLinux.each(MEASURED)('%s: memory under clients that never read', (name, startMeasured) => {
  let hub
  let app
  let port
  const sockets = []

  beforeAll(async () => {
    const sock = socketPath()
    hub = await startMeasured(sock)
    port = hub.port
    app = spawn(process.execPath, ['--require', REGISTER, APP], {
      env: { ...process.env, HTTPSYS_HUB: hub.socketPath, HTTPSYS_QUEUE: 'big', HTTPSYS_BACKEND: 'hub' },
      stdio: ['ignore', 'inherit', 'inherit']
    })
    // the request waits in the queue until the app has attached
    const pong = await request(port, { path: '/ping' })
    expect(pong.status).toBe(200)
  })

  afterAll(async () => {
    for (const s of sockets) s.destroy()
    if (app) app.kill('SIGKILL')
    if (hub) await hub.close()
  })

  test(`${CLIENTS} clients x ${PIPELINED} pipelined 10 MB GETs that never read grow the router by less than 100 MB`, async () => {
    // warm up: the pools and buffers a normal download uses are in the baseline
    for (let i = 0; i < 3; i++) {
      const res = await request(port, { path: '/warm' })
      expect(res.body.length).toBe(10 * MB)
    }
    const before = (await hub.stats()).rss
    for (let i = 0; i < CLIENTS; i++) {
      const s = net.connect(port, '127.0.0.1')
      s.on('error', () => {})
      s.pause()
      s.write('GET /big HTTP/1.1\r\nHost: a\r\n\r\n'.repeat(PIPELINED))
      sockets.push(s)
    }
    // until the router stops growing: 2 s without 2 MB more
    let peak = before
    let stats = null
    let stableSince = Date.now()
    const deadline = Date.now() + 40000
    while (Date.now() < deadline && Date.now() - stableSince < 2000) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      stats = await hub.stats()
      if (stats.rss > peak + 2 * MB) stableSince = Date.now()
      if (stats.rss > peak) peak = stats.rss
    }
    const grown = (peak - before) / MB
    console.log(`${name}: rss before ${(before / MB).toFixed(1)} MB, peak ${(peak / MB).toFixed(1)} MB, grown ${grown.toFixed(1)} MB; in flight ${stats.inFlight}, waiting ${stats.waiting}`)
    expect(grown).toBeLessThan(100)
    // the router still serves everyone else
    for (const s of sockets) s.destroy()
    const pong = await request(port, { path: '/ping' })
    expect(pong.status).toBe(200)
  })
})

// Upgraded connections (ported from hub-upgrade.test.js, which read the hub's socket
// buffers): a tunnel one side of which does not read makes the router hold about a
// response window (the client does not read: the app's writes wait for the window) or a
// body window (the app does not read: the router stops reading the client), seen here
// as the router's resident set under TUNNELS such tunnels, each side wanting to send
// 32 MB (test/helpers/upgrade-memory-app.js).
onLinux.each(MEASURED)('%s: memory under upgraded connections one side of which never reads', (name, startMeasured) => {
  const { RESPONSE_WINDOW, INITIAL_BODY_WINDOW } = require('../../src/wire/protocol')
  const UPGRADE_APP = path.join(__dirname, '..', 'helpers', 'upgrade-memory-app.js')
  const TUNNELS = 16
  const SIZE = 32 * MB // what each side wants to send
  let hub
  let app
  let port
  const sockets = []

  beforeAll(async () => {
    hub = await startMeasured(socketPath())
    port = hub.port
    app = spawn(process.execPath, ['--require', REGISTER, UPGRADE_APP], {
      env: { ...process.env, HTTPSYS_HUB: hub.socketPath, HTTPSYS_QUEUE: 'big', HTTPSYS_BACKEND: 'hub' },
      stdio: ['ignore', 'inherit', 'inherit']
    })
    const pong = await request(port, { path: '/ping' })
    expect(pong.status).toBe(200)
  })

  afterAll(async () => {
    for (const s of sockets) s.destroy()
    if (app) app.kill('SIGKILL')
    if (hub) await hub.close()
  })

  /** An upgraded connection to path: the socket, and what came after the 101 (once it read). */
  function tunnel (p, { read = true } = {}) {
    const t = { socket: net.connect(port, '127.0.0.1'), head: '', received: 0 }
    sockets.push(t.socket)
    t.socket.on('error', () => {})
    if (!read) t.socket.pause()
    t.socket.on('data', (d) => {
      if (!t.head.includes('\r\n\r\n')) {
        t.head += d.toString('latin1')
        const end = t.head.indexOf('\r\n\r\n')
        if (end >= 0) t.received += Buffer.byteLength(t.head, 'latin1') - end - 4
      } else {
        t.received += d.length
      }
    })
    t.socket.write(`GET ${p} HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`)
    return t
  }

  /** The router's resident set once it stopped growing (2 s without 2 MB more), in MB above before. */
  async function grownFrom (before) {
    let peak = before
    let stableSince = Date.now()
    const deadline = Date.now() + 40000
    while (Date.now() < deadline && Date.now() - stableSince < 2000) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      const { rss } = await hub.stats()
      if (rss > peak + 2 * MB) stableSince = Date.now()
      if (rss > peak) peak = rss
    }
    return (peak - before) / MB
  }

  test(`${TUNNELS} clients that never read their tunnel hold their apps back: the router grows by about a response window each, not by what the apps want to send`, async () => {
    // warm up: the buffers a tunnel that flows uses are in the baseline
    for (let i = 0; i < 2; i++) {
      const t = tunnel('/push')
      await until(() => t.received >= SIZE, 20000, 'a whole tunnel')
      t.socket.destroy()
    }
    const before = (await hub.stats()).rss
    for (let i = 0; i < TUNNELS; i++) tunnel('/push', { read: false })
    const grown = await grownFrom(before)
    // (the hub held at most 2 response windows a tunnel in node's socket buffer)
    const held = (TUNNELS * 2 * RESPONSE_WINDOW) / MB
    console.log(`${name}: ${TUNNELS} tunnels whose clients never read: grown ${grown.toFixed(1)} MB (${held} MB in 2 response windows each; ${TUNNELS * SIZE / MB} MB wanted)`)
    expect(grown).toBeLessThan(held + 40)
    for (const s of sockets.splice(0)) s.destroy()
    expect((await request(port, { path: '/ping' })).status).toBe(200)
  })

  test(`${TUNNELS} apps that never read their tunnel hold their clients back: the router grows by about a body window each, not by what the clients send`, async () => {
    const before = (await hub.stats()).rss
    const payload = Buffer.alloc(SIZE, 7)
    const flushed = []
    for (let i = 0; i < TUNNELS; i++) {
      const t = tunnel('/hold')
      await until(() => t.head.includes('\r\n\r\n'), 5000, '101')
      flushed.push(0)
      for (let o = 0; o < SIZE; o += 64 * 1024) t.socket.write(payload.subarray(o, o + 64 * 1024), () => { flushed[i] += 64 * 1024 })
    }
    const grown = await grownFrom(before)
    // (the hub stopped reading the client with at most a body window and a read, BODY_HOLD + 256 KB, held)
    const held = (TUNNELS * (INITIAL_BODY_WINDOW + 256 * 1024)) / MB
    const sent = flushed.reduce((a, b) => a + b, 0) / MB
    console.log(`${name}: ${TUNNELS} tunnels whose apps never read: grown ${grown.toFixed(1)} MB (${held} MB in a body window and a read each); the clients' kernels took ${sent.toFixed(1)} MB of ${TUNNELS * SIZE / MB}`)
    expect(sent).toBeLessThan(TUNNELS * SIZE / MB / 2)
    expect(grown).toBeLessThan(held + 40)
    for (const s of sockets.splice(0)) s.destroy()
    expect((await request(port, { path: '/ping' })).status).toBe(200)
  })
})

describe.each(ROUTERS)('%s: the held-response budget, step by step', (name, start) => {
  const { startWorker } = require('../helpers/hub-harness')
  const { parseResponses } = require('../helpers/raw-http')
  const { RESPONSE_WINDOW } = require('../../src/wire/protocol')
  // the routers' budget: src/hub/client-connection.js HELD_BUDGET, router/internal/conn heldBudget
  const HELD_BUDGET = 4 * RESPONSE_WINDOW
  const { RESPONSE_MORE } = require('../../src/wire/contract')
  const SIZE = 4 * RESPONSE_WINDOW // each response outgrows the window several times

  test('a pipelining client that does not read has no more requests unfinished at its worker than the budget holds; once it reads, every response arrives whole and in order', async () => {
    const hub = await start()
    const p = (await hub.createQueue('stream', { urls: ['http://+:0/'] })).ports[0]
    let refused = 0
    const sent = new Map()
    // a worker that streams each response with backpressure, as src/http does
    const pump = (w, id) => {
      const req = w.byId.get(id)
      const fill = Number(req.url.slice(1))
      for (;;) {
        const at = sent.get(id)
        if (at >= SIZE) return
        const n = Math.min(64 * 1024, SIZE - at)
        sent.set(id, at + n)
        const ok = w.att.sendBody(id, Buffer.alloc(n, fill), at + n < SIZE ? RESPONSE_MORE : 0)
        if (!ok) {
          refused++
          return
        }
      }
    }
    const w = await startWorker(hub, {
      queue: 'stream',
      onRequest (req, x) {
        sent.set(req.id, 0)
        x.att.respond(req.id, 200, 'OK', ['Content-Length', String(SIZE)], null, RESPONSE_MORE)
        pump(x, req.id)
      },
      onDrain: (id, x) => pump(x, id)
    })
    const socket = require('node:net').connect(p, '127.0.0.1')
    try {
      socket.pause()
      await new Promise((resolve) => socket.once('connect', resolve))
      let text = ''
      for (let i = 0; i < 32; i++) text += `GET /${i} HTTP/1.1\r\nHost: a\r\n\r\n`
      socket.write(text)
      // The first request in line writes to the socket (the kernel's buffers take a few
      // whole responses first); each one behind it is charged a window: past the budget
      // no further request is read, so at most `most` are unfinished at the worker
      // (fewer while what node's socket buffers for the first counts too).
      const most = 1 + HELD_BUDGET / RESPONSE_WINDOW
      const settled = async () => {
        let last = -1
        while (w.requests.length !== last) {
          last = w.requests.length
          await new Promise((resolve) => setTimeout(resolve, 300))
        }
      }
      await until(() => w.requests.length >= most, 5000, `${most} requests at the worker`)
      await settled()
      const unfinished = (await hub.queueStats('stream')).inFlight
      expect(unfinished).toBeGreaterThan(0)
      expect(unfinished).toBeLessThanOrEqual(most)
      expect(w.requests.length).toBeLessThan(32)
      expect(refused).toBeGreaterThanOrEqual(unfinished) // each one waits in its window
      // now the client reads: everything arrives
      const chunks = []
      socket.on('data', (c) => chunks.push(c))
      socket.resume()
      const total = () => chunks.reduce((n, c) => n + c.length, 0)
      await until(() => total() >= 32 * SIZE, 20000, 'every response')
      await new Promise((resolve) => setTimeout(resolve, 50))
      const res = parseResponses(Buffer.concat(chunks).toString('latin1'))
      expect(res).toHaveLength(32)
      for (let i = 0; i < 32; i++) {
        expect(res[i].status).toBe(200)
        expect(res[i].body.length).toBe(SIZE)
        expect(res[i].body === String.fromCharCode(i).repeat(SIZE)).toBe(true)
      }
      expect(w.requests).toHaveLength(32)
    } finally {
      socket.destroy()
      w.att.close()
      await hub.close()
    }
  })
})
