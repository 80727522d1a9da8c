'use strict'

// Routing by prefix on the native router (router/, issue 25; the JS hub, src/hub, was
// held to it too until it was removed): what hub-routing.test.js held beyond what
// router-black-box.test.js already asks (the percent escapes that are 400 Invalid URL, a conflict that binds
// nothing, a port another process holds, the errors of createQueue).

const net = require('node:net')
const { startWorker, reply, request, RawClient } = require('../helpers/hub-harness')
const { ROUTERS, queueNames } = require('../helpers/routers')

describe.each(ROUTERS)('%s: routing', (name, start) => {
  let hub
  let api
  let site
  let port
  const clients = []

  beforeAll(async () => {
    hub = await start()
    const info = await hub.createQueue('site', { urls: ['http://+:0/'] })
    port = info.ports[0]
    await hub.createQueue('api', { urls: [`http://+:${port}/api/`] })
    site = await startWorker(hub, { queue: 'site', handle: (req, body, w) => reply(w, req, 200, `site ${req.url}`) })
    api = await startWorker(hub, { queue: 'api', handle: (req, body, w) => reply(w, req, 200, `api ${req.url}`) })
  })

  afterAll(async () => {
    for (const c of clients) c.close()
    site.att.close()
    api.att.close()
    await hub.close()
  })

  test.each(['/x%zz', '/100%', '/a%4', '/api/%g0/x'])('a target with a bad percent escape (%s) gets 400 Invalid URL, not Invalid Hostname', async (target) => {
    const c = new RawClient(port)
    clients.push(c)
    await c.connected
    c.write(`GET ${target} HTTP/1.1\r\nHost: a\r\n\r\n`)
    const [res] = await c.waitFor(1)
    expect(res.status).toBe(400)
    expect(res.body.toString()).toMatch(/Bad Request - Invalid URL/)
    expect(res.body.toString()).toMatch(/HTTP Error 400. The request URL is invalid./)
    expect(site.requests.concat(api.requests).map((r) => r.url)).not.toContain(target)
  })

  test('the same prefix on a second queue is ERR_HTTPSYS_URL_CONFLICT and binds nothing', async () => {
    await expect(hub.createQueue('thief', { urls: [`http://+:${port}/api/`] }))
      .rejects.toMatchObject({ code: 'ERR_HTTPSYS_URL_CONFLICT', prefix: `http://+:${port}/api/` })
    expect(await queueNames(hub)).not.toContain('thief')
    // the original owner still serves
    expect((await request(port, { path: '/api/still' })).body.toString()).toBe('api /api/still')
  })

  test('a port another process holds is ERR_HTTPSYS_PORT_IN_USE naming the port', async () => {
    const other = net.createServer()
    await new Promise((resolve) => other.listen(0, '127.0.0.1', resolve))
    const taken = other.address().port
    try {
      const err = await hub.createQueue('late', { urls: [`http://+:${taken}/`] }).catch((e) => e)
      expect(err.code).toBe('ERR_HTTPSYS_PORT_IN_USE')
      expect(err.port).toBe(taken)
      expect(err.message).toContain(String(taken))
      if (process.platform === 'linux') expect(err.owner).toMatch(new RegExp(`pid ${process.pid} `))
      expect(await queueNames(hub)).not.toContain('late')
    } finally {
      await new Promise((resolve) => other.close(resolve))
    }
  })

  test('an https prefix on a plain http port is a conflict, bad prefixes are BAD_PREFIX', async () => {
    // a port serves http or https, not both (router-tls.test.js serves https)
    await expect(hub.createQueue('tls', { urls: [`https://+:${port}/secure/`] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_URL_CONFLICT' })
    expect(await queueNames(hub)).not.toContain('tls')
    await expect(hub.createQueue('bad', { urls: ['http://+/'] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_BAD_PREFIX' })
    await expect(hub.createQueue('site', { urls: [] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_QUEUE_EXISTS' })
  })
})
