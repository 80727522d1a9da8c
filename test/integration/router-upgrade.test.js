'use strict'

// Upgrades (101 Switching Protocols) through the native router (router/, issue 25; the
// JS hub, src/hub, ran them too until it was removed): an unmodified http.Server of src/http attached to a
// router queue, its 'upgrade' listener, and clients on real sockets. Ported from
// hub-upgrade.test.js (and the upgrade part of hub-cache-upgrade.test.js) without the
// hub's internals: what a user of ws or socket.io would notice. The bytes go both ways
// intact, the bytes sent after the upgrade's head are the app's `head` once, each
// side's FIN and reset reach the other, neither direction buffers without bound, no
// deadline cuts a silent tunnel, and a connection whose upgrade is refused (or not
// listened for) stays plain HTTP.

const net = require('node:net')
const crypto = require('node:crypto')
const WebSocket = require('ws')
const { Server } = require('../../src/http/server')
const hubClient = require('../../src/queue/hub-client')
const { until } = require('../helpers/hub-harness')
const { startNativeRouter } = require('../helpers/native-router')

jest.setTimeout(60000)

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const sha = (buf) => crypto.createHash('sha256').update(buf).digest('hex')

const UPGRADE = 'GET /chat HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n'
const SWITCH = 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n'

const ROUTERS = [
  ['the native router', startNativeRouter]
]

/** A raw client: sends `first`, collects everything it receives. */
function rawClient (port, first = UPGRADE, allowHalfOpen = false) {
  const c = { socket: net.connect({ port, host: '127.0.0.1', allowHalfOpen }), data: Buffer.alloc(0), ended: false, closed: false, error: null }
  c.socket.on('data', (d) => { c.data = Buffer.concat([c.data, d]) })
  c.socket.on('end', () => { c.ended = true })
  c.socket.on('close', () => { c.closed = true })
  c.socket.on('error', (e) => { c.error = e })
  c.socket.write(first)
  c.text = () => c.data.toString('latin1')
  return c
}

function echoUpgrade (seen) {
  return (req, socket, head) => {
    seen.push({ req, socket, head, events: [] })
    const s = seen[seen.length - 1]
    socket.on('end', () => s.events.push('end'))
    socket.on('close', () => s.events.push('close'))
    socket.on('error', (e) => s.events.push('error:' + e.code))
    socket.write(SWITCH)
    socket.on('data', (d) => socket.write(d))
  }
}

describe.each(ROUTERS)('%s', (name, start) => {
  let router
  let n = 0
  const servers = []
  const clients = []

  // short deadlines, so a test can show that a tunnel that flows or idles is not cut by them
  beforeAll(async () => { router = await start({ keepAliveTimeout: 1000, bodyTimeout: 1000, headersTimeout: 1000 }) })
  afterEach(() => {
    for (const c of clients.splice(0)) c.socket.destroy()
  })
  afterAll(async () => {
    for (const s of servers) {
      // the router's close ends every queue: that is this test's doing, not an app error
      s.on('error', () => {})
      s.close()
    }
    await router.close()
  })

  /** An http.Server of src/http on its own router queue and port. */
  async function serve (onUpgrade, onRequest = (req, res) => res.end('plain')) {
    const queue = `up${++n}`
    const port = (await router.createQueue(queue, { urls: ['http://+:0/'] })).ports[0]
    const backend = { attach: (o) => hubClient.attach({ ...o, socketPath: router.socketPath, queue }) }
    const server = new Server({ queueBackend: backend }, onRequest)
    if (onUpgrade) server.on('upgrade', onUpgrade)
    await new Promise((resolve) => server.listen(port, resolve))
    servers.push(server)
    return { server, port, queue }
  }

  function client (...args) {
    const c = rawClient(...args)
    clients.push(c)
    return c
  }

  test('ws: text and binary messages echo through the router, and a close reaches the app', async () => {
    const { server, port } = await serve(null)
    const wss = new WebSocket.WebSocketServer({ server })
    const closed = []
    wss.on('connection', (ws, req) => {
      ws.on('message', (m, binary) => ws.send(m, { binary }))
      ws.on('close', (code) => closed.push({ code, url: req.url }))
    })
    const ws = new WebSocket(`ws://127.0.0.1:${port}/live?x=1`)
    const got = []
    ws.on('message', (m, binary) => got.push({ m, binary }))
    await new Promise((resolve, reject) => { ws.on('open', resolve); ws.on('error', reject) })
    const big = crypto.randomBytes(3 * 1024 * 1024)
    ws.send('héllo')
    ws.send(big)
    await until(() => got.length === 2, 10000, 'two echoes')
    expect(got[0]).toEqual({ m: Buffer.from('héllo'), binary: false })
    expect(got[1].binary).toBe(true)
    expect(sha(got[1].m)).toBe(sha(big))
    ws.close(1000, 'bye')
    await until(() => closed.length === 1, 5000, 'the server hears the close')
    expect(closed[0]).toEqual({ code: 1000, url: '/live?x=1' })
    wss.close()
  })

  test('the upgrade event gets the request, a net.Socket with the client address, and an empty head; a silent tunnel has no deadline', async () => {
    const seen = []
    const { port } = await serve(echoUpgrade(seen))
    const c = client(port)
    await until(() => c.text().includes('\r\n\r\n'), 5000, '101')
    expect(c.text()).toBe(SWITCH)
    const { req, socket, head } = seen[0]
    expect(req.upgrade).toBe(true)
    expect(req.url).toBe('/chat')
    expect(req.headers.upgrade).toBe('echo')
    expect(req.socket).toBe(socket)
    expect(socket).toBeInstanceOf(net.Socket)
    expect(socket.remoteAddress).toMatch(/^(::ffff:)?127\.0\.0\.1$/)
    expect(socket.remotePort).toBe(c.socket.localPort)
    expect(socket.localPort).toBe(port)
    expect(Buffer.isBuffer(head) && head.length).toBe(0)
    c.socket.write('ping')
    await until(() => c.text().endsWith('ping'), 5000, 'echo')
    // silent for longer than the router's deadlines (1 s here, its clock ticks each second)
    await sleep(2500)
    c.socket.write('pong')
    await until(() => c.text().endsWith('pingpong'), 5000, 'echo after a silence')
    expect(c.closed).toBe(false)
  })

  test('head holds the bytes sent after the upgrade request\'s head, and they are not delivered again', async () => {
    const seen = []
    const { port } = await serve(echoUpgrade(seen))
    const c = client(port, UPGRADE + 'early bytes')
    await until(() => seen.length === 1, 5000, 'upgrade')
    expect(seen[0].head.toString()).toBe('early bytes')
    await until(() => c.text().includes('\r\n\r\n'), 5000, '101')
    c.socket.write('later')
    await until(() => c.text().endsWith('later'), 5000, 'echo')
    // the echo is of what came after the 101 only: `head` was the app's once
    expect(c.text()).toBe(SWITCH + 'later')
  })

  test("the client's FIN ends the app's socket, which ends ours: both sides close cleanly, nothing stays in flight", async () => {
    const seen = []
    const { port, server, queue } = await serve(echoUpgrade(seen))
    const c = client(port)
    await until(() => c.text().includes('\r\n\r\n'), 5000, '101')
    c.socket.write('abc')
    await until(() => c.text().endsWith('abc'), 5000, 'echo')
    // the tunnel counts as in flight at its worker while it lives
    expect((await router.queueStats(queue)).inFlight).toBe(1)
    c.socket.end()
    await until(() => c.ended && c.closed, 5000, 'our FIN back, then close')
    expect(c.error).toBe(null)
    await until(() => seen[0].events.includes('close'), 5000, 'the app socket closes')
    expect(seen[0].events).toEqual(['end', 'close'])
    const handle = server._handle
    expect(handle.tunnels.size).toBe(0)
    expect(handle.attachment.live.size).toBe(0)
    const deadline = Date.now() + 5000
    while ((await router.queueStats(queue)).inFlight !== 0 && Date.now() < deadline) await sleep(20)
    expect((await router.queueStats(queue)).inFlight).toBe(0)
  })

  test('the app ends first: the client reads our FIN and may still send until its own', async () => {
    const got = []
    const { port } = await serve((req, socket) => {
      socket.write(SWITCH)
      socket.write('bye')
      socket.end()
      socket.on('data', (d) => got.push(d.toString()))
    })
    const c = client(port, UPGRADE, true)
    await until(() => c.ended, 5000, 'our FIN')
    expect(c.text()).toBe(SWITCH + 'bye')
    expect(c.closed).toBe(false)
    c.socket.write('late words')
    await until(() => got.join('') === 'late words', 5000, 'the app still reads')
    c.socket.end()
    await until(() => c.closed, 5000, 'closed')
  })

  test("a client's reset reaches the app as ECONNRESET and close; the app's destroy closes the client's connection", async () => {
    const seen = []
    const { port } = await serve(echoUpgrade(seen))
    const c = client(port)
    await until(() => c.text().includes('\r\n\r\n'), 5000, '101')
    c.socket.resetAndDestroy()
    await until(() => seen[0].events.includes('close'), 5000, 'app close')
    expect(seen[0].events).toEqual(['error:ECONNRESET', 'close'])

    const c2 = client(port)
    await until(() => c2.text().includes('\r\n\r\n'), 5000, '101')
    seen[1].socket.destroy()
    await until(() => c2.closed, 5000, 'the client connection goes')
  })

  test('a refused upgrade is an ordinary response that closes the connection', async () => {
    const { port } = await serve((req, socket) => {
      socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: 4\r\nConnection: close\r\n\r\nnope')
    })
    const c = client(port)
    await until(() => c.closed, 5000, 'closed')
    expect(c.text()).toMatch(/^HTTP\/1\.1 401 Unauthorized\r\n/)
    expect(c.text()).toMatch(/\r\n\r\nnope$/)
  })

  test('without an upgrade listener the request is an ordinary one, and the bytes after it are the next request', async () => {
    const seen = []
    const { port } = await serve(null, (req, res) => {
      seen.push(req.upgrade)
      res.end(`plain ${req.url}`)
    })
    const c = client(port, UPGRADE + 'GET /next HTTP/1.1\r\nHost: x\r\n\r\n')
    await until(() => c.text().includes('plain /next'), 5000, 'both answers')
    expect(c.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*plain \/chat[\s\S]*HTTP\/1\.1 200 OK[\s\S]*plain \/next$/)
    expect(seen).toEqual([false, false])
  })

  test('an upgrade request with a body is served as an ordinary request; one without switches the same connection', async () => {
    const upgrades = []
    const { port } = await serve((req, socket, head) => {
      upgrades.push(req.url)
      echoUpgrade([])(req, socket, head)
    }, (req, res) => {
      let body = ''
      req.on('data', (d) => { body += d })
      req.on('end', () => res.end(`got ${body}`))
    })
    const c = client(port, 'POST /x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\nContent-Length: 5\r\n\r\nhello')
    await until(() => c.text().endsWith('got hello'), 5000, 'answer')
    expect(upgrades).toEqual([])
    const before = c.text().length
    c.socket.write(UPGRADE)
    await until(() => c.text().length >= before + SWITCH.length, 5000, '101')
    c.socket.write('ping')
    await until(() => c.text().endsWith(SWITCH + 'ping'), 5000, 'echo')
    expect(upgrades).toEqual(['/chat'])
  })

  test('a client that never reads holds the app back', async () => {
    let blockedAt = -1
    let written = 0
    let socketRef = null
    const { port } = await serve((req, socket) => {
      socketRef = socket
      socket.write(SWITCH)
      const chunk = Buffer.alloc(64 * 1024, 1)
      const pump = () => {
        while (written < 200 * 1024 * 1024) {
          written += chunk.length
          if (!socket.write(chunk)) {
            blockedAt = written
            socket.once('drain', pump)
            return
          }
        }
      }
      pump()
    })
    const c = client(port)
    c.socket.pause()
    await sleep(1500)
    // the app is waiting for 'drain': far less than it wanted went out
    expect(blockedAt).toBeGreaterThan(0)
    expect(written).toBeLessThan(64 * 1024 * 1024)
    // and it goes on once the client reads
    const before = written
    c.socket.resume()
    await until(() => written > before + 4 * 1024 * 1024, 10000, 'more written after the client reads')
    socketRef.destroy()
  })

  test('an app that does not read holds the client back; the bytes arrive intact once it does', async () => {
    let appSocket = null
    const { port } = await serve((req, socket) => {
      appSocket = socket
      socket.write(SWITCH)
      socket.pause()
    })
    const c = client(port)
    await until(() => c.text().includes('\r\n\r\n'), 5000, '101')
    const payload = crypto.randomBytes(16 * 1024 * 1024)
    // in pieces, each counted once the client's kernel took it
    let flushed = 0
    for (let o = 0; o < payload.length; o += 64 * 1024) c.socket.write(payload.subarray(o, o + 64 * 1024), () => { flushed += 64 * 1024 })
    await sleep(1000)
    // the router stopped reading the client instead of buffering its bytes: the client
    // could hand its kernel only what the socket buffers hold (hub-upgrade.test.js read
    // the hub's paused socket and its buffered bytes), and no more since
    expect(c.socket.writableLength).toBeGreaterThan(0)
    const stalled = flushed
    expect(stalled).toBeLessThan(payload.length / 2)
    await sleep(200)
    expect(flushed).toBe(stalled)
    const parts = []
    appSocket.on('data', (d) => parts.push(d))
    appSocket.resume()
    await until(() => parts.reduce((s, p) => s + p.length, 0) >= payload.length, 20000, 'all bytes')
    expect(sha(Buffer.concat(parts))).toBe(sha(payload))
  })

  test('when the worker goes away its upgraded connections are closed', async () => {
    const seen = []
    const { port, server } = await serve(echoUpgrade(seen))
    server.on('error', () => {}) // the server hears that its queue is gone, as it would
    const c = client(port)
    await until(() => c.text().includes('\r\n\r\n'), 5000, '101')
    server._handle.attachment.socket.destroy()
    await until(() => c.closed, 5000, 'the client connection closes')
    await until(() => seen[0].events.includes('close'), 5000, 'the app socket closes')
  })

  // (from hub-upgrade.test.js: a streamed response beside the tunnels)
  test('server-sent events stream through the router as written, and a long stream is not timed out', async () => {
    const written = [] // when the app wrote event n (at n - 1)
    const { port } = await serve(null, (req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      let n = 0
      const timer = setInterval(() => {
        res.write(`data: ${++n}\n\n`)
        written.push(Date.now())
        if (n === 12) {
          clearInterval(timer)
          res.end()
        }
      }, 250)
      req.on('close', () => clearInterval(timer))
    })
    const c = client(port, 'GET /events HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n')
    const arrived = [] // when event n reached the client (at n - 1)
    c.socket.on('data', () => {
      const now = Date.now()
      while (c.text().includes(`data: ${arrived.length + 1}\n\n`)) arrived.push(now)
    })
    const t0 = Date.now()
    await until(() => c.text().includes('data: 1\n\n'), 2000, 'the first event')
    const first = Date.now() - t0
    expect(first).toBeLessThan(1000)
    expect(c.text()).not.toContain('data: 3\n\n')
    // 3 s of events: longer than the router's 1 s deadlines would allow a silent connection
    await until(() => c.text().includes('data: 12\n\n'), 10000, 'the last event')
    expect(c.text()).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*content-type: text\/event-stream/i)
    // each event arrives on its own, when written (nothing is held back to be batched):
    // within a few ms of its write, 250 ms before the next; two may be late on a busy machine
    expect(arrived).toHaveLength(12)
    const lag = arrived.map((t, i) => t - written[i])
    // (events are 250 ms apart: an event held for the next one would be ~250 ms late)
    expect(lag.filter((ms) => ms < 200).length).toBeGreaterThanOrEqual(10)
  })
})
