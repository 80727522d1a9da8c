'use strict'

// Black-box tests of the native router (router/, issue 25), which the JS hub (src/hub)
// passed too until it was removed: started with the options the hub had, workers attached
// through the same hub client, and clients on raw sockets. Ported from hub-routing,
// hub-bad-input, hub-queueing and hub-timeouts: routing by prefix, the router's own
// answers (400, 404, 413, 431, 505), queueing and 503, the timeouts, pipelining order
// (RFC 9112 9.3.2), and what a worker's death does to its requests.

const path = require('node:path')
const { fork } = require('node:child_process')
const { startWorker, reply, request, RawClient, until } = require('../helpers/hub-harness')
const { startNativeRouter } = require('../helpers/native-router')

jest.setTimeout(30000)

const CHILD = path.join(__dirname, '..', 'helpers', 'hub-child-worker.js')

// Polls an async condition (the native router's stats come over its control channel).
async function eventually (fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

const ROUTERS = [
  ['the native router', startNativeRouter]
]

describe.each(ROUTERS)('%s', (name, start) => {
  const workers = []
  const routers = []
  const clients = []
  const children = []

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close()
    for (const w of workers.splice(0)) w.att.close()
    for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    for (const r of routers.splice(0)) await r.close()
  })

  async function router (opts) {
    const r = await start(opts)
    routers.push(r)
    return r
  }

  async function worker (r, opts) {
    const w = await startWorker(r, opts)
    workers.push(w)
    return w
  }

  async function client (port) {
    const c = new RawClient(port)
    clients.push(c)
    await c.connected
    return c
  }

  describe('routing', () => {
    test('two queues share one port, each request on one connection goes to the longest matching prefix', async () => {
      const r = await router()
      const port = (await r.createQueue('site', { urls: ['http://+:0/'] })).ports[0]
      await r.createQueue('api', { urls: [`http://+:${port}/api/`] })
      const site = await worker(r, { queue: 'site', handle: (req, body, w) => reply(w, req, 200, `site ${req.url}`) })
      const api = await worker(r, { queue: 'api', handle: (req, body, w) => reply(w, req, 200, `api ${req.url}`) })
      const c = await client(port)
      const paths = ['/api/a?x=1', '/b', '/API/c', '/apix']
      for (let i = 0; i < paths.length; i++) {
        c.write(`GET ${paths[i]} HTTP/1.1\r\nHost: localhost\r\n\r\n`)
        await c.waitFor(i + 1)
      }
      expect(c.responses.map((x) => x.body.toString())).toEqual(['api /api/a?x=1', 'site /b', 'api /API/c', 'site /apix'])
      // both apps saw the one client connection
      const seen = [...api.requests, ...site.requests]
      expect(new Set(seen.map((x) => x.remotePort))).toEqual(new Set([c.socket.localPort]))
      expect(new Set(seen.map((x) => x.connectionId)).size).toBe(1)
      expect(c.ended).toBe(false)
    })

    test('a path no prefix covers is 404; a Host no prefix serves is 400 Invalid Hostname; a bad escape is 400 Invalid URL', async () => {
      const r = await router()
      const port = (await r.createQueue('named', { urls: ['http://example.test:0/only/'] })).ports[0]
      const w = await worker(r, { queue: 'named', handle: (req, body, x) => reply(x, req, 200, 'named') })
      const c = await client(port)
      c.write('GET /elsewhere HTTP/1.1\r\nHost: example.test\r\n\r\n' +
        'GET /only/x HTTP/1.1\r\nHost: other.test\r\n\r\n' +
        'GET /x%zz HTTP/1.1\r\nHost: other.test\r\n\r\n' +
        'GET /only/x HTTP/1.1\r\nHost: EXAMPLE.test\r\n\r\n' +
        `GET /only/y HTTP/1.1\r\nHost: example.test:${port}\r\n\r\n`)
      const res = await c.waitFor(5)
      expect(res.map((x) => x.status)).toEqual([404, 400, 400, 200, 200])
      expect(res[0].headers['content-type']).toBe('text/html; charset=us-ascii')
      expect(res[0].body.toString()).toMatch(/Not Found/)
      expect(res[0].body.toString()).toMatch(/HTTP Error 404. The requested resource is not found./)
      expect(res[1].body.toString()).toMatch(/Bad Request - Invalid Hostname/)
      expect(res[2].body.toString()).toMatch(/Bad Request - Invalid URL/)
      expect(w.requests.map((x) => x.url)).toEqual(['/only/x', '/only/y'])
    })

    test('the same prefix on a second queue is ERR_HTTPSYS_URL_CONFLICT; a bad prefix is ERR_HTTPSYS_BAD_PREFIX', async () => {
      const r = await router()
      const port = (await r.createQueue('a', { urls: ['http://+:0/api/'] })).ports[0]
      await expect(r.createQueue('b', { urls: [`http://+:${port}/API`] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_URL_CONFLICT', prefix: `http://+:${port}/API/` })
      await expect(r.createQueue('c', { urls: ['http://+/'] })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_BAD_PREFIX' })
    })
  })

  describe('the router answers bad input itself', () => {
    test.each([
      { what: 'a malformed request line', text: 'GARBAGE\r\n\r\n', status: 400 },
      { what: 'Content-Length with Transfer-Encoding', text: 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', status: 400 },
      { what: 'oversized headers', text: `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'x'.repeat(8000)}\r\n\r\n`, status: 431 },
      { what: 'an unsupported HTTP version', text: 'GET / HTTP/2.0\r\nHost: a\r\n\r\n', status: 505 },
      { what: 'HTTP/1.1 without Host', text: 'GET / HTTP/1.1\r\n\r\n', status: 400 },
      { what: 'a method node does not know', text: 'FOO / HTTP/1.1\r\nHost: a\r\n\r\n', status: 400 },
      { what: 'CONNECT', text: 'CONNECT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello', status: 400 },
      { what: 'a Content-Length over the queue\'s body limit', text: 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world', status: 413 }
    ])('$what -> $status, connection closed, no worker sees it', async ({ text, status }) => {
      const r = await router({ maxHeaderSize: 4096 })
      const port = (await r.createQueue('app', { urls: ['http://+:0/'], maxBodySize: 10 })).ports[0]
      const w = await worker(r, { queue: 'app', handle: (req, body, x) => reply(x, req, 200, 'ok') })
      const c = await client(port)
      c.write(text)
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(status)
      expect(res.headers.connection).toBe('close')
      await c.waitClosed()
      expect(w.requests).toHaveLength(0)
    })

    test('a bad request after good ones: the good ones are answered first, in order', async () => {
      const r = await router()
      const port = (await r.createQueue('app', { urls: ['http://+:0/'] })).ports[0]
      const w = await worker(r, { queue: 'app', handle: (req, body, x) => reply(x, req, 200, 'ok') })
      const c = await client(port)
      c.write('GET /one HTTP/1.1\r\nHost: a\r\n\r\nGET /two HTTP/1.1\r\nHost: a\r\n\r\nBAD\r\n\r\n')
      const res = await c.waitFor(3)
      expect(res.map((x) => x.status)).toEqual([200, 200, 400])
      await c.waitClosed()
      expect(w.requests.map((x) => x.url)).toEqual(['/one', '/two'])
    })

    test('a malformed chunk after the head was dispatched: the worker gets an abort, the client 400', async () => {
      const r = await router()
      const port = (await r.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
      const w = await worker(r, { queue: 'q', handle: (req, body, y) => reply(y, req, 200, 'ok') })
      const c = await client(port)
      c.write('POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')
      await until(() => w.requests.length === 1, 2000, 'dispatched')
      c.write('zz\r\n')
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(400)
      await c.waitClosed()
      await until(() => w.aborted.length === 1, 2000, 'abort at the worker')
      expect(w.aborted).toEqual([w.requests[0].id])
    })

    // node's test-http-chunked-smuggling.js: the head and a malformed chunk line in one
    // read, a request smuggled behind. node emits 'request' for the head before it
    // parses the body; its socketOnError then writes 400 only if the response in
    // flight has not sent its headers, and destroys the socket. The router waits for the
    // worker's ACK of the head (its handlers ran) to know.
    const SMUGGLE = 'GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2;\nxx\r\n4c\r\n0\r\n\r\n' +
      'GET /admin HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'

    test('a malformed chunk in the head\'s read, the app answering at once: its answer goes out, no 400, the connection closes, as node\'s', async () => {
      const r = await router()
      const port = (await r.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
      const w = await worker(r, { queue: 'q', onRequest: (req, x) => reply(x, req, 200, 'hello world') })
      await request(port, { path: '/ready' }) // the worker's first ACK is in: it takes requests
      const c = await client(port)
      c.write(SMUGGLE)
      await c.waitClosed()
      expect(c.responses.map((x) => x.status)).toEqual([200])
      expect(c.responses[0].body.toString()).toBe('hello world')
      expect(w.requests.map((x) => x.url)).toEqual(['/ready', '/'])
    })

    test('a malformed chunk in the head\'s read, the app not answering: the worker gets the request and its abort, the client 400', async () => {
      const r = await router()
      const port = (await r.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
      const w = await worker(r, { queue: 'q', onRequest: (req, x) => { if (req.url === '/ready') reply(x, req, 200, 'ok') } })
      await request(port, { path: '/ready' })
      const c = await client(port)
      c.write(SMUGGLE)
      await c.waitClosed()
      expect(c.responses.map((x) => x.status)).toEqual([400])
      await until(() => w.aborted.length === 1, 2000, 'abort at the worker')
      expect(w.requests.map((x) => x.url)).toEqual(['/ready', '/'])
      expect(w.aborted).toEqual([w.requests[1].id])
    })

    test('a malformed chunk of a request no worker has taken yet: 400 at once, and no app ever sees it', async () => {
      const r = await router()
      const port = (await r.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
      const c = await client(port)
      c.write(SMUGGLE)
      await c.waitClosed()
      expect(c.responses.map((x) => x.status)).toEqual([400])
      const w = await worker(r, { queue: 'q', onRequest: (req, x) => reply(x, req, 200, 'late') })
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(w.requests).toEqual([])
    })

    test('a chunked body that grows past the limit: the app\'s request is aborted, the client gets 413', async () => {
      const r = await router()
      const port = (await r.createQueue('q', { urls: ['http://+:0/'], maxBodySize: 8 })).ports[0]
      const w = await worker(r, { queue: 'q', autoRead: true, handle: (req, body, y) => reply(y, req, 200, 'ok') })
      const c = await client(port)
      c.write('POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')
      await until(() => w.requests.length === 1, 2000, 'dispatched')
      c.write('5\r\nworld\r\n')
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(413)
      await until(() => w.aborted.length === 1, 2000, 'abort at the worker')
    })
  })

  describe('queueing', () => {
    test('requests wait while no worker is attached and are served in order once one attaches', async () => {
      const r = await router()
      const port = (await r.createQueue('later', { urls: ['http://+:0/'] })).ports[0]
      const pending = Promise.all(Array.from({ length: 20 }, (_, i) => request(port, { path: `/r${i}` })))
      await eventually(async () => (await r.queueStats('later')).waiting === 20, 5000, '20 waiting requests')
      await worker(r, { queue: 'later', handle: (req, body, w) => reply(w, req, 200, req.url) })
      const results = await pending
      expect(results.map((x) => x.body.toString())).toEqual(Array.from({ length: 20 }, (_, i) => `/r${i}`))
    })

    test('a full queue answers 503 with Retry-After; the waiting ones are served later', async () => {
      const r = await router()
      const port = (await r.createQueue('tiny', { urls: ['http://+:0/'], queueLength: 2 })).ports[0]
      const waiting = [request(port, { path: '/1' }), request(port, { path: '/2' })]
      await eventually(async () => (await r.queueStats('tiny')).waiting === 2, 5000, 'two waiting')
      const res = await request(port, { path: '/3' })
      expect(res.status).toBe(503)
      expect(res.headers['retry-after']).toBe('1')
      expect(res.body.toString()).toMatch(/The request queue is full/)
      await worker(r, { queue: 'tiny', handle: (req, body, w) => reply(w, req, 200, 'ok') })
      expect((await Promise.all(waiting)).map((x) => x.status)).toEqual([200, 200])
    })

    test('a request no worker takes within queueTimeout gets 503', async () => {
      const r = await router({ queueTimeout: 500 })
      const port = (await r.createQueue('slow', { urls: ['http://+:0/'] })).ports[0]
      const started = Date.now()
      const res = await request(port)
      expect(res.status).toBe(503)
      expect(res.body.toString()).toMatch(/No application instance took the request in time/)
      expect(Date.now() - started).toBeGreaterThanOrEqual(500)
    })

    test('two workers on one queue both get requests', async () => {
      const r = await router()
      const port = (await r.createQueue('pair', { urls: ['http://+:0/'] })).ports[0]
      const a = await worker(r, { queue: 'pair', handle: (req, body, w) => setTimeout(() => reply(w, req, 200, 'a'), 5) })
      const b = await worker(r, { queue: 'pair', handle: (req, body, w) => setTimeout(() => reply(w, req, 200, 'b'), 5) })
      // a worker takes requests once its first ACK is in (wire-protocol.md "Lifecycle")
      await new Promise((resolve) => setTimeout(resolve, 50))
      const results = await Promise.all(Array.from({ length: 40 }, () => request(port)))
      expect(results.every((x) => x.status === 200)).toBe(true)
      expect(a.requests.length).toBeGreaterThan(5)
      expect(b.requests.length).toBeGreaterThan(5)
      await eventually(async () => (await r.queueStats('pair')).served === 40, 2000, '40 served')
    })

    test('a worker killed mid-request: that request gets 502; one it never acknowledged goes to the next worker', async () => {
      const r = await router()
      const port = (await r.createQueue('crash', { urls: ['http://+:0/'] })).ports[0]
      const child = fork(CHILD, [r.socketPath, 'crash'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
      children.push(child)
      const seen = []
      child.on('message', (m) => seen.push(m))
      await until(() => seen.some((m) => m.type === 'attached'), 10000, 'child attached')
      const hung = request(port, { path: '/hang' })
      await until(() => seen.some((m) => m.url === '/hang'), 5000, 'child received /hang')
      await eventually(async () => (await r.queueStats('crash')).inFlight === 1, 2000, 'in flight')
      await new Promise((resolve) => setTimeout(resolve, 50))
      child.kill('SIGKILL')
      expect((await hung).status).toBe(502)

      const mute = await startWorker(r, { queue: 'crash', onRequest: () => { throw new Error('never delivered') } })
      mute.att.socket.pause() // reads nothing: its REQUEST frames stay unacknowledged
      const pending = Promise.all([request(port, { path: '/x1' }), request(port, { path: '/x2' })])
      await eventually(async () => (await r.queueStats('crash')).inFlight === 2, 5000, 'dispatched to the mute worker')
      mute.att.socket.destroy()
      await worker(r, { queue: 'crash', handle: (req, body, w) => reply(w, req, 200, `got ${req.url}`) })
      expect((await pending).map((x) => [x.status, x.body.toString()])).toEqual([[200, 'got /x1'], [200, 'got /x2']])
    })
  })

  // HTTP.SYS's timers, checked on a 1 s clock by both routers: a 1000 ms timeout fires
  // between 1 and 2 s later
  describe('timeouts', () => {
    const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
    let r
    let port
    let w

    beforeEach(async () => {
      r = await router({ keepAliveTimeout: 1000, headersTimeout: 1000, bodyTimeout: 1000, drainTimeout: 1000 })
      port = (await r.createQueue('app', { urls: ['http://+:0/'] })).ports[0]
      w = await worker(r, {
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

    test('keepAliveTimeout: an idle keep-alive connection is closed; before that it is reused', async () => {
      const c = await client(port)
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
      const partial = await client(port)
      const silent = await client(port)
      partial.write('GET /slowloris HTTP/1.1\r\nHost: a\r\n')
      const t0 = Date.now()
      await Promise.all([partial.waitClosed(4000), silent.waitClosed(4000)])
      expect(Date.now() - t0).toBeGreaterThanOrEqual(900)
      expect(w.requests).toHaveLength(0)
    })

    test('bodyTimeout: a body that stops arriving resets the connection and aborts the request at the worker', async () => {
      const c = await client(port)
      c.write('POST /stall HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n12345')
      await until(() => w.requests.some((x) => x.url === '/stall'), 2000, 'the request at the worker')
      const id = w.requests.find((x) => x.url === '/stall').id
      await c.waitClosed(4000)
      await until(() => w.aborted.includes(id), 2000, 'the abort at the worker')
      expect(c.responses).toHaveLength(0)
    })

    test('bodyTimeout is the gap between pieces: a body that keeps trickling in is not cut', async () => {
      const c = await client(port)
      c.write('POST /trickle HTTP/1.1\r\nHost: a\r\nContent-Length: 8\r\n\r\n')
      for (let i = 0; i < 8; i++) {
        await sleep(350) // 2.8 s in all, well past the 1 s timeout
        c.write('x')
      }
      const [res] = await c.waitFor(1)
      expect(res.body.toString()).toBe('got 8')
    })

    test('a body the app is not reading yet is not the client\'s fault: no timeout while the router holds it back', async () => {
      const c = await client(port)
      const size = 300 * 1024 // far beyond the initial window: the router stops reading
      c.write(`POST /lazy HTTP/1.1\r\nHost: a\r\nContent-Length: ${size}\r\n\r\n`)
      c.write(Buffer.alloc(size, 'z'))
      await until(() => w.requests.some((x) => x.url === '/lazy'), 2000, 'the request at the worker')
      const req = w.requests.find((x) => x.url === '/lazy')
      await sleep(2500)
      expect(c.ended).toBe(false)
      expect(w.aborted).not.toContain(req.id)
      await until(() => {
        w.att.readBody(req.id)
        return (w.received.get(req.id) || 0) >= size
      }, 5000, 'the whole body at the worker')
      reply(w, req, 200, 'read it')
      const [res] = await c.waitFor(1)
      expect(res.body.toString()).toBe('read it')
    })

    test('drainTimeout: after an early answer, the unread rest of the body must arrive in time', async () => {
      const c = await client(port)
      c.write('POST /early HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\nabc')
      const [res] = await c.waitFor(1)
      expect(res.body.toString()).toBe('early')
      const t0 = Date.now()
      const trickle = setInterval(() => { if (!c.ended) c.write('x') }, 200)
      try {
        await c.waitClosed(4000)
      } finally {
        clearInterval(trickle)
      }
      expect(Date.now() - t0).toBeGreaterThanOrEqual(900)
    })
  })

  describe('pipelining', () => {
    test('pipelined requests are answered in order even when the first is slower', async () => {
      const r = await router()
      const port = (await r.createQueue('pipe', { urls: ['http://+:0/'] })).ports[0]
      await worker(r, { queue: 'pipe', handle: (req, body, w) => setTimeout(() => reply(w, req, 200, `answer ${req.url}`), req.url === '/slow' ? 150 : 0) })
      const c = await client(port)
      c.write('GET /slow HTTP/1.1\r\nHost: a\r\n\r\nGET /quick1 HTTP/1.1\r\nHost: a\r\n\r\nGET /quick2 HTTP/1.1\r\nHost: a\r\n\r\n')
      const res = await c.waitFor(3)
      expect(res.map((x) => x.body.toString())).toEqual(['answer /slow', 'answer /quick1', 'answer /quick2'])
    })

    // RFC 9112 9.3.2: in parallel only when every pipelined request is safe
    test.each([
      { what: 'safe requests behind a slow one reach the app at once', first: 'GET /slow', second: 'GET /next', waits: false },
      { what: 'a request behind an unsafe one reaches the app only once that one is answered', first: 'POST /slow', second: 'GET /next', waits: true },
      { what: 'an unsafe request behind a safe one reaches the app only once that one is answered', first: 'GET /slow', second: 'DELETE /next', waits: true }
    ])('$what', async ({ first, second, waits }) => {
      const r = await router()
      const port = (await r.createQueue('order', { urls: ['http://+:0/'] })).ports[0]
      const events = []
      await worker(r, {
        queue: 'order',
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
      const c = await client(port)
      c.write(`${first} HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc${second} HTTP/1.1\r\nHost: a\r\n\r\n`)
      const res = await c.waitFor(2)
      expect(res.map((x) => x.body.toString())).toEqual(['slow', 'next'])
      expect(events).toEqual(waits
        ? ['request /slow', 'answered /slow', 'request /next']
        : ['request /slow', 'request /next', 'answered /slow'])
    })

    test('pipelined requests then FIN: all answered in order, only the last says close', async () => {
      const r = await router()
      const port = (await r.createQueue('fin', { urls: ['http://+:0/'] })).ports[0]
      // /2 is answered a moment later (within the router's finGrace, 100 ms): the rule is
      // about a response that starts after the router read the FIN, which comes in a read
      // of its own after the requests' (an answer written before that cannot say close)
      await worker(r, { queue: 'fin', handle: (req, body, w) => req.url === '/2' ? setTimeout(() => reply(w, req, 200, req.url), 30) : reply(w, req, 200, req.url) })
      const c = await client(port)
      c.socket.end('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n')
      const res = await c.waitFor(2)
      expect(res.map((x) => [x.body.toString(), x.headers.connection])).toEqual([['/1', undefined], ['/2', 'close']])
      await c.waitClosed()
    })
  })
})
