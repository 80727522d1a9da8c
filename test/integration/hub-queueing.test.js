'use strict'

const path = require('node:path')
const { fork } = require('node:child_process')
const { startHub, startWorker, reply, request, RawClient, until } = require('../helpers/hub-harness')

const CHILD = path.join(__dirname, '..', 'helpers', 'hub-child-worker.js')

describe('hub queues and workers', () => {
  let hub
  const workers = []
  const children = []

  beforeAll(async () => {
    hub = await startHub()
  })

  afterAll(async () => {
    for (const w of workers) w.att.close()
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    await hub.close()
  })

  async function worker (queue, handle) {
    const w = await startWorker(hub, { queue, handle })
    workers.push(w)
    return w
  }

  test('pipelined requests are answered in order even when the first is slower', async () => {
    const { ports: [port] } = await hub.createQueue('pipe', { urls: ['http://+:0/'] })
    await worker('pipe', (req, body, w) => {
      const delay = req.url === '/slow' ? 150 : 0
      setTimeout(() => reply(w, req, 200, `answer ${req.url}`), delay)
    })
    const c = new RawClient(port)
    await c.connected
    c.write('GET /slow HTTP/1.1\r\nHost: a\r\n\r\nGET /quick1 HTTP/1.1\r\nHost: a\r\n\r\nGET /quick2 HTTP/1.1\r\nHost: a\r\n\r\n')
    const res = await c.waitFor(3)
    expect(res.map((r) => r.body.toString())).toEqual(['answer /slow', 'answer /quick1', 'answer /quick2'])
    c.close()
  })

  // RFC 9112 9.3.2: in parallel only when every pipelined request is safe
  test.each([
    { name: 'safe requests behind a slow one reach the app at once', first: 'GET /slow', second: 'GET /next', waits: false },
    { name: 'a request behind an unsafe one reaches the app only once that one is answered', first: 'POST /slow', second: 'GET /next', waits: true },
    { name: 'an unsafe request behind a safe one reaches the app only once that one is answered', first: 'GET /slow', second: 'DELETE /next', waits: true }
  ])('pipelining: $name', async ({ first, second, waits }) => {
    const queue = `order${waits ? 1 : 0}${first[0]}${second[0]}`
    const { ports: [port] } = await hub.createQueue(queue, { urls: ['http://+:0/'] })
    const events = []
    const w = await startWorker(hub, {
      queue,
      onRequest: (req, x) => {
        events.push(`request ${req.url}`)
        if (req.hasBody) x.att.readBody(req.id)
        if (req.url !== '/slow') return reply(x, req, 200, 'next')
        setTimeout(() => {
          events.push('answered /slow')
          reply(x, req, 200, 'slow')
        }, 150)
      }
    })
    workers.push(w)
    const c = new RawClient(port)
    await c.connected
    c.write(`${first} HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc${second} HTTP/1.1\r\nHost: a\r\n\r\n`)
    const res = await c.waitFor(2)
    expect(res.map((r) => r.body.toString())).toEqual(['slow', 'next'])
    expect(events).toEqual(waits
      ? ['request /slow', 'answered /slow', 'request /next']
      : ['request /slow', 'request /next', 'answered /slow'])
    c.close()
  })

  test('two workers on one queue both get requests', async () => {
    const { ports: [port] } = await hub.createQueue('pair', { urls: ['http://+:0/'] })
    const a = await worker('pair', (req, body, w) => setTimeout(() => reply(w, req, 200, 'a'), 5))
    const b = await worker('pair', (req, body, w) => setTimeout(() => reply(w, req, 200, 'b'), 5))
    const results = await Promise.all(Array.from({ length: 40 }, () => request(port)))
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect(a.requests.length).toBeGreaterThan(5)
    expect(b.requests.length).toBeGreaterThan(5)
    expect(a.requests.length + b.requests.length).toBe(40)
    const stats = hub.queueStats('pair')
    expect(stats.workers).toHaveLength(2)
    expect(stats.served).toBe(40)
  })

  test('requests sent while no worker is attached wait and are served once one attaches', async () => {
    const { ports: [port] } = await hub.createQueue('later', { urls: ['http://+:0/'] })
    const pending = Promise.all(Array.from({ length: 20 }, (_, i) => request(port, { path: `/r${i}` })))
    await until(() => hub.queueStats('later').waiting === 20, 5000, '20 waiting requests')
    await worker('later', (req, body, w) => reply(w, req, 200, req.url))
    const results = await pending
    expect(results.filter((r) => r.status !== 200)).toEqual([])
    expect(results.map((r) => r.body.toString())).toEqual(Array.from({ length: 20 }, (_, i) => `/r${i}`))
  })

  test('a full queue answers 503 with Retry-After', async () => {
    const { ports: [port] } = await hub.createQueue('tiny', { urls: ['http://+:0/'], queueLength: 2 })
    const waiting = [request(port, { path: '/1' }), request(port, { path: '/2' })]
    await until(() => hub.queueStats('tiny').waiting === 2, 5000, 'two waiting')
    const res = await request(port, { path: '/3' })
    expect(res.status).toBe(503)
    expect(res.headers['retry-after']).toBe('1')
    await worker('tiny', (req, body, w) => reply(w, req, 200, 'ok'))
    expect((await Promise.all(waiting)).map((r) => r.status)).toEqual([200, 200])
  })

  test('a worker killed mid-request: that request gets 502 and the hub keeps serving', async () => {
    const { ports: [port] } = await hub.createQueue('crash', { urls: ['http://+:0/'] })
    const child = fork(CHILD, [hub.socketPath, 'crash'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
    children.push(child)
    const seen = []
    child.on('message', (m) => seen.push(m))
    await until(() => seen.some((m) => m.type === 'attached'), 10000, 'child attached')
    expect((await request(port, { path: '/fast' })).body.toString()).toBe('fast')

    const hung = request(port, { path: '/hang' })
    await until(() => seen.some((m) => m.url === '/hang'), 5000, 'child received /hang')
    // The worker acknowledged /hang (it ran onRequest): it must not be replayed.
    await until(() => hub.queueStats('crash').inFlight === 1, 2000, 'in flight')
    await new Promise((resolve) => setTimeout(resolve, 50))
    child.kill('SIGKILL')
    const res = await hung
    expect(res.status).toBe(502)

    // The hub keeps serving: the queue waits for a new worker, which then answers.
    const next = request(port, { path: '/fast-again' })
    const w = await worker('crash', (req, body, x) => reply(x, req, 200, 'replacement'))
    expect((await next).body.toString()).toBe('replacement')
    expect(w.requests.map((r) => r.url)).toEqual(['/fast-again'])
  })

  test('requests a dead worker never acknowledged go to the next worker, not to 502', async () => {
    const { ports: [port] } = await hub.createQueue('replay', { urls: ['http://+:0/'] })
    // A worker that swallows frames: its receive window is one request, it never ACKs
    // because it is destroyed before its first data event completes.
    const mute = await startWorker(hub, {
      queue: 'replay',
      onRequest: () => { throw new Error('never delivered') }
    })
    mute.att.socket.pause() // reads nothing: REQUEST frames stay unacknowledged
    const pending = Promise.all([request(port, { path: '/x1' }), request(port, { path: '/x2' })])
    await until(() => hub.queueStats('replay').inFlight === 2, 5000, 'dispatched to the mute worker')
    mute.att.socket.destroy()
    await worker('replay', (req, body, w) => reply(w, req, 200, `got ${req.url}`))
    const results = await pending
    expect(results.map((r) => [r.status, r.body.toString()])).toEqual([[200, 'got /x1'], [200, 'got /x2']])
  })

  test('attach to an unknown queue without urls fails with ERR_HTTPSYS_QUEUE_NOT_FOUND', async () => {
    await expect(startWorker(hub, { queue: 'nope' })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_QUEUE_NOT_FOUND' })
  })

  test('an anonymous queue lives as long as its worker, and port 0 is resolved for it', async () => {
    const w = await startWorker(hub, { urls: ['http://+:0/anon/'], handle: (req, body, x) => reply(x, req, 200, 'anon') })
    const [url] = w.att.info.urls
    expect(url).toMatch(/^http:\/\/\+:\d+\/anon\/$/)
    const port = w.att.info.ports[0]
    expect((await request(port, { path: '/anon/x' })).body.toString()).toBe('anon')
    const name = w.att.info.queue
    expect(hub.queues()).toContain(name)
    w.att.close()
    await until(() => !hub.queues().includes(name), 2000, 'queue removed')
    expect(hub.address(port)).toBe(null)
  })

  test('a worker naming a queue without urls adds its own; a configured queue keeps its urls', async () => {
    // `httpsys start app.js` without -u: the queue exists, the app's listen() decides the prefix.
    await hub.createQueue('bare')
    expect(hub.queueStats('bare').urls).toEqual([])
    const w = await startWorker(hub, { queue: 'bare', urls: ['http://+:0/'], handle: (req, body, x) => reply(x, req, 200, 'bare') })
    workers.push(w)
    expect(w.att.info.urls).toEqual(hub.queueStats('bare').urls)
    expect(w.att.info.urls[0]).toMatch(/^http:\/\/\+:\d+\/$/)
    expect((await request(w.att.info.ports[0])).body.toString()).toBe('bare')

    await hub.createQueue('filled', { urls: ['http://+:0/'] })
    const before = hub.queueStats('filled').urls
    const w3 = await startWorker(hub, { queue: 'filled', urls: ['http://+:0/other/'] })
    workers.push(w3)
    expect(w3.att.info.urls).toEqual(before)
    expect(hub.queueStats('filled').urls).toEqual(before)
  })

  test('attach/detach events, and detach stops new requests reaching the worker', async () => {
    const events = []
    hub.on('attach', (e) => events.push(['attach', e.queue]))
    hub.on('detach', (e) => events.push(['detach', e.queue, e.reason]))
    const { ports: [port] } = await hub.createQueue('events', { urls: ['http://+:0/'] })
    const w = await worker('events', (req, body, x) => reply(x, req, 200, 'first'))
    expect((await request(port)).body.toString()).toBe('first')
    await w.att.detach()
    const pending = request(port)
    await until(() => hub.queueStats('events').waiting === 1, 2000, 'request waiting after detach')
    await worker('events', (req, body, x) => reply(x, req, 200, 'second'))
    expect((await pending).body.toString()).toBe('second')
    expect(events).toContainEqual(['attach', 'events'])
    expect(events).toContainEqual(['detach', 'events', 'detach'])
  })

  test('deleteQueue answers waiting requests 503 and closes its workers', async () => {
    const { ports: [port] } = await hub.createQueue('doomed', { urls: ['http://+:0/'] })
    const pending = request(port)
    await until(() => hub.queueStats('doomed').waiting === 1, 2000, 'waiting')
    await hub.deleteQueue('doomed')
    expect((await pending).status).toBe(503)
    expect(hub.queues()).not.toContain('doomed')
  })
})

describe('limits.max_connections', () => {
  test('beyond the limit a new connection is refused; the ones open keep being served', async () => {
    const hub = await startHub({ maxConnections: 1 })
    try {
      const { ports: [port] } = await hub.createQueue('one', { urls: ['http://+:0/'] })
      const w = await startWorker(hub, { queue: 'one', handle: (req, body, worker) => reply(worker, req, 200, 'ok') })
      const first = new RawClient(port)
      await first.connected
      const second = new RawClient(port)
      await until(() => second.ended, 3000, 'the second connection closed by the hub')
      first.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
      const [res] = await first.waitFor(1)
      expect(res.body.toString()).toBe('ok')
      first.socket.destroy()
      w.att.close()
    } finally {
      await hub.close()
    }
  })
})
