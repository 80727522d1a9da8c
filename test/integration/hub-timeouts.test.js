'use strict'

// The hub's timers (HTTP.SYS's HTTP_TIMEOUT_LIMIT_INFO) with small values. The hub
// checks them on a 1 s clock, so a 1000 ms timeout fires between 1 and 2 s later: the
// tests allow for that and check the opposite case (no timeout) too.

const { startHub, startWorker, reply, RawClient, until } = require('../helpers/hub-harness')

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

describe('hub timeouts', () => {
  let hub
  let port
  let w
  const clients = []

  function client (p = port) {
    const c = new RawClient(p)
    clients.push(c)
    return c
  }

  beforeAll(async () => {
    hub = await startHub({ keepAliveTimeout: 1000, headersTimeout: 1000, bodyTimeout: 1000, drainTimeout: 1000, queueTimeout: 1000 })
    port = (await hub.createQueue('app', { urls: ['http://+:0/'] })).ports[0]
    w = await startWorker(hub, {
      queue: 'app',
      handle: (req, body, x) => reply(x, req, 200, `got ${body.length}`),
      onRequest (req, x) {
        if (req.url === '/early') return reply(x, req, 200, 'early') // never reads the body
        if (req.url === '/lazy') return // reads the body only when the test says so
        if (!req.hasBody) return reply(x, req, 200, 'ok')
        x.chunks.set(req.id, [])
        x.att.readBody(req.id)
      }
    })
  })

  afterAll(async () => {
    for (const c of clients) c.close()
    w.att.close()
    await hub.close()
  })

  test('keepAliveTimeout: an idle keep-alive connection is closed; before that it is reused', async () => {
    const c = client()
    await c.connected
    c.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
    await c.waitFor(1)
    await sleep(300)
    c.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
    await c.waitFor(2)
    const idleSince = Date.now()
    await c.waitClosed(4000)
    expect(Date.now() - idleSince).toBeGreaterThanOrEqual(900)
  })

  test('headersTimeout: a head that never completes, or never starts, closes the connection unseen', async () => {
    const seen = w.requests.length
    const partial = client()
    const silent = client()
    await Promise.all([partial.connected, silent.connected])
    partial.write('GET /slowloris HTTP/1.1\r\nHost: a\r\n')
    const t0 = Date.now()
    await Promise.all([partial.waitClosed(4000), silent.waitClosed(4000)])
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900)
    expect(w.requests.length).toBe(seen)
  })

  test('bodyTimeout: a body that stops arriving resets the connection and aborts the request at the worker', async () => {
    const c = client()
    await c.connected
    c.write('POST /stall HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n12345')
    await until(() => w.requests.some((r) => r.url === '/stall'), 2000, 'the request at the worker')
    const id = w.requests.find((r) => r.url === '/stall').id
    await c.waitClosed(4000)
    await until(() => w.aborted.includes(id), 2000, 'the abort at the worker')
    expect(c.responses).toHaveLength(0)
  })

  test('bodyTimeout is the gap between pieces: a body that keeps trickling in is not cut', async () => {
    const c = client()
    await c.connected
    c.write('POST /trickle HTTP/1.1\r\nHost: a\r\nContent-Length: 8\r\n\r\n')
    for (let i = 0; i < 8; i++) {
      await sleep(350) // 2.8 s in all, well past the 1 s timeout
      c.write('x')
    }
    const [res] = await c.waitFor(1)
    expect(res.body.toString()).toBe('got 8')
  })

  test('a body the app is not reading yet is not the client\'s fault: no timeout while the hub holds it back', async () => {
    const c = client()
    await c.connected
    const size = 300 * 1024 // far beyond the initial window: the hub stops reading
    c.write(`POST /lazy HTTP/1.1\r\nHost: a\r\nContent-Length: ${size}\r\n\r\n`)
    c.write(Buffer.alloc(size, 'z'))
    await until(() => w.requests.some((r) => r.url === '/lazy'), 2000, 'the request at the worker')
    const req = w.requests.find((r) => r.url === '/lazy')
    await sleep(2500)
    expect(c.ended).toBe(false)
    expect(w.aborted).not.toContain(req.id)
    // now the app reads it all, and answers
    await until(() => {
      w.att.readBody(req.id)
      return (w.received.get(req.id) || 0) >= size
    }, 5000, 'the whole body at the worker')
    reply(w, req, 200, 'read it')
    const [res] = await c.waitFor(1)
    expect(res.body.toString()).toBe('read it')
  })

  test('drainTimeout: after an early answer, the unread rest of the body must arrive in time', async () => {
    const c = client()
    await c.connected
    c.write('POST /early HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\nabc')
    const [res] = await c.waitFor(1)
    expect(res.body.toString()).toBe('early')
    // keeps trickling, but never finishes: the drain is bounded in all
    const t0 = Date.now()
    const trickle = setInterval(() => { if (!c.ended) c.write('x') }, 200)
    try {
      await c.waitClosed(4000)
    } finally {
      clearInterval(trickle)
    }
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900)
  })

  test('queueTimeout: a request no worker takes in time gets 503 with Retry-After; one taken in time is served', async () => {
    const { ports: [p] } = await hub.createQueue('nobody', { urls: ['http://+:0/'] })
    const c = client(p)
    await c.connected
    const t0 = Date.now()
    c.write('GET /waits HTTP/1.1\r\nHost: a\r\n\r\n')
    const [res] = await c.waitFor(1, 4000)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(900)
    expect(res.status).toBe(503)
    expect(res.headers['retry-after']).toBe('1')
    expect(res.body.toString()).toMatch(/No application instance took the request in time/)
    expect(hub.queueStats('nobody').waiting).toBe(0)
    // the connection stays usable, and a worker that comes in time gets the next one
    c.write('GET /in-time HTTP/1.1\r\nHost: a\r\n\r\n')
    await sleep(300)
    const late = await startWorker(hub, { queue: 'nobody', handle: (req, body, x) => reply(x, req, 200, `late ${req.url}`) })
    try {
      const [, ok] = await c.waitFor(2)
      expect(ok.body.toString()).toBe('late /in-time')
      expect(late.requests.map((r) => r.url)).toEqual(['/in-time'])
    } finally {
      late.att.close()
    }
  })

  test('a per-queue queueTimeout overrides the hub\'s; 0 waits for ever', async () => {
    const { ports: [p] } = await hub.createQueue('patient', { urls: ['http://+:0/'], queueTimeout: 0 })
    const c = client(p)
    await c.connected
    c.write('GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\r\n')
    await sleep(2500)
    expect(c.responses).toHaveLength(0)
    expect(hub.queueStats('patient').waiting).toBe(1)
  })

  test('bad timeout options are refused', async () => {
    await expect(startHub({ queueTimeout: -1 })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG_VALUE' })
    await expect(startHub({ bodyTimeout: 'soon' })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG_VALUE' })
  })
})
