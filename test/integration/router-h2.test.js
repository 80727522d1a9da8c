'use strict'

// HTTP/2 on the native router (router/internal/h2, issue 25; the JS hub, src/hub, ran it
// too until it was removed), as router-black-box.test.js holds it. Ported from
// hub-tls-rules.test.js's h2 part (the router answers each stream itself: 400, 431,
// 413, 503, 400 Invalid Hostname, 404; no app sees it and the session serves on) and
// hub-tls.test.js's h2 cases (what the app sees of a stream, the body timeout, a
// connection nghttp2 ended, streamed and interim responses, uploads, trailers, many
// streams) and hub-h2-memory.test.js's held-bytes budget (a client that opens many streams and never
// reads makes the router hold about 1 MiB a connection, not a response window per
// stream; issue 23), with the router's resident memory under 4 such clients (from
// /proc, Linux). The JS hub's internal counts were checked on it until it was removed;
// what the worker was let send is checked.

const fs = require('node:fs')
const path = require('node:path')
const tls = require('node:tls')
const crypto = require('node:crypto')
const http2 = require('node:http2')
const { spawn } = require('node:child_process')
const { startWorker, reply, until, socketPath } = require('../helpers/hub-harness')
const { startNativeRouter } = require('../helpers/native-router')
const { makeCerts } = require('../helpers/tls-certs')
const { h2connect, h2, closeSession } = require('../helpers/tls-clients')
const { freePort } = require('../helpers/httpsys-process')
const hubClient = require('../../src/queue/hub-client')
const { RESPONSE_WINDOW, GRANTED_WINDOW_START } = require('../../src/wire/protocol')
// the router's held-response budget (router/internal/conn heldBudget)
const HELD_BUDGET = 4 * RESPONSE_WINDOW
const { RESPONSE_MORE } = require('../../src/wire/contract')

jest.setTimeout(60000)

const MB = 1024 * 1024
const STREAMS = 100 // SETTINGS_MAX_CONCURRENT_STREAMS of both routers

let certs
beforeAll(() => { certs = makeCerts() })
afterAll(() => certs.cleanup())

const ROUTERS = [
  ['the native router', startNativeRouter]
]

// Polls an async condition (the native router's stats come over its control channel).
async function eventually (fn, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** An h2 session whose streams start with a zero window: nothing is sent to it until it raises the window. */
function stalledSession (port) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, settings: { initialWindowSize: 0 } })
    session.once('connect', () => {
      session.removeListener('error', reject)
      session.on('error', () => {})
      resolve(session)
    })
    session.once('error', reject)
  })
}

/** A stream's body and status, once it closes. */
function fetchStream (session, p) {
  return new Promise((resolve) => {
    const r = session.request({ ':path': p })
    const chunks = []
    let status = 0
    r.on('response', (h) => { status = h[':status'] })
    r.on('data', (c) => chunks.push(c))
    r.on('error', () => {})
    r.on('close', () => resolve({ status, body: Buffer.concat(chunks), stream: r }))
  })
}

/** Resolves once fn() has returned the same value for `quiet` ms. */
async function settled (fn, quiet = 400) {
  let last = fn()
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, quiet))
    const now = fn()
    if (now === last) return now
    last = now
  }
}

/** Client connections open in either router. */
async function connections (r) {
  return r.conns !== undefined ? r.conns.size : (await r.stats()).connections
}

function h2Frame (type, flags, stream, payload = Buffer.alloc(0)) {
  const h = Buffer.alloc(9)
  h.writeUIntBE(payload.length, 0, 3)
  h[3] = type
  h[4] = flags
  h.writeUInt32BE(stream, 5)
  return Buffer.concat([h, payload])
}

function hpackLiterals (pairs) {
  return Buffer.concat(pairs.map(([n, v]) => Buffer.concat([Buffer.from([0, n.length]), Buffer.from(n), Buffer.from([v.length]), Buffer.from(v)])))
}

const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')

describe.each(ROUTERS)('%s', (name, start) => {
  // hub-tls.test.js "h2: the app sees HTTP/2.0 ..."
  test('h2: the app sees HTTP/2.0, :authority as Host, no pseudo-headers, cookies joined; no connection-specific field goes back', async () => {
    const port = await freePort()
    const r = await start({ tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key }] })
    await r.createQueue('app', { urls: [`https://+:${port}/`] })
    const w = await startWorker(r, {
      queue: 'app',
      handle: (req, body, x) => reply(x, req, 200, JSON.stringify({ v: `${req.httpVersionMajor}.${req.httpVersionMinor}`, url: req.url, alpn: req.tls && req.tls.alpnProtocol, rawHeaders: req.rawHeaders }), ['Connection', 'keep-alive', 'X-App', '1'])
    })
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, servername: 'localhost' })
    session.on('error', () => {})
    try {
      const res = await h2(session, { ':path': '/h2?q', ':authority': `localhost:${port}`, cookie: ['x=1', 'y=2'] })
      expect(res.status).toBe(200)
      const seen = JSON.parse(res.body)
      expect(seen).toMatchObject({ v: '2.0', url: '/h2?q', alpn: 'h2' })
      const names = seen.rawHeaders.filter((_, i) => i % 2 === 0)
      expect(names.some((n) => n.startsWith(':'))).toBe(false)
      expect(seen.rawHeaders.slice(0, 2)).toEqual(['host', `localhost:${port}`])
      expect(seen.rawHeaders[seen.rawHeaders.indexOf('cookie') + 1]).toBe('x=1; y=2')
      // RFC 9113 8.2.2: the worker's Connection field is dropped, its others kept
      expect(res.headers.connection).toBeUndefined()
      expect(res.headers['x-app']).toBe('1')
      const bad = await h2(session, { ':path': '/', ':method': 'PATCHX', ':authority': `localhost:${port}` })
      expect(bad.status).toBe(400)
    } finally {
      session.destroy()
      w.att.close()
      await r.close()
    }
  })

  test('a worker\'s response head on h2: names in lower case, repeats next to their first, connection-specific fields dropped, the worker\'s order otherwise', async () => {
    const port = await freePort()
    const r = await start({ tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key }] })
    await r.createQueue('app', { urls: [`https://+:${port}/`] })
    const w = await startWorker(r, {
      queue: 'app',
      onRequest: (req, x) => x.att.respond(req.id, 200, 'OK', ['X-First', '1', 'Set-Cookie', 'a=1', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked', 'X-Second', '2', 'Set-Cookie', 'b=2', 'Content-Length', '2', 'Upgrade', 'h2c'], 'ok', 0)
    })
    const session = await h2connect(port)
    try {
      const res = await h2(session, { ':path': '/' })
      expect(res.body.toString()).toBe('ok')
      expect(Object.keys(res.headers)).toEqual([':status', 'x-first', 'set-cookie', 'x-second', 'content-length', 'date'])
      expect(res.headers['set-cookie']).toEqual(['a=1', 'b=2'])
    } finally {
      await closeSession(session)
      w.att.close()
      await r.close()
    }
  })

  test('a response head node\'s http2 refuses (a single-value field twice, a TE other than trailers): the stream is reset INTERNAL_ERROR, the session serves on', async () => {
    const port = await freePort()
    const r = await start({ tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key }] })
    await r.createQueue('app', { urls: [`https://+:${port}/`] })
    const heads = {
      '/twice': ['Content-Type', 'text/plain', 'Content-Type', 'text/html', 'Content-Length', '2'],
      '/te': ['TE', 'gzip', 'Content-Length', '2'],
      '/fine': ['Content-Length', '2']
    }
    const w = await startWorker(r, { queue: 'app', onRequest: (req, x) => x.att.respond(req.id, 200, 'OK', heads[req.url], 'ok', 0) })
    const session = await h2connect(port)
    try {
      for (const p of ['/twice', '/te']) {
        const res = await fetchStream(session, p)
        expect(res.status).toBe(0) // no response head
        expect(res.stream.rstCode).toBe(http2.constants.NGHTTP2_INTERNAL_ERROR)
      }
      const fine = await h2(session, { ':path': '/fine' })
      expect(fine.status).toBe(200)
      expect(fine.body.toString()).toBe('ok')
    } finally {
      await closeSession(session)
      w.att.close()
      await r.close()
    }
  })

  // hub-tls.test.js "h2 timeouts"
  describe('h2 timeouts', () => {
    let r
    let port
    let w

    beforeAll(async () => {
      port = await freePort()
      r = await start({ bodyTimeout: 1500, tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key }] })
      await r.createQueue('slow', { urls: [`https://+:${port}/`] })
      // answers after 8 s: every request below is still in flight when its case is decided
      w = await startWorker(r, { queue: 'slow', onRequest: (req, x) => { setTimeout(() => reply(x, req, 200, 'late'), 8000).unref() } })
    })

    afterAll(async () => {
      w.att.close()
      await r.close()
    })

    test('a request body that stops arriving is reset after body_timeout, and the app\'s request aborted; the connection goes on', async () => {
      const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
      session.on('error', () => {})
      try {
        const aborted = w.aborted.length
        const stream = session.request({ ':method': 'POST', ':path': '/upload', 'content-length': '100' })
        stream.on('error', () => {})
        stream.write(Buffer.alloc(10))
        const t0 = Date.now()
        const code = await new Promise((resolve) => stream.on('close', () => resolve(stream.rstCode)))
        expect(code).toBe(http2.constants.NGHTTP2_CANCEL)
        expect(Date.now() - t0).toBeLessThan(6000)
        await until(() => w.aborted.length === aborted + 1, 2000, 'the app\'s request aborted')
        // the same connection still takes requests
        const next = session.request({ ':path': '/after' })
        next.on('error', () => {})
        next.end()
        await until(() => w.requests.some((x) => x.url === '/after'), 2000, 'a request on the same connection')
        next.close()
      } finally {
        session.destroy()
      }
    }, 15000)

    test('a connection ended by a connection error with a stream in flight is gone once the client is', async () => {
      const before = await connections(r)
      const s = await new Promise((resolve, reject) => {
        const socket = tls.connect({ port, host: '127.0.0.1', ALPNProtocols: ['h2'], rejectUnauthorized: false })
        socket.once('secureConnect', () => resolve(socket))
        socket.once('error', reject)
      })
      s.on('error', () => {})
      s.resume()
      s.write(Buffer.concat([
        H2_PREFACE,
        h2Frame(4, 0, 0), // SETTINGS
        h2Frame(1, 0x5, 1, hpackLiterals([[':method', 'GET'], [':path', '/slow'], [':scheme', 'https'], [':authority', `localhost:${port}`]]))
      ]))
      await until(() => w.requests.some((x) => x.url === '/slow'), 3000, 'the request at the app')
      // DATA on a stream the client already half-closed: a connection error (GOAWAY STREAM_CLOSED)
      s.write(h2Frame(0, 0x1, 1, Buffer.from('late')))
      await new Promise((resolve) => setTimeout(resolve, 200))
      s.destroy()
      // (the hub learns it only from an unanswered PING: nghttp2 stopped reading)
      await eventually(async () => (await connections(r)) <= before, 9000, 'the connection dropped')
    }, 15000)
  })

  // hub-tls.test.js "h2 bodies and streams": the certificate from the app at attach
  describe('h2 bodies and streams', () => {
    let r
    let port
    let w

    beforeAll(async () => {
      r = await start({ maxBodySize: 8 * 1024 * 1024 })
      const pending = new Map()
      w = await hubClient.attach({
        socketPath: r.socketPath,
        urls: ['https://127.0.0.1:0/'],
        tls: { key: fs.readFileSync(certs.localhost.key), cert: certs.read(certs.localhost.cert) },
        handlers: {
          onRequest (req) {
            if (req.url.startsWith('/hints')) {
              w.writeInformational(req.id, 103, 'Early Hints', ['Link', '</a.css>; rel=preload'])
              return setTimeout(() => w.respond(req.id, 200, '', ['Content-Length', '2'], 'ok', 0), 10)
            }
            if (req.url.startsWith('/stream')) {
              // a streamed response: head, then pieces, as src/http sends one for h2 (no framing)
              w.respond(req.id, 200, '', ['Content-Type', 'text/plain'], 'part0 ', 1)
              let i = 1
              const t = setInterval(() => {
                const last = i === 5
                w.sendBody(req.id, Buffer.from(`part${i++} `), last ? 0 : 1)
                if (last) clearInterval(t)
              }, 5)
              return
            }
            if (!req.hasBody) return w.respond(req.id, 200, '', ['Content-Length', '2'], 'ok', 0)
            pending.set(req.id, { n: 0, hash: crypto.createHash('sha256') })
            w.readBody(req.id)
          },
          onBody (id, chunk) {
            const p = pending.get(id)
            p.n += chunk.length
            p.hash.update(chunk)
            w.readBody(id)
          },
          onBodyEnd (id, trailers) {
            const p = pending.get(id)
            pending.delete(id)
            const out = `${p.n} ${p.hash.digest('hex')}` + (trailers ? ` ${JSON.stringify(trailers)}` : '')
            w.respond(id, 200, '', ['Content-Length', String(out.length)], out, 0)
          },
          onAbort () {},
          onDrain () {},
          onClose () {}
        }
      })
      port = w.info.ports[0]
    })

    afterAll(async () => {
      w.close()
      await r.close()
    })

    function connectTo () {
      const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
      session.on('error', () => {})
      return session
    }

    test('a streamed response body arrives in order', async () => {
      const session = connectTo()
      try {
        const res = await h2(session, { ':path': '/stream' })
        expect(res.status).toBe(200)
        expect(res.body.toString()).toBe('part0 part1 part2 part3 part4 part5 ')
      } finally {
        session.close()
      }
    })

    test('an interim response (103 Early Hints) goes out as an informational HEADERS frame before the response', async () => {
      const session = connectTo()
      try {
        const infos = []
        const stream = session.request({ ':path': '/hints' })
        stream.on('headers', (headers) => infos.push([headers[':status'], headers.link]))
        const status = await new Promise((resolve) => stream.on('response', (h) => resolve(h[':status'])))
        stream.resume()
        await new Promise((resolve) => stream.on('end', resolve))
        expect(infos).toEqual([[103, '</a.css>; rel=preload']])
        expect(status).toBe(200)
      } finally {
        session.close()
      }
    })

    test('a large upload arrives whole (flow control through the stream); over the limit, 413 and the upload stopped', async () => {
      const body = crypto.randomBytes(6 * 1024 * 1024)
      const session = connectTo()
      try {
        const res = await h2(session, { ':path': '/up', ':method': 'POST' }, body)
        expect(res.body.toString()).toBe(`${body.length} ${crypto.createHash('sha256').update(body).digest('hex')}`)
        // over the limit: 413 by Content-Length, and the upload is stopped (RST_STREAM
        // NO_ERROR after the response, RFC 9113 8.1)
        const tooBig = await new Promise((resolve, reject) => {
          const s = session.request({ ':path': '/up', ':method': 'POST', 'content-length': String(9 * 1024 * 1024) })
          s.write(Buffer.alloc(1024))
          let status = 0
          s.on('response', (h) => { status = h[':status'] })
          s.on('error', reject)
          s.on('close', () => resolve({ status, rstCode: s.rstCode }))
          s.resume()
        })
        expect(tooBig).toEqual({ status: 413, rstCode: http2.constants.NGHTTP2_NO_ERROR })
      } finally {
        session.close()
      }
    })

    test('a request\'s trailers (a trailing HEADERS block) reach the app with the end of its body', async () => {
      const session = connectTo()
      try {
        const body = await new Promise((resolve, reject) => {
          const s = session.request({ ':path': '/up', ':method': 'POST' }, { waitForTrailers: true })
          s.on('wantTrailers', () => s.sendTrailers({ 'x-checksum': 'c0ffee', 'x-rows': '3' }))
          const chunks = []
          s.on('data', (c) => chunks.push(c))
          s.on('end', () => resolve(Buffer.concat(chunks).toString()))
          s.on('error', reject)
          s.end('abc')
        })
        const [n, , trailers] = body.split(' ')
        expect(n).toBe('3')
        expect(JSON.parse(trailers)).toEqual(['x-checksum', 'c0ffee', 'x-rows', '3'])
      } finally {
        session.close()
      }
    })

    test('many concurrent streams on one connection', async () => {
      const session = connectTo()
      try {
        const all = await Promise.all(Array.from({ length: 200 }, (_, i) =>
          i % 2 ? h2(session, { ':path': `/n${i}` }) : h2(session, { ':path': `/p${i}`, ':method': 'POST' }, Buffer.alloc(10000 + i))))
        all.forEach((res, i) => {
          expect(res.status).toBe(200)
          if (i % 2) expect(res.body.toString()).toBe('ok')
          else expect(res.body.toString().split(' ')[0]).toBe(String(10000 + i))
        })
      } finally {
        session.close()
      }
    })
  })

  // hub-tls-rules.test.js "h2: the router answers each stream"
  describe('h2: the router answers each stream, no app sees it, the connection serves on', () => {
    // the body limit of the `small` app, and the router's header limit
    const LIMIT = 1000
    const MAX_HEADER = 4096
    let L
    const sessions = []

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

    // port: / app, /small/ small (bodies up to LIMIT), /full/ full (no instance; one
    // request may wait), /slow/ slow (no instance; a request waits 1 s at most);
    // named: example.test /only/ named (no other host on that port)
    beforeAll(async () => {
      const port = await freePort()
      const named = await freePort()
      const pair = { cert: certs.localhost.cert, key: certs.localhost.key }
      const r = await start({ maxHeaderSize: MAX_HEADER, tls: [{ port, ...pair }, { port: named, ...pair }] })
      await r.createQueue('app', { urls: [`https://+:${port}/`] })
      await r.createQueue('small', { urls: [`https://+:${port}/small/`], maxBodySize: LIMIT })
      await r.createQueue('full', { urls: [`https://+:${port}/full/`], queueLength: 1 })
      await r.createQueue('slow', { urls: [`https://+:${port}/slow/`], queueTimeout: 1000 })
      await r.createQueue('named', { urls: [`https://example.test:${named}/only/`] })
      const workers = { app: await echoWorker(r, 'app'), small: await echoWorker(r, 'small'), named: await echoWorker(r, 'named') }
      L = { r, port, named, workers, seen: () => Object.values(workers).reduce((n, w) => n + w.requests.length, 0) }
    })

    afterAll(async () => {
      for (const s of sessions) s.destroy()
      for (const w of Object.values(L.workers)) w.att.close()
      await L.r.close()
    })

    async function open (port = L.port, servername) {
      const s = await h2connect(port, { servername })
      sessions.push(s)
      expect(s.alpnProtocol).toBe('h2')
      return s
    }

    /** The session still serves: a good request on it is answered by the app. */
    async function stillServes (session, url = '/still') {
      const res = await h2(session, { ':path': url })
      expect(res.status).toBe(200)
      expect(JSON.parse(res.body)).toMatchObject({ queue: 'app', url })
    }

    test.each([
      { name: 'a method node does not know', headers: { ':method': 'FOO', ':path': '/' }, status: 400 },
      { name: 'a lower-case method', headers: { ':method': 'post', ':path': '/' }, status: 400 },
      { name: 'a target with a bad percent escape', headers: { ':path': '/x%zz' }, status: 400 },
      // both sent (node's client drops :authority when it is not given and host is)
      { name: 'a Host field that is not the :authority', headers: { ':path': '/', ':authority': 'example.test', host: 'other.test' }, status: 400 },
      { name: 'a header above the header limit', headers: { ':path': '/', 'x-big': 'x'.repeat(MAX_HEADER + 100) }, status: 431 },
      { name: 'many headers above the limit together', headers: { ':path': '/', ...Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`x-many-${i}`, '0123456789'])) }, status: 431 }
    ])('$name: $status, and the session serves on', async ({ headers, status }) => {
      const before = L.seen()
      const session = await open()
      const res = await h2(session, headers)
      expect(res.status).toBe(status)
      // the router's page, its fields in the hub's order
      expect(Object.keys(res.headers)).toEqual([':status', 'content-type', 'server', 'date', 'content-length'])
      expect(res.headers['content-type']).toBe('text/html; charset=us-ascii')
      expect(res.headers['content-length']).toBe(String(res.body.length))
      expect(L.seen()).toBe(before)
      await stillServes(session)
    })

    test('a body at the limit is served', async () => {
      const session = await open()
      const res = await h2(session, { ':method': 'POST', ':path': '/small/at', 'content-length': String(LIMIT) }, Buffer.alloc(LIMIT, 98))
      expect(res.status).toBe(200)
      expect(JSON.parse(res.body)).toEqual({ queue: 'small', url: '/small/at', bytes: LIMIT })
    })

    test('content-length above the limit: 413, the upload stopped (RST_STREAM NO_ERROR), the app never sees it', async () => {
      const small = L.workers.small
      const before = small.requests.length
      const session = await open()
      const res = await h2(session, { ':method': 'POST', ':path': '/small/big', 'content-length': String(LIMIT + 1) }, Buffer.alloc(LIMIT + 1, 98))
      expect(res.status).toBe(413)
      expect(res.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR)
      expect(small.requests.length).toBe(before)
      await stillServes(session)
    })

    test('a streamed body (no content-length) growing above the limit: 413; the app had the head, hears the abort, never the end', async () => {
      const small = L.workers.small
      const before = small.requests.length
      const session = await open()
      const stream = session.request({ ':method': 'POST', ':path': '/small/stream' })
      let status = 0
      stream.on('response', (h) => { status = h[':status'] })
      stream.on('error', () => {})
      stream.resume()
      const closed = new Promise((resolve) => stream.on('close', resolve))
      stream.write(Buffer.alloc(LIMIT, 98))
      await until(() => small.requests.length === before + 1, 5000, 'the head at the app')
      const { id } = small.requests[before]
      await until(() => small.received.get(id) === LIMIT, 5000, 'the first LIMIT bytes at the app')
      stream.write(Buffer.alloc(1, 98))
      await closed
      expect(status).toBe(413)
      expect(stream.rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR)
      await until(() => small.aborted.includes(id), 5000, 'the abort at the app')
      expect(small.answered).not.toContain('/small/stream')
      await stillServes(session)
    })

    test('a full queue: 503 with retry-after, the session serves on; the app gets only the request that waited', async () => {
      const session = await open()
      const waits = h2(session, { ':path': '/full/waits' })
      await eventually(async () => (await L.r.queueStats('full')).waiting === 1, 5000, 'one waiting request')
      const res = await h2(session, { ':path': '/full/refused' })
      expect(res.status).toBe(503)
      expect(Object.keys(res.headers)).toEqual([':status', 'content-type', 'server', 'date', 'content-length', 'retry-after'])
      expect(res.headers['retry-after']).toBe('1')
      await stillServes(session, '/after-503')
      const full = await echoWorker(L.r, 'full')
      try {
        expect((await waits).status).toBe(200)
        expect(full.requests.map((r) => r.url)).toEqual(['/full/waits'])
      } finally {
        full.att.close()
      }
    })

    test('a queue timeout: 503 with retry-after, the session serves on; the app never gets the expired request', async () => {
      const session = await open()
      const res = await h2(session, { ':path': '/slow/expires' })
      expect(res.status).toBe(503)
      expect(res.headers['retry-after']).toBe('1')
      expect(res.body.toString()).toMatch(/No application instance took the request in time/)
      await stillServes(session, '/after-timeout')
      const slow = await echoWorker(L.r, 'slow')
      try {
        const ok = await h2(session, { ':path': '/slow/in-time' })
        expect(JSON.parse(ok.body)).toMatchObject({ queue: 'slow', url: '/slow/in-time' })
        expect(slow.requests.map((r) => r.url)).toEqual(['/slow/in-time'])
      } finally {
        slow.att.close()
      }
    })

    test('a host-specific prefix: an unknown :authority is 400 Invalid Hostname, an unknown path 404, on one session', async () => {
      const named = L.workers.named
      const before = named.requests.length
      const session = await open(L.named, 'example.test')
      const bad = await h2(session, { ':path': '/only/x', ':authority': `other.test:${L.named}` })
      expect(bad.status).toBe(400)
      expect(bad.body.toString()).toMatch(/Bad Request - Invalid Hostname/)
      const missing = await h2(session, { ':path': '/elsewhere', ':authority': `example.test:${L.named}` })
      expect(missing.status).toBe(404)
      expect(missing.body.toString()).toMatch(/Not Found/)
      expect(named.requests.length).toBe(before)
      const ok = await h2(session, { ':path': '/only/x', ':authority': `example.test:${L.named}` })
      expect(JSON.parse(ok.body)).toMatchObject({ queue: 'named', url: '/only/x' })
      expect(named.requests.map((r) => r.url).slice(before)).toEqual(['/only/x'])
    })
  })

  // hub-h2-memory.test.js "the h2 held-bytes budget, step by step"
  describe('the h2 held-bytes budget, step by step', () => {
    const SIZE = 2 * RESPONSE_WINDOW // each response outgrows the window
    const WHOLE = {
      '/whole/buffer': Buffer.alloc(200 * 1024, 5),
      '/whole/big': Buffer.alloc(3 * MB, 6), // larger than a RES_BODY piece (1 MiB)
      '/whole/string': '\u00e9'.repeat(40 * 1024) // 80 KB of utf8 in fewer characters
    }
    let r
    let port
    let w
    let refused
    const sent = new Map()

    beforeAll(async () => {
      port = await freePort()
      r = await start({ tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key }] })
      await r.createQueue('stream', { urls: [`https://+:${port}/`] })
      refused = new Set()
      // a worker that streams each response with backpressure, as src/http does; the body
      // of /<n> is the byte n % 256, so a byte from another stream would show
      const pump = (x, id) => {
        const fill = Number(x.byId.get(id).url.slice(1)) & 255
        for (;;) {
          const at = sent.get(id)
          if (at >= SIZE) return
          const n = Math.min(64 * 1024, SIZE - at)
          sent.set(id, at + n)
          if (!x.att.sendBody(id, Buffer.alloc(n, fill), at + n < SIZE ? RESPONSE_MORE : 0)) {
            refused.add(id)
            return
          }
        }
      }
      w = await startWorker(r, {
        queue: 'stream',
        onRequest (req, x) {
          const whole = WHOLE[req.url]
          if (whole !== undefined) {
            // one respond() with the whole body: the worker sends it as it is granted
            x.att.respond(req.id, 200, 'OK', ['Content-Length', String(Buffer.byteLength(whole))], whole, 0)
            return
          }
          sent.set(req.id, 0)
          x.att.respond(req.id, 200, 'OK', ['Content-Length', String(SIZE)], null, RESPONSE_MORE)
          pump(x, req.id)
        },
        onDrain: (id, x) => pump(x, id)
      })
    })

    afterAll(async () => {
      w.att.close()
      await r.close()
    })

    /** The hub's own count of what its h2 streams buffer (the native router keeps it to itself). */
    function buffered () {
      let n = 0
      for (const c of r.conns) if (c.open instanceof Set) for (const sc of c.open) n += sc.stream.writableLength
      return n
    }

    test(`a client that opens ${STREAMS} streams and does not read makes the router hold about the budget, not a window per stream; once it reads, every stream arrives whole`, async () => {
      const before = w.att.socket.bytesWritten
      const session = await stalledSession(port)
      try {
        const streams = []
        for (let i = 0; i < STREAMS; i++) streams.push(fetchStream(session, `/${i}`))
        await until(() => w.requests.length === STREAMS, 10000, `${STREAMS} requests at the worker`)
        // what the worker pushed into the router (the client took nothing: the router holds it)
        const pushed = await settled(() => w.att.socket.bytesWritten) - before
        console.log(`${name}: h2, ${STREAMS} streams, zero window: the worker sent the router ${(pushed / MB).toFixed(2)} MB (budget ${HELD_BUDGET / MB} MiB)`)
        expect(pushed).toBeLessThan(HELD_BUDGET + STREAMS * (GRANTED_WINDOW_START + 1024))
        expect(pushed).toBeLessThan(2 * MB) // (a window per stream: 25 MB)
        expect(refused.size).toBe(STREAMS) // every app waits in its window (res.write() false)
        // the client reads now: every stream gets every byte
        session.settings({ initialWindowSize: 65535 })
        session.setLocalWindowSize(8 * MB)
        const res = await Promise.all(streams)
        for (let i = 0; i < STREAMS; i++) {
          expect(res[i].status).toBe(200)
          expect(res[i].body.length).toBe(SIZE)
          expect(res[i].body.every((b) => b === (i & 255))).toBe(true)
        }
        // and the budget is whole again for the connection's next streams
        if (r.conns !== undefined) await until(() => [...r.conns].every((c) => !(c.charged > 0)), 2000, 'the budget back to 0')
        const next = await fetchStream(session, '/7')
        expect(next.body.length).toBe(SIZE)
      } finally {
        session.destroy()
      }
    })

    test('a response larger than a stream\'s first window, given to respond() whole, arrives whole', async () => {
      const session = await h2connect(port)
      try {
        const res = await Promise.all(Object.keys(WHOLE).map((p) => h2(session, { ':path': p })))
        Object.values(WHOLE).forEach((body, i) => {
          expect(res[i].status).toBe(200)
          expect(res[i].body.equals(Buffer.from(body))).toBe(true)
        })
      } finally {
        await closeSession(session)
      }
    })

    test('a stream still gets its response while the other streams of its connection hold the budget', async () => {
      // node's client stops granting a paused stream window once it holds 64 KiB
      // (RFC 9113 6.9): the router holds the rest of each of these responses. (Their
      // bytes count against the connection's window too: a large one leaves room for the last.)
      const session = await h2connect(port)
      session.setLocalWindowSize(16 * MB)
      const paused = []
      try {
        const begin = w.requests.length
        const before = w.att.socket.bytesWritten
        for (let i = 0; i < STREAMS - 1; i++) {
          const s = session.request({ ':path': `/${i}` })
          s.on('error', () => {})
          s.pause()
          paused.push(s)
        }
        await until(() => w.requests.length === begin + STREAMS - 1, 10000, 'the paused streams at the worker')
        const pushed = await settled(() => w.att.socket.bytesWritten) - before
        if (r.conns !== undefined) expect(buffered()).toBeGreaterThan(HELD_BUDGET / 2) // the hub holds (most of) its budget for them
        // what the router let the worker send: the client's windows and the budget, not 25 MB
        expect(pushed).toBeLessThan(16 * MB + HELD_BUDGET + STREAMS * (GRANTED_WINDOW_START + 1024))
        const res = await h2(session, { ':path': '/77' })
        expect(res.status).toBe(200)
        expect(res.body.length).toBe(SIZE)
        expect(res.body.every((b) => b === 77)).toBe(true)
      } finally {
        session.destroy() // (a graceful close would wait for the paused streams)
      }
    }, 30000)
  })
})

// hub-h2-memory.test.js "hub memory under h2 clients that never read": the router in a
// process of its own, its resident set measured; 10 MB responses streamed by an
// unmodified app (hub-memory-app.js) with backpressure
const MEASURED = [
  ['the native router', async (port) => {
    const r = await startNativeRouter({ tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key }] })
    await r.createQueue('big', { urls: [`https://+:${port}/`] })
    const pid = r.proc.child.pid
    return {
      socketPath: r.socketPath,
      async stats () {
        const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
        return { rss: Number(m[1]) * 1024, inFlight: (await r.queueStats('big')).inFlight }
      },
      close: () => r.close()
    }
  }]
]

const onLinux = process.platform === 'linux' ? describe : describe.skip

onLinux.each(MEASURED)('%s: memory under h2 clients that never read', (name, startMeasured) => {
  const APP = path.join(__dirname, '..', 'helpers', 'hub-memory-app.js')
  const REGISTER = path.join(__dirname, '..', '..', 'src', 'register.js')
  const CLIENTS = 4
  let router
  let app
  let port
  const sessions = []

  beforeAll(async () => {
    port = await freePort()
    const sock = socketPath()
    router = await startMeasured(port, sock)
    app = spawn(process.execPath, ['--require', REGISTER, APP], {
      env: { ...process.env, HTTPSYS_HUB: router.socketPath || sock, HTTPSYS_QUEUE: 'big', HTTPSYS_BACKEND: 'hub' },
      stdio: ['ignore', 'inherit', 'inherit']
    })
    // the request waits in the queue until the app has attached
    const session = await h2connect(port)
    try {
      expect((await h2(session, { ':path': '/ping' })).status).toBe(200)
    } finally {
      await closeSession(session)
    }
  })

  afterAll(async () => {
    for (const s of sessions) s.destroy()
    if (app) app.kill('SIGKILL')
    if (router) await router.close()
  })

  test(`${CLIENTS} h2 clients x ${STREAMS} streams of 10 MB that never read grow the router by the budget, not by 25 MB each`, async () => {
    // warm up: the pools and buffers an h2 download uses are in the baseline
    const warm = await h2connect(port)
    try {
      expect((await h2(warm, { ':path': '/warm' })).body.length).toBe(10 * MB)
    } finally {
      await closeSession(warm)
    }
    const before = (await router.stats()).rss
    for (let i = 0; i < CLIENTS; i++) {
      const s = await stalledSession(port)
      sessions.push(s)
      for (let j = 0; j < STREAMS; j++) s.request({ ':path': '/big' }).on('error', () => {})
    }
    await eventually(async () => (await router.stats()).inFlight === CLIENTS * STREAMS, 20000, 'every stream at the app')
    // until the router stops growing: 2 s without 1 MB more
    let peak = before
    let stableSince = Date.now()
    const deadline = Date.now() + 30000
    while (Date.now() < deadline && Date.now() - stableSince < 2000) {
      await new Promise((resolve) => setTimeout(resolve, 250))
      const stats = await router.stats()
      const rss = stats.rss
      // the hub's own count of what its h2 streams buffer (the native router keeps it to itself)
      if (stats.h2Buffered !== undefined) expect(stats.h2Buffered).toBeLessThan(CLIENTS * 2 * MB)
      if (rss > peak + MB) stableSince = Date.now()
      if (rss > peak) peak = rss
    }
    const grown = (peak - before) / MB
    console.log(`${name}: h2 rss before ${(before / MB).toFixed(1)} MB, peak ${(peak / MB).toFixed(1)} MB, grown ${grown.toFixed(1)} MB`)
    expect(grown).toBeLessThan(40) // (a window per stream: over 100 MB)
    // the router still serves everyone else
    for (const s of sessions.splice(0)) s.destroy()
    const session = await h2connect(port)
    try {
      expect((await h2(session, { ':path': '/ping' })).status).toBe(200)
    } finally {
      await closeSession(session)
    }
  })
})
