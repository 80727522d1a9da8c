'use strict'

// The router's rules an app relies on without knowing it (README "The router's rules"),
// attacked through raw sockets: the hub must hand an app only methods node knows, the
// path it routed on, and the Host it routed by; and it must answer a client that
// half-closes after its requests. On the native router (router/, issue
// 25; the JS hub, src/hub, ran it too until it was removed).

const { startWorker, reply, RawClient, until } = require('../helpers/hub-harness')
const { ROUTERS } = require('../helpers/routers')

/** A worker that answers with what the app saw: method, url and Host header. */
function echo (hub, queue) {
  return startWorker(hub, {
    queue,
    handle: (req, body, w) => {
      let host = null
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        if (req.rawHeaders[i].toLowerCase() === 'host') host = req.rawHeaders[i + 1]
      }
      const answer = () => reply(w, req, 200, JSON.stringify({ app: queue, method: req.method, url: req.url, host }))
      // ?late: answered 30 ms on (within the router's finGrace, 100 ms), so the answer
      // starts after the router read a FIN sent with the request: the router reads it
      // in a read of its own, and an answer written before cannot say close
      if (req.url.endsWith('?late')) setTimeout(answer, 30)
      else answer()
    }
  })
}

describe.each(ROUTERS)('%s: the router\'s rules, from a raw socket', (name, start) => {
  let hub
  let port
  const workers = {}
  const clients = []

  beforeAll(async () => {
    hub = await start()
    port = (await hub.createQueue('site', { urls: ['http://+:0/'] })).ports[0]
    await hub.createQueue('api', { urls: [`http://+:${port}/api/`] })
    await hub.createQueue('admin', { urls: [`http://+:${port}/admin/`] })
    for (const q of ['site', 'api', 'admin']) workers[q] = await echo(hub, q)
  })

  afterAll(async () => {
    for (const c of clients) c.close()
    for (const w of Object.values(workers)) w.att.close()
    await hub.close()
  })

  async function exchange (text, n = 1) {
    const c = new RawClient(port)
    clients.push(c)
    await c.connected
    c.write(text)
    return { c, res: await c.waitFor(n) }
  }

  const seen = () => Object.values(workers).flatMap((w) => w.requests)

  describe('methods: node\'s http.METHODS, exactly', () => {
    // node 20 answers each of these 400 (checked with a raw socket against a plain
    // http.createServer); an app behind the hub must never see them: `post` would be
    // routed as POST by express while the app's `req.method === 'POST'` guard says no.
    test.each(['post', 'Get', 'FOO', 'BREW', 'GETX', 'PRI'])('%s /x is 400 with Connection: close, and no app sees it', async (method) => {
      const before = seen().length
      const { c, res: [res] } = await exchange(`${method} /admin/x HTTP/1.1\r\nHost: a\r\n\r\n`)
      expect(res.status).toBe(400)
      expect(res.headers.connection).toBe('close')
      await c.waitClosed()
      expect(seen().length).toBe(before)
    })

    test('a method node knows beyond the usual ones reaches the app as sent', async () => {
      const { res: [res] } = await exchange('PURGE /api/x HTTP/1.1\r\nHost: a\r\n\r\n')
      expect(JSON.parse(res.body)).toMatchObject({ app: 'api', method: 'PURGE' })
    })
  })

  describe('the path the app sees is the path the router routed on', () => {
    test.each([
      ['/api/../admin/x', '/admin/x'],
      ['/api/%2e%2e/admin/x', '/admin/x'],
      ['/api/%2E%2e/admin/x', '/admin/x'],
      ['/api\\..\\admin\\x', '/admin/x'],
      ['/%61dmin/x', '/admin/x'],
      ['/api/./../ADMIN/%78', '/ADMIN/x'],
      ['/admin/./x?next=/../y&a=%2e%2e', '/admin/x?next=/../y&a=%2e%2e'],
      ['/admin/a%2Fb/%7euser/c%20d', '/admin/a%2Fb/~user/c%20d'],
      ['/../../admin/x', '/admin/x'],
      ['/admin/x/..', '/admin/']
    ])('%s reaches admin as %s', async (target, url) => {
      const { res: [res] } = await exchange(`GET ${target} HTTP/1.1\r\nHost: a\r\n\r\n`)
      expect(res.status).toBe(200)
      expect(JSON.parse(res.body)).toMatchObject({ app: 'admin', url })
    })

    test('a target that stays outside a prefix is not given to its app, even as a look-alike', async () => {
      const { res: [res] } = await exchange('GET /api/..%2fadmin/x HTTP/1.1\r\nHost: a\r\n\r\n')
      // %2F is not a separator: the api app gets it, and sees exactly that
      expect(JSON.parse(res.body)).toMatchObject({ app: 'api', url: '/api/..%2fadmin/x' })
    })

    test('an ordinary path is handed over as it came (the fast path)', async () => {
      const { res: [res] } = await exchange('GET /api/Users/42.json?x=1 HTTP/1.1\r\nHost: a\r\n\r\n')
      expect(JSON.parse(res.body)).toMatchObject({ app: 'api', url: '/api/Users/42.json?x=1' })
    })
  })

  describe('absolute-form targets (RFC 9112 3.2.2)', () => {
    let named
    let namedPort
    const nw = {}

    beforeAll(async () => {
      named = await start()
      namedPort = (await named.createQueue('internal', { urls: ['http://internal.local:0/'] })).ports[0]
      await named.createQueue('public', { urls: [`http://evil.example:${namedPort}/`] })
      nw.internal = await echo(named, 'internal')
      nw.public = await echo(named, 'public')
    })

    afterAll(async () => {
      for (const w of Object.values(nw)) w.att.close()
      await named.close()
    })

    async function send (text) {
      const c = new RawClient(namedPort)
      clients.push(c)
      await c.connected
      c.write(text)
      return (await c.waitFor(1))[0]
    }

    test('the app routed by the target\'s host gets that host as Host, and an origin-form url', async () => {
      const res = await send('GET http://internal.local/reset?user=1 HTTP/1.1\r\nHost: evil.example\r\n\r\n')
      expect(res.status).toBe(200)
      expect(JSON.parse(res.body)).toEqual({ app: 'internal', method: 'GET', url: '/reset?user=1', host: 'internal.local' })
    })

    test('the port and path of the target are kept; dot segments resolved', async () => {
      const res = await send(`GET http://INTERNAL.local:${namedPort}/a/../b HTTP/1.1\r\nHost: evil.example\r\n\r\n`)
      expect(JSON.parse(res.body)).toMatchObject({ app: 'internal', url: '/b', host: `INTERNAL.local:${namedPort}` })
    })

    test('an empty path is /; HTTP/1.0 without a Host header gets one', async () => {
      const res = await send('GET http://internal.local HTTP/1.0\r\n\r\n')
      expect(JSON.parse(res.body)).toMatchObject({ app: 'internal', url: '/', host: 'internal.local' })
    })

    test.each([
      ['userinfo', 'http://evil.example@internal.local/x'],
      ['an empty host', 'http:///x'],
      ['a bad authority character', 'http://internal.local"/x']
    ])('%s in the target is 400 Invalid URL', async (_, target) => {
      const before = nw.internal.requests.length + nw.public.requests.length
      const res = await send(`GET ${target} HTTP/1.1\r\nHost: internal.local\r\n\r\n`)
      expect(res.status).toBe(400)
      expect(res.body.toString()).toMatch(/Invalid URL/)
      expect(nw.internal.requests.length + nw.public.requests.length).toBe(before)
    })
  })

  describe('a client that half-closes (FIN) after its requests', () => {
    test('a keep-alive request and FIN at once: answered, then the connection closes', async () => {
      const c = new RawClient(port)
      clients.push(c)
      await c.connected
      c.socket.end('GET /api/fin?late HTTP/1.1\r\nHost: a\r\n\r\n')
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(200)
      expect(JSON.parse(res.body)).toMatchObject({ app: 'api', url: '/api/fin?late' })
      expect(res.headers.connection).toBe('close')
      await c.waitClosed()
    })

    test('pipelined requests then FIN: all answered in order, only the last says close', async () => {
      const c = new RawClient(port)
      clients.push(c)
      await c.connected
      c.socket.end('GET /api/1 HTTP/1.1\r\nHost: a\r\n\r\nGET /admin/2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3?late HTTP/1.1\r\nHost: a\r\n\r\n')
      const res = await c.waitFor(3)
      expect(res.map((r) => JSON.parse(r.body).url)).toEqual(['/api/1', '/admin/2', '/3?late'])
      expect(res.map((r) => r.headers.connection)).toEqual([undefined, undefined, 'close'])
      await c.waitClosed()
    })

    test('a FIN with an answer still to come: the app hears the abort after the grace (node and HTTP.SYS abort on a FIN)', async () => {
      const slow = await start()
      const p = (await slow.createQueue('slow', { urls: ['http://+:0/'] })).ports[0]
      const timers = []
      const w = await startWorker(slow, { queue: 'slow', handle: (req, body, x) => timers.push(setTimeout(() => reply(x, req, 200, 'late'), 2000)) })
      try {
        const c = new RawClient(p)
        await c.connected
        const t0 = Date.now()
        c.socket.end('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
        await until(() => w.aborted.length === 1, 2000, 'the abort at the app')
        expect(Date.now() - t0).toBeGreaterThanOrEqual(90)
        await c.waitClosed()
        expect(c.responses).toHaveLength(0)
      } finally {
        for (const t of timers) clearTimeout(t)
        w.att.close()
        await slow.close()
      }
    })

    test('a FIN during a streamed answer that keeps flowing: not aborted while bytes flow', async () => {
      const hub = await start()
      const p = (await hub.createQueue('stream', { urls: ['http://+:0/'] })).ports[0]
      const timers = []
      const w = await startWorker(hub, {
        queue: 'stream',
        onRequest: (req, x) => {
          x.att.respond(req.id, 200, 'OK', ['Transfer-Encoding', 'chunked'], null, 1)
          let n = 0
          const t = setInterval(() => {
            if (++n < 8) return x.att.sendBody(req.id, Buffer.from('2\r\nab\r\n'), 1)
            clearInterval(t)
            x.att.sendBody(req.id, Buffer.from('0\r\n\r\n'), 0)
          }, 40) // each piece within the grace: 8 pieces take three times as long as it
          timers.push(t)
        }
      })
      try {
        const c = new RawClient(p)
        await c.connected
        c.socket.end('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
        const [res] = await c.waitFor(1, 5000)
        expect(res.body.toString()).toBe('ab'.repeat(7))
        expect(w.aborted).toEqual([])
      } finally {
        for (const t of timers) clearInterval(t)
        w.att.close()
        await hub.close()
      }
    })

    test('a client that closed for good (FIN, then gone): its app hears the abort once a write to it fails', async () => {
      const gone = await start()
      const p = (await gone.createQueue('gone', { urls: ['http://+:0/'] })).ports[0]
      const timers = []
      const w = await startWorker(gone, {
        queue: 'gone',
        onRequest: (req, x) => {
          x.att.respond(req.id, 200, 'OK', ['Transfer-Encoding', 'chunked'], null, 1)
          timers.push(setInterval(() => x.att.sendBody(req.id, Buffer.from('5\r\ntick\n\r\n'), 1), 30))
        }
      })
      try {
        const c = new RawClient(p)
        await c.connected
        c.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
        await until(() => w.requests.length === 1, 2000, 'the request')
        c.close() // a FIN; the client's kernel resets what arrives after it
        await until(() => w.aborted.length === 1, 3000, 'the abort at the app')
      } finally {
        for (const t of timers) clearInterval(t)
        w.att.close()
        await gone.close()
      }
    })

    test('more pipelined requests than the router reads at once, then FIN: the ones kept unread are answered too', async () => {
      const c = new RawClient(port)
      clients.push(c)
      await c.connected
      let text = ''
      for (let i = 0; i < 45; i++) text += `GET /api/p${i} HTTP/1.1\r\nHost: a\r\n\r\n`
      c.socket.end(text)
      const res = await c.waitFor(45)
      expect(res.map((r) => JSON.parse(r.body).url)).toEqual(Array.from({ length: 45 }, (_, i) => `/api/p${i}`))
      await c.waitClosed()
    })

    test('a body cut short after its request was answered: no 400, the connection just ends', async () => {
      const quick = await start()
      const p = (await quick.createQueue('quick', { urls: ['http://+:0/'] })).ports[0]
      const w = await startWorker(quick, { queue: 'quick', autoRead: false, onRequest: (req, x) => reply(x, req, 200, 'early') })
      try {
        const c = new RawClient(p)
        await c.connected
        c.write('POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc')
        const [res] = await c.waitFor(1)
        expect(res.body.toString()).toBe('early')
        c.socket.end()
        await c.waitClosed()
        expect(c.responses).toHaveLength(1)
      } finally {
        w.att.close()
        await quick.close()
      }
    })

    test('a request the FIN cut short: the ones before it are answered, then 400', async () => {
      const before = seen().length
      const c = new RawClient(port)
      clients.push(c)
      await c.connected
      c.socket.end('GET /api/whole HTTP/1.1\r\nHost: a\r\n\r\nGET /api/cut HTT')
      const res = await c.waitFor(2)
      expect(res.map((r) => r.status)).toEqual([200, 400])
      await c.waitClosed()
      expect(seen().length).toBe(before + 1)
    })

    test('a body the FIN cut short: its app hears the abort, the client gets 400', async () => {
      const c = new RawClient(port)
      clients.push(c)
      await c.connected
      const api = workers.api
      const aborted = api.aborted.length
      c.socket.end('POST /api/body HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nabc')
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(400)
      await c.waitClosed()
      await until(() => api.aborted.length === aborted + 1, 2000, 'the abort at the app')
    })
  })
})
