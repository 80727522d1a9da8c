'use strict'

// Hub-only (they go with src/hub): the hub's own buffers under a tunnel that one side
// does not read, read from its connection objects. Every upgrade case, and what a
// client and an app see of these two, runs against both routers in
// router-upgrade.test.js (issue 25).

const net = require('node:net')
const crypto = require('node:crypto')
const { Server } = require('../../src/http/server')
const hubClient = require('../../src/queue/hub-client')
const { BODY_HOLD } = require('../../src/hub/hub-request')
const { RESPONSE_WINDOW } = require('../../src/wire/protocol')
const { startHub, until } = require('../helpers/hub-harness')

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const sha = (buf) => crypto.createHash('sha256').update(buf).digest('hex')

const UPGRADE = 'GET /chat HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n'
const SWITCH = 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n'

let hub
let n = 0
const servers = []

// short deadlines, so a test can show that a tunnel or a stream that flows is not cut by them
beforeAll(async () => { hub = await startHub({ keepAliveTimeout: 1000, bodyTimeout: 1000 }) })
afterAll(async () => {
  for (const s of servers) {
    // the hub's close ends every queue: that is this test's doing, not an app error
    s.on('error', () => {})
    s.close()
  }
  await hub.close()
})

/** An http.Server of src/http on its own hub queue and port. */
async function serve (onUpgrade, onRequest = (req, res) => res.end('plain')) {
  const queue = `up${++n}`
  const port = (await hub.createQueue(queue, { urls: ['http://+:0/'] })).ports[0]
  const backend = { attach: (o) => hubClient.attach({ ...o, socketPath: hub.socketPath, queue }) }
  const server = new Server({ queueBackend: backend }, onRequest)
  if (onUpgrade) server.on('upgrade', onUpgrade)
  await new Promise((resolve) => server.listen(port, resolve))
  servers.push(server)
  return { server, port, queue }
}

/** A raw client: sends the upgrade request, collects everything it receives. */
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

test('a client that never reads holds the app back; the hub holds about a response window', async () => {
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
  const c = rawClient(port)
  c.socket.pause()
  await sleep(1500)
  // the app is waiting for 'drain': far less than it wanted went out
  expect(blockedAt).toBeGreaterThan(0)
  expect(written).toBeLessThan(64 * 1024 * 1024)
  const conn = [...hub.conns].find((x) => x.tunnel !== null && x.remotePort === c.socket.localPort)
  expect(conn.socket.writableLength).toBeLessThanOrEqual(2 * RESPONSE_WINDOW)
  // and it goes on once the client reads
  const before = written
  c.socket.resume()
  await until(() => written > before + 4 * 1024 * 1024, 10000, 'more written after the client reads')
  socketRef.destroy()
  c.socket.destroy()
})

test('an app that does not read holds the client back; the bytes arrive intact once it does', async () => {
  let appSocket = null
  const { port } = await serve((req, socket) => {
    appSocket = socket
    socket.write(SWITCH)
    socket.pause()
  })
  const c = rawClient(port)
  await until(() => c.text().includes('\r\n\r\n'), 5000, '101')
  const payload = crypto.randomBytes(16 * 1024 * 1024)
  c.socket.write(payload)
  await sleep(1000)
  const conn = [...hub.conns].find((x) => x.tunnel !== null && x.remotePort === c.socket.localPort)
  // the hub stopped reading the client instead of buffering its bytes
  expect(conn.socket.isPaused()).toBe(true)
  expect(conn.tunnel.req.bodyBufBytes).toBeLessThanOrEqual(BODY_HOLD + 256 * 1024)
  expect(c.socket.writableLength).toBeGreaterThan(0)
  const parts = []
  appSocket.on('data', (d) => parts.push(d))
  appSocket.resume()
  await until(() => parts.reduce((s, p) => s + p.length, 0) >= payload.length, 20000, 'all bytes')
  expect(sha(Buffer.concat(parts))).toBe(sha(payload))
  c.socket.destroy()
})
