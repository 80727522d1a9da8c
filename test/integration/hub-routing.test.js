'use strict'

const net = require('node:net')
const { startHub, startWorker, reply, request, RawClient } = require('../helpers/hub-harness')

describe('hub routing', () => {
  let hub
  let api
  let site
  let port
  const clients = []

  beforeAll(async () => {
    hub = await startHub()
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

  test('two queues share one port, each request goes to the longest matching prefix', async () => {
    const a = await request(port, { path: '/api/users?x=1' })
    const b = await request(port, { path: '/index.html' })
    expect(a.status).toBe(200)
    expect(a.body.toString()).toBe('api /api/users?x=1')
    expect(b.body.toString()).toBe('site /index.html')
  })

  test('each request on ONE keep-alive connection is routed on its own', async () => {
    const c = new RawClient(port)
    clients.push(c)
    await c.connected
    const localPort = c.socket.localPort
    const paths = ['/api/a', '/b', '/api/c', '/d']
    for (let i = 0; i < paths.length; i++) {
      c.write(`GET ${paths[i]} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
      await c.waitFor(i + 1)
    }
    expect(c.responses.map((r) => r.body.toString())).toEqual(['api /api/a', 'site /b', 'api /api/c', 'site /d'])
    // Both workers saw the same client connection: same remote port, same connection id.
    const seen = [...api.requests.slice(-2), ...site.requests.slice(-2)]
    expect(new Set(seen.map((r) => r.remotePort))).toEqual(new Set([localPort]))
    expect(new Set(seen.map((r) => r.connectionId)).size).toBe(1)
    expect(c.ended).toBe(false)
  })

  test('a path no prefix covers gets the hub\'s 404, and no worker sees it', async () => {
    const only = await startHub()
    const info = await only.createQueue('only', { urls: ['http://+:0/only/'] })
    const w = await startWorker(only, { queue: 'only', handle: (req, body, x) => reply(x, req, 200, 'x') })
    try {
      const res = await request(info.ports[0], { path: '/elsewhere' })
      expect(res.status).toBe(404)
      expect(res.headers['content-type']).toMatch(/text\/html/)
      expect(res.body.toString()).toMatch(/Not Found/)
      expect(w.requests).toHaveLength(0)
    } finally {
      w.att.close()
      await only.close()
    }
  })

  test('a Host no prefix serves gets 400 Invalid Hostname', async () => {
    const named = await startHub()
    const info = await named.createQueue('named', { urls: ['http://example.test:0/'] })
    const w = await startWorker(named, { queue: 'named', handle: (req, body, x) => reply(x, req, 200, 'named') })
    try {
      const bad = await request(info.ports[0], { headers: { host: 'other.test' } })
      expect(bad.status).toBe(400)
      expect(bad.body.toString()).toMatch(/Bad Request - Invalid Hostname/)
      expect(w.requests).toHaveLength(0)
      const good = await request(info.ports[0], { headers: { host: `example.test:${info.ports[0]}` } })
      expect(good.status).toBe(200)
      expect(good.body.toString()).toBe('named')
    } finally {
      w.att.close()
      await named.close()
    }
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

  test('a bad URL is reported as such even when the host is unknown too; a good URL with an unknown host is the hostname', async () => {
    const named = await startHub()
    const info = await named.createQueue('named', { urls: ['http://example.test:0/'] })
    try {
      const c = new RawClient(info.ports[0])
      await c.connected
      c.write('GET /x%zz HTTP/1.1\r\nHost: other.test\r\n\r\nGET /x%41 HTTP/1.1\r\nHost: other.test\r\n\r\n')
      const [badUrl, badHost] = await c.waitFor(2)
      expect(badUrl.status).toBe(400)
      expect(badUrl.body.toString()).toMatch(/Bad Request - Invalid URL/)
      expect(badHost.status).toBe(400)
      expect(badHost.body.toString()).toMatch(/Bad Request - Invalid Hostname/)
      c.close()
    } finally {
      await named.close()
    }
  })

  test('the same prefix on a second queue is ERR_HTTPSYS_URL_CONFLICT and binds nothing', async () => {
    await expect(hub.createQueue('thief', { urls: [`http://+:${port}/api/`] }))
      .rejects.toMatchObject({ code: 'ERR_HTTPSYS_URL_CONFLICT', prefix: `http://+:${port}/api/` })
    expect(hub.queues()).not.toContain('thief')
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
      expect(hub.queues()).not.toContain('late')
    } finally {
      await new Promise((resolve) => other.close(resolve))
    }
  })

  test('an https prefix on a plain http port is a conflict, bad prefixes are BAD_PREFIX', async () => {
    // a port serves http or https, not both (test/integration/hub-tls.test.js serves https)
    await expect(hub.createQueue('tls', { urls: [`https://+:${port}/secure/`] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_URL_CONFLICT' })
    expect(hub.queues()).not.toContain('tls')
    await expect(hub.createQueue('bad', { urls: ['http://+/'] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_BAD_PREFIX' })
    await expect(hub.createQueue('site', { urls: [] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_QUEUE_EXISTS' })
  })
})
