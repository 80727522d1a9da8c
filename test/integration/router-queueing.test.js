'use strict'

// Queues and workers on the native router (router/, issue 25; the JS hub, src/hub,
// was held to them too until it was removed): what hub-queueing.test.js held beyond
// what router-black-box.test.js already asks (who attaches to what, an anonymous queue's life, attach and detach, a
// deleted queue, limits.max_connections).

const net = require('node:net')
const path = require('node:path')
const { fork } = require('node:child_process')
const { startWorker, reply, request, RawClient, until } = require('../helpers/hub-harness')
const { ROUTERS, eventually, queueNames } = require('../helpers/routers')

const CHILD = path.join(__dirname, '..', 'helpers', 'hub-child-worker.js')

// The router's attach and detach events: the hub's emitter, the native router's control channel.
function attachEvents (r) {
  const events = []
  if (typeof r.on === 'function') {
    r.on('attach', (e) => events.push(['attach', e.queue]))
    r.on('detach', (e) => events.push(['detach', e.queue, e.reason]))
  } else {
    r.proc.on('event', (name, e) => {
      if (name === 'attach') events.push(['attach', e.queue])
      if (name === 'detach') events.push(['detach', e.queue, e.reason])
    })
  }
  return events
}

// Whether anything still listens on the port (the hub's address(port) is null once it is closed).
function listening (port) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1')
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('error', () => resolve(false))
  })
}

describe.each(ROUTERS)('%s: queues and workers', (name, start) => {
  let hub
  const workers = []
  const children = []

  beforeAll(async () => {
    hub = await start()
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

  test('two workers on one queue both get requests', async () => {
    const { ports: [port] } = await hub.createQueue('pair', { urls: ['http://+:0/'] })
    const a = await worker('pair', (req, body, w) => setTimeout(() => reply(w, req, 200, 'a'), 5))
    const b = await worker('pair', (req, body, w) => setTimeout(() => reply(w, req, 200, 'b'), 5))
    // a worker takes requests once its first ACK is in (wire-protocol.md "Lifecycle")
    await new Promise((resolve) => setTimeout(resolve, 50))
    const results = await Promise.all(Array.from({ length: 40 }, () => request(port)))
    expect(results.every((r) => r.status === 200)).toBe(true)
    expect(a.requests.length).toBeGreaterThan(5)
    expect(b.requests.length).toBeGreaterThan(5)
    expect(a.requests.length + b.requests.length).toBe(40)
    await eventually(async () => (await hub.queueStats('pair')).served === 40, 2000, '40 served')
    const stats = await hub.queueStats('pair')
    expect(stats.workers).toHaveLength(2)
    expect(stats.served).toBe(40)
  })

  test('a worker killed mid-request: that request gets 502 and the router keeps serving', async () => {
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
    await eventually(async () => (await hub.queueStats('crash')).inFlight === 1, 2000, 'in flight')
    await new Promise((resolve) => setTimeout(resolve, 50))
    child.kill('SIGKILL')
    const res = await hung
    expect(res.status).toBe(502)

    // The router keeps serving: the queue waits for a new worker, which then answers.
    const next = request(port, { path: '/fast-again' })
    const w = await worker('crash', (req, body, x) => reply(x, req, 200, 'replacement'))
    expect((await next).body.toString()).toBe('replacement')
    expect(w.requests.map((r) => r.url)).toEqual(['/fast-again'])
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
    expect(await queueNames(hub)).toContain(name)
    w.att.close()
    await eventually(async () => !(await queueNames(hub)).includes(name), 2000, 'queue removed')
    // its port is closed with it
    await eventually(async () => !(await listening(port)), 2000, 'the port closed')
  })

  test('a worker naming a queue without urls adds its own; a configured queue keeps its urls', async () => {
    // `httpsys start app.js` without -u: the queue exists, the app's listen() decides the prefix.
    await hub.createQueue('bare')
    expect((await hub.queueStats('bare')).urls).toEqual([])
    const w = await startWorker(hub, { queue: 'bare', urls: ['http://+:0/'], handle: (req, body, x) => reply(x, req, 200, 'bare') })
    workers.push(w)
    expect(w.att.info.urls).toEqual((await hub.queueStats('bare')).urls)
    expect(w.att.info.urls[0]).toMatch(/^http:\/\/\+:\d+\/$/)
    expect((await request(w.att.info.ports[0])).body.toString()).toBe('bare')

    await hub.createQueue('filled', { urls: ['http://+:0/'] })
    const before = (await hub.queueStats('filled')).urls
    const w3 = await startWorker(hub, { queue: 'filled', urls: ['http://+:0/other/'] })
    workers.push(w3)
    expect(w3.att.info.urls).toEqual(before)
    expect((await hub.queueStats('filled')).urls).toEqual(before)
  })

  test('attach/detach events, and detach stops new requests reaching the worker', async () => {
    const events = attachEvents(hub)
    const { ports: [port] } = await hub.createQueue('events', { urls: ['http://+:0/'] })
    const w = await worker('events', (req, body, x) => reply(x, req, 200, 'first'))
    expect((await request(port)).body.toString()).toBe('first')
    await w.att.detach()
    const pending = request(port)
    await eventually(async () => (await hub.queueStats('events')).waiting === 1, 2000, 'request waiting after detach')
    await worker('events', (req, body, x) => reply(x, req, 200, 'second'))
    expect((await pending).body.toString()).toBe('second')
    await until(() => events.length >= 3, 2000, 'the events')
    expect(events).toContainEqual(['attach', 'events'])
    expect(events).toContainEqual(['detach', 'events', 'detach'])
  })

  test('deleteQueue answers waiting requests 503 and closes its workers', async () => {
    const { ports: [port] } = await hub.createQueue('doomed', { urls: ['http://+:0/'] })
    const pending = request(port)
    await eventually(async () => (await hub.queueStats('doomed')).waiting === 1, 2000, 'waiting')
    await hub.deleteQueue('doomed')
    expect((await pending).status).toBe(503)
    expect(await queueNames(hub)).not.toContain('doomed')
  })
})

describe.each(ROUTERS)('%s: limits.max_connections', (name, start) => {
  test('beyond the limit a new connection is refused; the ones open keep being served', async () => {
    const hub = await start({ maxConnections: 1 })
    try {
      const { ports: [port] } = await hub.createQueue('one', { urls: ['http://+:0/'] })
      const w = await startWorker(hub, { queue: 'one', handle: (req, body, worker) => reply(worker, req, 200, 'ok') })
      const first = new RawClient(port)
      await first.connected
      const second = new RawClient(port)
      await until(() => second.ended, 3000, 'the second connection closed by the router')
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
