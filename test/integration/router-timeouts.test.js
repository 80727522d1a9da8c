'use strict'

// The routers' timers (HTTP.SYS's HTTP_TIMEOUT_LIMIT_INFO) with small values, on both
// routers, the JS hub (src/hub, since removed) and the native one (router/, issue 25): what
// hub-timeouts.test.js held beyond what router-black-box.test.js already asks of both
// (keepAlive, headers, body and drain timeouts): the queue timeout, per queue too, and
// options refused. Both check them on a 1 s clock, so a 1000 ms timeout fires between 1
// and 2 s later: the tests allow for that and check the opposite case (no timeout) too.

const { startWorker, reply, RawClient } = require('../helpers/hub-harness')
const { ROUTERS } = require('../helpers/routers')

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(ROUTERS)('%s: timeouts', (name, start) => {
  let hub
  const clients = []

  function client (p) {
    const c = new RawClient(p)
    clients.push(c)
    return c
  }

  beforeAll(async () => {
    hub = await start({ keepAliveTimeout: 1000, headersTimeout: 1000, bodyTimeout: 1000, drainTimeout: 1000, queueTimeout: 1000 })
  })

  afterAll(async () => {
    for (const c of clients) c.close()
    await hub.close()
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
    expect((await hub.queueStats('nobody')).waiting).toBe(0)
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

  test('a per-queue queueTimeout overrides the router\'s; 0 waits for ever', async () => {
    const { ports: [p] } = await hub.createQueue('patient', { urls: ['http://+:0/'], queueTimeout: 0 })
    const c = client(p)
    await c.connected
    c.write('GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n\r\n')
    await sleep(2500)
    expect(c.responses).toHaveLength(0)
    expect((await hub.queueStats('patient')).waiting).toBe(1)
  })

  test('bad timeout options are refused', async () => {
    await expect(start({ queueTimeout: -1 })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG_VALUE' })
    await expect(start({ bodyTimeout: 'soon' })).rejects.toMatchObject({ code: 'ERR_INVALID_ARG_VALUE' })
  })
})
