'use strict'

// The router's rejections hold the same over TLS (README "The router's rules": "These
// rules hold the same over TLS and HTTP/2"): a malformed request (400), a head above the
// header limit (431), a body above the app's limit (413, by Content-Length and
// streamed), a full queue and a queue timeout (503 with Retry-After), an unknown host on
// a host-specific prefix (400 Invalid Hostname) and a path no prefix covers (404). None
// of them reaches the app (but for a streamed body, whose size is known only as it
// arrives: the app has its head, then hears the abort, never its end), and an HTTP/1.1
// connection is closed or kept exactly as on plain http: each HTTP/1.1 test runs on a
// plain port first, as the reference, then over TLS, with raw bytes (tls.connect, no
// client library in between).
//
// On the native router (issue 25; the JS hub ran it too until it was removed):
// in-process workers (hub-harness.js) first; then the same rules under `httpsys start`
// with the config's `limits` and a real https app counting what it sees.
// The h2 half of the in-process rules is router-h2.test.js ("h2: the router answers each
// stream").

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const http2 = require('node:http2')
const { startWorker, reply, RawClient, until } = require('../helpers/hub-harness')
const { ROUTERS, eventually } = require('../helpers/routers')
const { freePort } = require('../helpers/httpsys-process')
const { makeCerts } = require('../helpers/tls-certs')
const { h2connect, h2 } = require('../helpers/tls-clients')
const { start, request, writeConfig, APPS } = require('../fixtures/apps/harness')
const { routerBin } = require('../helpers/native-router')

let certs
beforeAll(() => { certs = makeCerts() })
afterAll(() => certs.cleanup())

// the body limit of the `small` app, and the router's header limit
const LIMIT = 1000
const MAX_HEADER = 4096

/** A worker that answers what it got: its queue, url and body bytes; `answered` lists the urls it answered. */
async function echoWorker (r, queue) {
  const w = await startWorker(r, {
    queue,
    handle: (req, body, x) => {
      x.answered.push(req.url)
      reply(x, req, 200, JSON.stringify({ queue, url: req.url, bytes: body.length }))
    }
  })
  w.answered = []
  return w
}

/**
 * One router with the same routes on a plain or a TLS port:
 *   port   /        app    (answers)
 *          /small/  small  (answers; bodies up to LIMIT bytes)
 *          /full/   full   (no instance attached yet; one request may wait)
 *          /slow/   slow   (no instance attached yet; a request waits 1 s at most)
 *   named  example.test /only/  named (answers; no other host on that port)
 */
async function layout (startRouter, secure) {
  const port = await freePort()
  const named = await freePort()
  const scheme = secure ? 'https' : 'http'
  const pair = { cert: certs.localhost.cert, key: certs.localhost.key }
  const r = await startRouter({
    maxHeaderSize: MAX_HEADER,
    tls: secure ? [{ port, ...pair }, { port: named, ...pair }] : []
  })
  await r.createQueue('app', { urls: [`${scheme}://+:${port}/`] })
  await r.createQueue('small', { urls: [`${scheme}://+:${port}/small/`], maxBodySize: LIMIT })
  await r.createQueue('full', { urls: [`${scheme}://+:${port}/full/`], queueLength: 1 })
  await r.createQueue('slow', { urls: [`${scheme}://+:${port}/slow/`], queueTimeout: 1000 })
  await r.createQueue('named', { urls: [`${scheme}://example.test:${named}/only/`] })
  const workers = {
    app: await echoWorker(r, 'app'),
    small: await echoWorker(r, 'small'),
    named: await echoWorker(r, 'named')
  }
  return {
    r,
    port,
    named,
    workers,
    // every request any app of this router has received
    seen: () => Object.values(workers).reduce((n, w) => n + w.requests.length, 0),
    async close () {
      for (const w of Object.values(workers)) w.att.close()
      await r.close()
    }
  }
}

/**
 * A RawClient (hub-harness.js: splits what arrives into responses) over a plain TCP
 * connection or a TLS one that offers only http/1.1, so the bytes we write are exactly
 * the request the router parses.
 */
function wire (secure, port, servername) {
  return new RawClient(port, secure ? { tls: { servername, ALPNProtocols: ['http/1.1'] } } : {})
}

describe.each(ROUTERS)('%s', (name, startRouter) => {
  describe.each([
    ['plain http (the reference)', false],
    ['TLS', true]
  ])('HTTP/1.1 on %s: the router answers, no app sees it', (_, secure) => {
    let L
    const clients = []

    beforeAll(async () => { L = await layout(startRouter, secure) })
    afterAll(async () => {
      for (const c of clients) c.close()
      await L.close()
    })

    async function open (port = L.port, servername) {
      const c = wire(secure, port, servername)
      clients.push(c)
      await c.connected
      if (secure) expect(c.socket.alpnProtocol).toBe('http/1.1')
      return c
    }

    test.each([
      { name: 'a malformed request line', text: 'GARBAGE\r\n\r\n', status: 400 },
      { name: 'a header line without a colon', text: 'GET / HTTP/1.1\r\nHost: a\r\nNo colon here\r\n\r\n', status: 400 },
      { name: 'a space before a header name\'s colon', text: 'GET / HTTP/1.1\r\nHost : a\r\n\r\n', status: 400 },
      { name: 'Content-Length with Transfer-Encoding', text: 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', status: 400 },
      { name: 'a method node does not know', text: 'post / HTTP/1.1\r\nHost: a\r\n\r\n', status: 400 },
      { name: 'HTTP/1.1 without Host', text: 'GET / HTTP/1.1\r\n\r\n', status: 400 },
      { name: 'a header above the header limit', text: `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'x'.repeat(MAX_HEADER + 100)}\r\n\r\n`, status: 431 },
      { name: 'many headers above the limit together', text: `GET / HTTP/1.1\r\nHost: a\r\n${'X-Many: 0123456789\r\n'.repeat(300)}\r\n`, status: 431 }
    ])('$name: $status with Connection: close, the connection closed', async ({ text, status }) => {
      const before = L.seen()
      const c = await open()
      c.write(text)
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(status)
      expect(res.headers.connection).toBe('close')
      await c.waitClosed()
      expect(L.seen()).toBe(before)
    })

    test('a bad request after a good one on the same connection: the good one answered first, then 400 and close', async () => {
      const before = L.seen()
      const c = await open()
      c.write('GET /one HTTP/1.1\r\nHost: a\r\n\r\nGET /two HTTP/1.1\r\nHost : a\r\n\r\n')
      const res = await c.waitFor(2)
      expect(res.map((r) => r.status)).toEqual([200, 400])
      expect(JSON.parse(res[0].body)).toMatchObject({ queue: 'app', url: '/one' })
      await c.waitClosed()
      expect(L.seen()).toBe(before + 1)
    })

    test('a body at the limit is served, and the connection kept', async () => {
      const c = await open()
      c.write(`POST /small/at HTTP/1.1\r\nHost: a\r\nContent-Length: ${LIMIT}\r\n\r\n${'b'.repeat(LIMIT)}`)
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(200)
      expect(JSON.parse(res.body)).toEqual({ queue: 'small', url: '/small/at', bytes: LIMIT })
      expect(res.headers.connection).toBeUndefined()
      expect(c.ended).toBe(false)
    })

    test('Content-Length above the limit: 413 and close, and the app never sees it', async () => {
      const small = L.workers.small
      const before = small.requests.length
      const c = await open()
      c.write(`POST /small/big HTTP/1.1\r\nHost: a\r\nContent-Length: ${LIMIT + 1}\r\n\r\n${'b'.repeat(LIMIT + 1)}`)
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(413)
      expect(res.headers.connection).toBe('close')
      await c.waitClosed()
      expect(small.requests.length).toBe(before)
    })

    test('a chunked body growing above the limit: 413 and close; the app had the head, hears the abort, never the end', async () => {
      // A streamed body's size is known only as it arrives: its head went to the app
      // (as on HTTP.SYS, where the worker applies the limit, test/unit/queue/httpsys-backend.test.js),
      // which then hears the abort and never gets the end of the body or answers.
      const small = L.workers.small
      const before = small.requests.length
      const c = await open()
      c.write(`POST /small/stream HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n${LIMIT.toString(16)}\r\n${'b'.repeat(LIMIT)}\r\n`)
      await until(() => small.requests.length === before + 1, 5000, 'the head at the app')
      const { id } = small.requests[before]
      await until(() => small.received.get(id) === LIMIT, 5000, 'the first LIMIT bytes at the app')
      c.write('1\r\nb\r\n')
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(413)
      expect(res.headers.connection).toBe('close')
      await c.waitClosed()
      await until(() => small.aborted.includes(id), 5000, 'the abort at the app')
      expect(small.answered).not.toContain('/small/stream')
      expect(small.requests.length).toBe(before + 1)
    })

    test('a full queue: 503 with Retry-After, the connection kept and usable; the app gets only the request that waited', async () => {
      const waiter = await open()
      waiter.write('GET /full/waits HTTP/1.1\r\nHost: a\r\n\r\n')
      await eventually(async () => (await L.r.queueStats('full')).waiting === 1, 5000, 'one waiting request')
      const c = await open()
      c.write('GET /full/refused HTTP/1.1\r\nHost: a\r\n\r\n')
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(503)
      expect(res.headers['retry-after']).toBe('1')
      expect(res.headers.connection).toBeUndefined()
      c.write('GET /after-503 HTTP/1.1\r\nHost: a\r\n\r\n')
      const [, next] = await c.waitFor(2)
      expect(JSON.parse(next.body)).toMatchObject({ queue: 'app', url: '/after-503' })
      // the app comes up: what waited is served, what was refused never arrives
      const full = await echoWorker(L.r, 'full')
      try {
        const [served] = await waiter.waitFor(1)
        expect(served.status).toBe(200)
        expect(full.requests.map((r) => r.url)).toEqual(['/full/waits'])
      } finally {
        full.att.close()
      }
      expect(c.ended).toBe(false)
    })

    test('a queue timeout: 503 with Retry-After, the connection kept and usable; the app never gets the expired request', async () => {
      const c = await open()
      c.write('GET /slow/expires HTTP/1.1\r\nHost: a\r\n\r\n')
      const [res] = await c.waitFor(1, 15000)
      expect(res.status).toBe(503)
      expect(res.headers['retry-after']).toBe('1')
      expect(res.headers.connection).toBeUndefined()
      expect(res.body.toString()).toMatch(/No application instance took the request in time/)
      c.write('GET /after-timeout HTTP/1.1\r\nHost: a\r\n\r\n')
      const [, next] = await c.waitFor(2)
      expect(JSON.parse(next.body)).toMatchObject({ queue: 'app', url: '/after-timeout' })
      const slow = await echoWorker(L.r, 'slow')
      try {
        c.write('GET /slow/in-time HTTP/1.1\r\nHost: a\r\n\r\n')
        const [, , third] = await c.waitFor(3)
        expect(JSON.parse(third.body)).toMatchObject({ queue: 'slow', url: '/slow/in-time' })
        expect(slow.requests.map((r) => r.url)).toEqual(['/slow/in-time'])
      } finally {
        slow.att.close()
      }
    })

    test('a host-specific prefix: an unknown Host is 400 Invalid Hostname, an unknown path 404, on one kept connection', async () => {
      const named = L.workers.named
      const before = named.requests.length
      const c = await open(L.named, secure ? 'example.test' : undefined)
      c.write(`GET /only/x HTTP/1.1\r\nHost: other.test:${L.named}\r\n\r\n`)
      const [bad] = await c.waitFor(1)
      expect(bad.status).toBe(400)
      expect(bad.body.toString()).toMatch(/Bad Request - Invalid Hostname/)
      expect(bad.headers.connection).toBeUndefined()
      c.write(`GET /elsewhere HTTP/1.1\r\nHost: example.test:${L.named}\r\n\r\n`)
      const [, missing] = await c.waitFor(2)
      expect(missing.status).toBe(404)
      expect(missing.body.toString()).toMatch(/Not Found/)
      expect(named.requests.length).toBe(before)
      c.write(`GET /only/x HTTP/1.1\r\nHost: example.test:${L.named}\r\n\r\n`)
      const [, , ok] = await c.waitFor(3)
      expect(JSON.parse(ok.body)).toMatchObject({ queue: 'named', url: '/only/x' })
      expect(named.requests.map((r) => r.url).slice(before)).toEqual(['/only/x'])
      expect(c.ended).toBe(false)
    })
  })
})

// under the native router (router/, issue 25)
describe.each([
  ['the native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })]
])('under httpsys start with %s: the config\'s limits on a TLS port, and what a real https app counted', (_, routerEnv) => {
  const BODY_LIMIT = 1000 // limits.max_body_size
  let dir
  let run
  let port
  let metricsPort
  let hold
  const clients = []
  const sessions = []

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-tls-rules-'))
    port = await freePort()
    metricsPort = await freePort()
    hold = path.join(dir, 'listen-now')
    const file = writeConfig(dir, {
      // idle_timeout: the connection that got a 503 waits, idle, for the app to come up
      limits: { max_body_size: BODY_LIMIT, queue_length: 1, queue_timeout: '4s', idle_timeout: '60s' },
      metrics: { listen: `127.0.0.1:${metricsPort}` },
      tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key }],
      apps: [{ name: 'web', script: path.join(APPS, 'https-counter.js'), urls: [`https://+:${port}/`], env: { HOLD_FILE: hold } }]
    })
    run = start(['-c', file], { env: { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run'), ...routerEnv() } })
    // the queue and its port exist before the app's process starts
    await run.waitFor((r) => r.event === 'spawn')
    await run.waitFor((r) => r.event === 'metrics')
  })

  afterAll(async () => {
    for (const c of clients) c.close()
    for (const s of sessions) s.destroy()
    if (run) {
      run.signal('SIGINT')
      await run.exited
      await run.cleanup()
    }
    fs.rmSync(dir, { recursive: true, force: true })
  })

  async function open () {
    const c = wire(true, port)
    clients.push(c)
    await c.connected
    return c
  }

  async function session () {
    const s = await h2connect(port)
    sessions.push(s)
    return s
  }

  async function waiting () {
    const res = await request(metricsPort, { path: '/metrics' })
    const m = /^httpsys_queue_waiting\{app="web"\} (\d+)/m.exec(res.body)
    return m ? Number(m[1]) : -1
  }

  async function counted () {
    const s = await session()
    const res = await h2(s, { ':path': '/count' })
    expect(res.status).toBe(200)
    return JSON.parse(res.body)
  }

  /** Waits (5 s at most) until the app's handler has seen a request for url. */
  async function reaches (url) {
    const end = Date.now() + 5000
    while (!(await counted()).seen.includes(url)) {
      if (Date.now() > end) throw new Error(`${url} never reached the app`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  test('while the app starts: queue_length 1 full is 503 with Retry-After on HTTP/1.1 and h2, queue_timeout 503 too; the app sees neither', async () => {
    const waiter = await open()
    waiter.write('GET /waits HTTP/1.1\r\nHost: a\r\n\r\n')
    const end = Date.now() + 3000
    while (await waiting() !== 1 && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await waiting()).toBe(1)
    const c = await open()
    c.write('GET /refused HTTP/1.1\r\nHost: a\r\n\r\n')
    const [full] = await c.waitFor(1)
    expect(full.status).toBe(503)
    expect(full.headers['retry-after']).toBe('1')
    expect(full.headers.connection).toBeUndefined()
    const fullH2 = await h2(await session(), { ':path': '/refused-h2' })
    expect(fullH2.status).toBe(503)
    expect(fullH2.headers['retry-after']).toBe('1')
    // what waited expires (4 s, on a 1 s clock)
    const [expired] = await waiter.waitFor(1, 15000)
    expect(expired.status).toBe(503)
    expect(expired.headers['retry-after']).toBe('1')
    expect(expired.body.toString()).toMatch(/No application instance took the request in time/)

    fs.writeFileSync(hold, '')
    await run.waitFor((r) => r.event === 'ready', { timeout: 20000 })
    // the connection that got the 503 is served on, by the app
    c.write('GET /after-503 HTTP/1.1\r\nHost: a\r\n\r\n')
    const [, next] = await c.waitFor(2)
    expect(JSON.parse(next.body)).toMatchObject({ url: '/after-503', httpVersion: '1.1' })
    expect(await counted()).toEqual({ seen: ['/after-503'], ended: ['/after-503'], aborted: [] })
  })

  test('400 and 431 on HTTP/1.1 and h2, and limits.max_body_size: 413 by Content-Length; the app sees none of them', async () => {
    const before = await counted()
    const bad = [
      'GARBAGE\r\n\r\n',
      'GET / HTTP/1.1\r\nHost : a\r\n\r\n',
      `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'x'.repeat(17000)}\r\n\r\n`,
      `POST /big HTTP/1.1\r\nHost: a\r\nContent-Length: ${BODY_LIMIT + 1}\r\n\r\n${'b'.repeat(BODY_LIMIT + 1)}`
    ]
    const statuses = []
    for (const text of bad) {
      const c = await open()
      c.write(text)
      const [res] = await c.waitFor(1)
      expect(res.headers.connection).toBe('close')
      await c.waitClosed()
      statuses.push(res.status)
    }
    expect(statuses).toEqual([400, 400, 431, 413])
    const s = await session()
    const h2statuses = []
    h2statuses.push((await h2(s, { ':method': 'FOO', ':path': '/' })).status)
    h2statuses.push((await h2(s, { ':path': '/', 'x-big': 'x'.repeat(17000) })).status)
    h2statuses.push((await h2(s, { ':method': 'POST', ':path': '/big-h2', 'content-length': String(BODY_LIMIT + 1) }, Buffer.alloc(BODY_LIMIT + 1))).status)
    expect(h2statuses).toEqual([400, 431, 413])
    // at the limit, both are served
    const c = await open()
    c.write(`POST /at HTTP/1.1\r\nHost: a\r\nContent-Length: ${BODY_LIMIT}\r\n\r\n${'b'.repeat(BODY_LIMIT)}`)
    const [at] = await c.waitFor(1)
    expect(JSON.parse(at.body)).toMatchObject({ url: '/at', bytes: BODY_LIMIT })
    const atH2 = await h2(s, { ':method': 'POST', ':path': '/at-h2', 'content-length': String(BODY_LIMIT) }, Buffer.alloc(BODY_LIMIT))
    expect(JSON.parse(atH2.body)).toMatchObject({ url: '/at-h2', bytes: BODY_LIMIT, httpVersion: '2.0' })
    const after = await counted()
    expect(after.seen.slice(before.seen.length)).toEqual(['/at', '/at-h2'])
    expect(after.aborted).toEqual(before.aborted)
  })

  test('limits.max_body_size on a streamed body (chunked, h2 without content-length): 413; the app heard an aborted request, never its end', async () => {
    const before = await counted()
    const c = await open()
    c.write(`POST /stream HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n${BODY_LIMIT.toString(16)}\r\n${'b'.repeat(BODY_LIMIT)}\r\n`)
    // the head goes to the app before the body's size is known (as in the in-process tests above)
    await reaches('/stream')
    c.write('1\r\nb\r\n')
    const [res] = await c.waitFor(1)
    expect(res.status).toBe(413)
    expect(res.headers.connection).toBe('close')
    await c.waitClosed()

    const s = await session()
    const stream = s.request({ ':method': 'POST', ':path': '/stream-h2' })
    let status = 0
    stream.on('response', (h) => { status = h[':status'] })
    stream.on('error', () => {})
    stream.resume()
    const closed = new Promise((resolve) => stream.on('close', resolve))
    stream.write(Buffer.alloc(BODY_LIMIT))
    await reaches('/stream-h2')
    stream.write(Buffer.alloc(1))
    await closed
    expect(status).toBe(413)
    expect(stream.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR)

    // the app heard of both requests: each was aborted, and never ended
    let after
    const end = Date.now() + 5000
    do {
      after = await counted()
      if (after.aborted.length - before.aborted.length === 2) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    } while (Date.now() < end)
    expect(after.seen.slice(before.seen.length)).toEqual(['/stream', '/stream-h2'])
    expect(after.aborted.slice(before.aborted.length)).toEqual(['/stream', '/stream-h2'])
    expect(after.ended).toEqual(before.ended)
  })
})
