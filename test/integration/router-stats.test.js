'use strict'

// What `httpsys ls`, `show`, `monit` and the metrics endpoint read from the router
// (src/supervisor/app-stats.js: a queue's waiting requests, each worker's served and in
// flight; the client connections open), the same on the JS hub and the native router
// (issue 25). The supervisor reads the hub's in its process (hub-router.js) and the
// native router's over its control channel (native-router.js: stats).

const { startWorker, reply, RawClient } = require('../helpers/hub-harness')
const { startNativeRouter } = require('../helpers/native-router')

jest.setTimeout(30000)

async function eventually (fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs
  let last
  while (!(last = await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return last
}

// the supervisor's view: hub-router.js connections() is the hub's conns.size
const connectionsOf = async (r) => typeof r.stats === 'function' ? (await r.stats()).connections : r.conns.size

describe.each([
  ['the native router', startNativeRouter]
])('%s', (name, start) => {
  const cleanup = []
  afterEach(async () => {
    for (const fn of cleanup.splice(0).reverse()) await fn()
  })

  test('client connections open, and per worker what it served and has in flight', async () => {
    const r = await start({ workersMayCreate: false })
    cleanup.push(() => r.close())
    const port = (await r.createQueue('app', { urls: ['http://127.0.0.1:0/'] })).ports[0]
    const held = []
    const w = await startWorker(r, { queue: 'app', handle: (req, body, w) => req.url === '/hold' ? held.push(req) : reply(w, req, 200, 'ok') })
    cleanup.push(() => w.att.close())
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(await connectionsOf(r)).toBe(0)

    const clients = [new RawClient(port), new RawClient(port), new RawClient(port)]
    for (const c of clients) cleanup.push(() => c.close())
    for (const c of clients) c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
    for (const c of clients) expect((await c.waitFor(1))[0].status).toBe(200)
    clients[0].write('GET /hold HTTP/1.1\r\nHost: x\r\n\r\n')
    await eventually(() => held.length === 1, 5000, 'the held request')

    // the native router's counters are read over its channel: wait for them to settle
    const stats = await eventually(async () => {
      const s = await r.queueStats('app')
      return s.served === 3 && s.inFlight === 1 ? s : null
    }, 5000, '3 served, 1 in flight')
    expect(stats).toMatchObject({ name: 'app', waiting: 0, served: 3, inFlight: 1 })
    expect(stats.workers).toHaveLength(1)
    expect(stats.workers[0]).toMatchObject({ pid: process.pid, served: 3, inFlight: 1 })
    expect(await connectionsOf(r)).toBe(3)

    clients[1].close()
    clients[2].close()
    await eventually(async () => (await connectionsOf(r)) === 1, 5000, 'one connection left')
    reply(w, held[0], 200, 'late')
    await clients[0].waitFor(2)
    await eventually(async () => (await r.queueStats('app')).served === 4, 5000, '4 served')
    expect((await r.queueStats('app')).workers[0]).toMatchObject({ served: 4, inFlight: 0 })
  })
})
