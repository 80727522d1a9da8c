'use strict'

const net = require('node:net')
const P = require('../../src/wire/protocol')
const hubClient = require('../../src/queue/hub-client')
const { RESPONSE_OPAQUE } = require('../../src/wire/contract')
const { startWorker, reply, request, RawClient, until, socketPath } = require('../helpers/hub-harness')
const { ROUTERS, queueNames } = require('../helpers/routers')

// A router's life with its clients and workers, on the native router (router/, issue
// 25; the JS hub, src/hub, ran it too until it was removed); and, below, what the hub client does against a
// peer that is no router of ours (it stays when src/hub goes).

// Reads frames from a raw socket (a hand-made worker or a fake hub).
function frames (socket) {
  const got = []
  const reader = new P.FrameReader((type, id, b, s, e) => got.push({ type, id, payload: Buffer.from(b.subarray(s, e)) }))
  socket.on('data', (d) => reader.push(d))
  return got
}

function helloWithVersion (version, value) {
  const w = new P.FrameWriter()
  w.json(P.T.HELLO, 0, value, true)
  const bytes = Buffer.concat(w.take())
  bytes[9] = version
  return bytes
}

describe.each(ROUTERS)('%s: lifecycle', (name, start) => {
  test('an idle keep-alive connection is closed after keepAliveTimeout', async () => {
    const hub = await start({ keepAliveTimeout: 300 })
    const port = (await hub.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
    const w = await startWorker(hub, { queue: 'q', handle: (req, body, x) => reply(x, req, 200, 'ok') })
    try {
      const c = new RawClient(port)
      await c.connected
      c.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
      await c.waitFor(1)
      const t0 = Date.now()
      await c.waitClosed(4000)
      expect(Date.now() - t0).toBeGreaterThanOrEqual(250)
    } finally {
      w.att.close()
      await hub.close()
    }
  })

  test('close() lets in-flight responses finish (with Connection: close), then ends workers', async () => {
    const hub = await start()
    const port = (await hub.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
    const w = await startWorker(hub, { queue: 'q', handle: (req, body, x) => setTimeout(() => reply(x, req, 200, 'late'), 200) })
    const c = new RawClient(port)
    await c.connected
    c.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => w.requests.length === 1, 2000, 'request')
    const closed = hub.close()
    const [res] = await c.waitFor(1)
    expect(res.body.toString()).toBe('late')
    expect(res.headers.connection).toBe('close')
    await closed
    await until(() => w.closed.length === 1, 2000, 'worker closed')
    expect(w.closed[0]).toMatchObject({ code: 'ERR_HTTPSYS_QUEUE_CLOSED' })
    await expect(request(port)).rejects.toThrow(/ECONNREFUSED/)
  })

  test('a worker answering 101 to a request that did not ask to upgrade gets the client a clear 501', async () => {
    const hub = await start()
    const port = (await hub.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
    const w = await startWorker(hub, {
      queue: 'q',
      onRequest: (req, x) => x.att.respond(req.id, 101, 'Switching Protocols', ['Upgrade', 'websocket', 'Connection', 'Upgrade'], null, RESPONSE_OPAQUE)
    })
    try {
      const c = new RawClient(port)
      await c.connected
      // (an upgrade request answered 101 switches protocols: router-upgrade.test.js)
      c.write('GET /ws HTTP/1.1\r\nHost: a\r\nX-Want: websocket\r\n\r\n')
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(501)
      expect(res.body.toString()).toMatch(/asked to upgrade/i)
      expect(w.requests[0].rawHeaders).toContain('websocket')
      c.close()
    } finally {
      w.att.close()
      await hub.close()
    }
  })

  test('a worker speaking another protocol version is refused with ERR_HTTPSYS_PROTOCOL', async () => {
    const hub = await start()
    try {
      const s = net.connect(hub.socketPath)
      const got = frames(s)
      s.write(helloWithVersion(99, { urls: ['http://+:0/'], pid: 1 }))
      await until(() => got.length === 1, 2000, 'HELLO_ERR')
      expect(got[0].type).toBe(P.T.HELLO_ERR)
      const err = JSON.parse(got[0].payload.toString())
      expect(err.code).toBe('ERR_HTTPSYS_PROTOCOL')
      expect(err.details.reason).toMatch(/version 99/)
      s.destroy()
      expect(await queueNames(hub)).toEqual([])
    } finally {
      await hub.close()
    }
  })

  test('a client that half-closes after a Connection: close request still gets its answer', async () => {
    const hub = await start()
    const port = (await hub.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
    const w = await startWorker(hub, { queue: 'q', handle: (req, body, x) => setTimeout(() => reply(x, req, 200, 'half'), 50) })
    try {
      const c = new RawClient(port)
      await c.connected
      c.socket.end('GET / HTTP/1.0\r\n\r\n')
      const [res] = await c.waitFor(1)
      expect(res.body.toString()).toBe('half')
      await c.waitClosed()
    } finally {
      w.att.close()
      await hub.close()
    }
  })
  test('the worker hears of every closed connection, answered or left with a request in flight', async () => {
    const hub = await start()
    const port = (await hub.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
    const heard = []
    const w = await startWorker(hub, {
      queue: 'q',
      onRequest: (req, x) => {
        if (req.url === '/slow') return // answered by nobody: the client leaves first
        reply(x, req, 200, 'ok', ['Connection', 'close'])
      }
    })
    const origin = w.att.handlers.onConnectionClose
    w.att.handlers.onConnectionClose = (id) => {
      heard.push({ id, at: Date.now() })
      if (origin) origin(id)
    }
    try {
      // answered, and closed by the hub after the response (Connection: close)
      const a = new RawClient(port)
      await a.connected
      a.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
      await a.waitFor(1)
      await a.waitClosed()
      await until(() => heard.length === 1, 2000)
      const first = w.requests[0].connectionId
      expect(heard[0].id).toBe(first)
      // a client that leaves with its request unanswered: the worker hears of it at once
      const b = new RawClient(port)
      await b.connected
      b.write('GET /slow HTTP/1.1\r\nHost: a\r\n\r\n')
      await until(() => w.requests.length === 2, 2000)
      const left = Date.now()
      b.socket.destroy()
      await until(() => heard.length === 2, 2000)
      expect(heard[1].id).toBe(w.requests[1].connectionId)
      expect(w.aborted).toContain(w.requests[1].id)
      expect(heard[1].at - left).toBeLessThan(1000)
    } finally {
      w.att.close()
      await hub.close()
    }
  })
})

describe('the hub client against a peer that is no router', () => {
  test('a hub speaking another protocol version is refused by the worker', async () => {
    const path = socketPath()
    const fake = net.createServer((s) => {
      s.once('data', () => {
        const w = new P.FrameWriter()
        w.json(P.T.HELLO_OK, 0, { queue: 'x', urls: [], ports: [] }, true)
        const bytes = Buffer.concat(w.take())
        bytes[9] = P.VERSION + 1
        s.write(bytes)
      })
    })
    await new Promise((resolve) => fake.listen(path, resolve))
    try {
      await expect(hubClient.attach({ socketPath: path, queue: 'x', handlers: { onRequest () {} } }))
        .rejects.toMatchObject({ code: 'ERR_HTTPSYS_PROTOCOL' })
    } finally {
      await new Promise((resolve) => fake.close(resolve))
    }
  })

  test('no hub at the path: ERR_HTTPSYS_HUB_UNREACHABLE naming it', async () => {
    const path = socketPath()
    const err = await hubClient.attach({ socketPath: path, queue: 'x', handlers: { onRequest () {} } }).catch((e) => e)
    expect(err.code).toBe('ERR_HTTPSYS_HUB_UNREACHABLE')
    expect(err.message).toContain(path)
  })
})
