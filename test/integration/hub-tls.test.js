'use strict'

// The hub terminates TLS (README "HTTPS and HTTP/2"): certificates from the config by
// SNI host or from the app, HTTP/1.1 and h2 by ALPN, the session on the wire, client
// certificates, reloading a certificate file, the router's rules on TLS, redirect_http.
// In-process hub and workers (hub-harness.js); real TLS clients.

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const tls = require('node:tls')
const https = require('node:https')
const http2 = require('node:http2')
const { startHub, startWorker, reply, request, until } = require('../helpers/hub-harness')
const { makeCerts } = require('../helpers/tls-certs')
const { httpsRequest, h2 } = require('../helpers/tls-clients')
const { freePort } = require('../helpers/httpsys-process')
const hubClient = require('../../src/queue/hub-client')

let certs
beforeAll(() => { certs = makeCerts() })
afterAll(() => certs.cleanup())

/** A TLS connection to the hub: { socket, cert (the server's), reused } once secure. */
function connect (port, { servername, ALPNProtocols, cert, key, session, maxVersion } = {}) {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ port, host: '127.0.0.1', servername, ALPNProtocols, cert, key, session, maxVersion, rejectUnauthorized: false })
    socket.once('secureConnect', () => resolve(socket))
    socket.once('error', reject)
  })
}

// one HTTPS request with node's client (no ALPN, so HTTP/1.1): { status, headers, body, peer }
const get = httpsRequest

/** Answers with what the worker saw: version, tls, headers. */
function echo (req, body, w) {
  const out = JSON.stringify({
    v: `${req.httpVersionMajor}.${req.httpVersionMinor}`,
    url: req.url,
    encrypted: req.encrypted,
    tls: req.tls && { ...req.tls, peerCertificate: req.tls.peerCertificate && req.tls.peerCertificate.length },
    rawHeaders: req.rawHeaders,
    bytes: body.length
  })
  reply(w, req, 200, out, ['X-Queue', w.name || ''])
}

describe('the hub terminates TLS', () => {
  let hub
  let port
  let site
  let a
  let b

  beforeAll(async () => {
    port = await freePort()
    hub = await startHub({
      maxHeaderSize: 4096,
      tls: [
        { port, cert: certs.localhost.cert, key: certs.localhost.key },
        { port, host: 'a.localhost', cert: certs.a.cert, key: certs.a.key },
        { port, host: 'b.localhost', cert: certs.read(certs.b.cert), key: certs.read(certs.b.key) }
      ]
    })
    // the weak wildcard: explicit hosts win over it (a strong one would hide them)
    await hub.createQueue('site', { urls: [`https://*:${port}/`] })
    await hub.createQueue('a', { urls: [`https://a.localhost:${port}/`] })
    await hub.createQueue('b', { urls: [`https://b.localhost:${port}/`] })
    site = await startWorker(hub, { queue: 'site', handle: echo })
    a = await startWorker(hub, { queue: 'a', handle: echo })
    b = await startWorker(hub, { queue: 'b', handle: echo })
    site.name = 'site'
    a.name = 'a'
    b.name = 'b'
  })

  afterAll(async () => {
    for (const w of [site, a, b]) w.att.close()
    await hub.close()
  })

  test('an https request reaches the app with the TLS session on the wire', async () => {
    const res = await get(port, { path: '/x?y=1' })
    expect(res.status).toBe(200)
    const seen = JSON.parse(res.body)
    expect(seen).toMatchObject({ v: '1.1', url: '/x?y=1', encrypted: true })
    expect(seen.tls).toMatchObject({ protocol: 'TLSv1.3', alpnProtocol: false, servername: null, authorized: false, peerCertificate: null })
    expect(seen.tls.cipher).toEqual({ name: expect.any(String), standardName: expect.any(String), version: 'TLSv1.3' })
    expect(res.peer.subject.CN).toBe('localhost')
  })

  test('two apps on one port, each with its certificate by SNI and its requests by Host', async () => {
    const ra = await get(port, { servername: 'a.localhost', headers: { host: `a.localhost:${port}` } })
    const rb = await get(port, { servername: 'b.localhost', headers: { host: `b.localhost:${port}` } })
    expect(ra.peer.subject.CN).toBe('a.localhost')
    expect(rb.peer.subject.CN).toBe('b.localhost')
    expect(ra.headers['x-queue']).toBe('a')
    expect(rb.headers['x-queue']).toBe('b')
    expect(JSON.parse(ra.body).tls.servername).toBe('a.localhost')
    // a host without a certificate of its own gets the port's
    const other = await get(port, { servername: 'c.localhost', headers: { host: `c.localhost:${port}` } })
    expect(other.peer.subject.CN).toBe('localhost')
    expect(other.headers['x-queue']).toBe('site')
  })

  test('ALPN: h2 when offered, http/1.1 for clients that do not offer h2', async () => {
    const s1 = await connect(port, { ALPNProtocols: ['h2', 'http/1.1'] })
    expect(s1.alpnProtocol).toBe('h2')
    s1.destroy()
    const s2 = await connect(port, { ALPNProtocols: ['http/1.1'] })
    expect(s2.alpnProtocol).toBe('http/1.1')
    s2.destroy()
  })

  test('h2: the app sees HTTP/2.0, :authority as Host, no pseudo-headers, cookies joined', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, servername: 'a.localhost' })
    try {
      const res = await h2(session, { ':path': '/h2?q', ':authority': `a.localhost:${port}`, cookie: ['x=1', 'y=2'] })
      expect(res.status).toBe(200)
      const seen = JSON.parse(res.body)
      expect(seen.v).toBe('2.0')
      expect(seen.url).toBe('/h2?q')
      expect(seen.tls.alpnProtocol).toBe('h2')
      const names = seen.rawHeaders.filter((_, i) => i % 2 === 0)
      expect(names.some((n) => n.startsWith(':'))).toBe(false)
      expect(seen.rawHeaders.slice(0, 2)).toEqual(['host', `a.localhost:${port}`])
      expect(seen.rawHeaders[seen.rawHeaders.indexOf('cookie') + 1]).toBe('x=1; y=2')
      // no connection-specific header goes back (RFC 9113 8.2.2), and the hub's own pages work
      expect(res.headers.connection).toBeUndefined()
      const bad = await h2(session, { ':path': '/', ':method': 'PATCHX', ':authority': `a.localhost:${port}` })
      expect(bad.status).toBe(400)
    } finally {
      session.close()
    }
  })

  test('session resumption: a reconnecting client skips the full handshake', async () => {
    const first = await connect(port, { servername: 'a.localhost' })
    // TLS 1.3 tickets come after the handshake (RFC 8446 4.6.1): read a response to get one
    const session = await new Promise((resolve) => {
      first.once('session', resolve)
      first.resume()
      first.write(`GET / HTTP/1.1\r\nHost: a.localhost:${port}\r\n\r\n`)
    })
    first.destroy()
    const again = await connect(port, { servername: 'a.localhost', session })
    expect(again.isSessionReused()).toBe(true)
    again.destroy()
  })

  // The hub's handshake timeout is its header timeout (60 s here): each case below is
  // over within a few seconds only if the hub acts on the client's FIN.
  test('a client that leaves mid-handshake, or before it, is closed at once, as node closes it', async () => {
    const closedWithin = (write) => new Promise((resolve, reject) => {
      const raw = net.connect(port, '127.0.0.1', () => {
        const t0 = Date.now()
        raw.end(write)
        raw.on('close', () => resolve(Date.now() - t0))
      })
      raw.on('error', reject)
      raw.resume()
      setTimeout(() => reject(new Error('the hub kept the connection after the client\'s FIN')), 3000).unref()
    })
    // nothing at all; the first bytes of a ClientHello (record header, handshake type 1)
    expect(await closedWithin(Buffer.alloc(0))).toBeLessThan(3000)
    expect(await closedWithin(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]))).toBeLessThan(3000)
    await until(() => hub.conns.size === 0, 2000, 'no connection left in the hub')
  })

  test('over TLS a request followed by FIN still gets its answer on HTTP/1.1; on h2 a FIN ends the connection', async () => {
    const s1 = await connect(port, { ALPNProtocols: ['http/1.1'] })
    const got = []
    s1.on('data', (d) => got.push(d))
    s1.end(`GET /half HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n\r\n`)
    await new Promise((resolve) => s1.on('close', resolve))
    expect(Buffer.concat(got).toString()).toMatch(/^HTTP\/1\.1 200 [^]*"url":"\/half"/)
    const s2 = await connect(port, { ALPNProtocols: ['h2'] })
    const t0 = Date.now()
    s2.resume()
    s2.end()
    await new Promise((resolve) => s2.on('close', resolve))
    expect(Date.now() - t0).toBeLessThan(3000)
  })

  test('TLS 1.2 renegotiation is refused: no handshake is made, the connection fails', async () => {
    const before = hub.tlsCounts.handshakes
    const s = await connect(port, { maxVersion: 'TLSv1.2' })
    expect(s.getProtocol()).toBe('TLSv1.2')
    const err = await new Promise((resolve) => {
      s.on('error', resolve)
      s.renegotiate({ rejectUnauthorized: false }, (e) => { if (e) resolve(e) })
    })
    // the server's no_renegotiation alert: it started no handshake
    expect(err.code).toBe('ERR_SSL_NO_RENEGOTIATION')
    s.destroy()
    // (the count is of connections handed over: this one, once)
    expect(hub.tlsCounts.handshakes).toBe(before + 1)
  })

  test('the router\'s limits hold on TLS: 431 on HTTP/1.1 and on h2, 404 for no prefix', async () => {
    const big = 'x'.repeat(5000)
    const r1 = await get(port, { headers: { 'x-big': big } })
    expect(r1.status).toBe(431)
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
    try {
      const r2 = await h2(session, { ':path': '/', 'x-big': big })
      expect(r2.status).toBe(431)
    } finally {
      session.close()
    }
  })
})

// Raw h2 frames, for what node's client will not send (RFC 9113 4.1): the 9-byte header
// and a payload. HEADERS carry literal fields without indexing (RFC 7541 6.2.2).
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

describe('h2 timeouts', () => {
  let hub
  let port
  let w

  beforeAll(async () => {
    port = await freePort()
    hub = await startHub({ bodyTimeout: 1500, tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key }] })
    await hub.createQueue('slow', { urls: [`https://+:${port}/`] })
    // answers after 8 s: every request below is still in flight when its case is decided
    w = await startWorker(hub, { queue: 'slow', onRequest: (req, x) => { setTimeout(() => reply(x, req, 200, 'late'), 8000).unref() } })
  })

  afterAll(async () => {
    w.att.close()
    await hub.close()
  })

  test('a request body that stops arriving is reset after body_timeout, and the app\'s request aborted; the connection goes on', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
    try {
      const stream = session.request({ ':method': 'POST', ':path': '/upload', 'content-length': '100' })
      stream.write(Buffer.alloc(10))
      const t0 = Date.now()
      const code = await new Promise((resolve) => stream.on('close', () => resolve(stream.rstCode)))
      expect(code).toBe(http2.constants.NGHTTP2_CANCEL)
      expect(Date.now() - t0).toBeLessThan(6000)
      await until(() => w.aborted.length === 1, 2000, 'the app\'s request aborted')
      // the same connection still takes requests
      const next = session.request({ ':path': '/after' })
      next.end()
      await until(() => w.requests.some((r) => r.url === '/after'), 2000, 'a request on the same connection')
      next.close()
    } finally {
      session.destroy()
    }
  }, 15000)

  test('a connection nghttp2 ended with a stream in flight is dropped once a PING goes unanswered (node reports nothing)', async () => {
    const s = await connect(port, { ALPNProtocols: ['h2'] })
    s.resume()
    s.write(Buffer.concat([
      H2_PREFACE,
      h2Frame(4, 0, 0), // SETTINGS
      h2Frame(1, 0x5, 1, hpackLiterals([[':method', 'GET'], [':path', '/slow'], [':scheme', 'https'], [':authority', `localhost:${port}`]]))
    ]))
    await until(() => w.requests.some((r) => r.url === '/slow'), 3000, 'the request at the app')
    // DATA on a stream the client already half-closed: a connection error (GOAWAY STREAM_CLOSED)
    s.write(h2Frame(0, 0x1, 1, Buffer.from('late')))
    await new Promise((resolve) => setTimeout(resolve, 200))
    const mine = [...hub.conns].find((c) => c.remotePort === s.localPort)
    s.destroy()
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(hub.conns.has(mine)).toBe(true) // the hub cannot see the close: nghttp2 stopped reading
    await until(() => !hub.conns.has(mine), 9000, 'the connection dropped')
  }, 15000)
})

describe('h2 bodies and streams', () => {
  let hub
  let port
  let w

  beforeAll(async () => {
    hub = await startHub({ maxBodySize: 8 * 1024 * 1024 })
    // the certificate comes from the app at attach (HELLO), as an https server sends it
    const info = await new Promise((resolve, reject) => {
      const pending = new Map()
      hubClient.attach({
        socketPath: hub.socketPath,
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
            pending.set(req.id, { n: 0, hash: require('node:crypto').createHash('sha256') })
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
      }).then((att) => { w = att; resolve(att.info) }, reject)
    })
    port = info.ports[0]
  })

  afterAll(async () => {
    w.close()
    await hub.close()
  })

  test('a streamed response body arrives in order', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
    try {
      const res = await h2(session, { ':path': '/stream' })
      expect(res.status).toBe(200)
      expect(res.body.toString()).toBe('part0 part1 part2 part3 part4 part5 ')
    } finally {
      session.close()
    }
  })

  test('an interim response (103 Early Hints) goes out as an informational HEADERS frame before the response', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
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

  test('a large upload arrives whole (flow control through the stream)', async () => {
    const body = require('node:crypto').randomBytes(6 * 1024 * 1024)
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
    try {
      const res = await h2(session, { ':path': '/up', ':method': 'POST' }, body)
      expect(res.body.toString()).toBe(`${body.length} ${require('node:crypto').createHash('sha256').update(body).digest('hex')}`)
      // over the limit: 413 from the hub, by Content-Length, and the upload is stopped
      // (RST_STREAM NO_ERROR after the response, RFC 9113 8.1)
      const tooBig = await new Promise((resolve, reject) => {
        const r = session.request({ ':path': '/up', ':method': 'POST', 'content-length': String(9 * 1024 * 1024) })
        r.write(Buffer.alloc(1024))
        let status = 0
        r.on('response', (h) => { status = h[':status'] })
        r.on('error', reject)
        r.on('close', () => resolve({ status, rstCode: r.rstCode }))
        r.resume()
      })
      expect(tooBig).toEqual({ status: 413, rstCode: http2.constants.NGHTTP2_NO_ERROR })
    } finally {
      session.close()
    }
  })

  test('a request\'s trailers (a trailing HEADERS block) reach the app with the end of its body', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
    try {
      const body = await new Promise((resolve, reject) => {
        const r = session.request({ ':path': '/up', ':method': 'POST' }, { waitForTrailers: true })
        r.on('wantTrailers', () => r.sendTrailers({ 'x-checksum': 'c0ffee', 'x-rows': '3' }))
        const chunks = []
        r.on('data', (c) => chunks.push(c))
        r.on('end', () => resolve(Buffer.concat(chunks).toString()))
        r.on('error', reject)
        r.end('abc')
      })
      const [n, , trailers] = body.split(' ')
      expect(n).toBe('3')
      expect(JSON.parse(trailers)).toEqual(['x-checksum', 'c0ffee', 'x-rows', '3'])
    } finally {
      session.close()
    }
  })

  test('many concurrent streams on one connection', async () => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
    try {
      const all = await Promise.all(Array.from({ length: 200 }, (_, i) =>
        i % 2 ? h2(session, { ':path': `/n${i}` }) : h2(session, { ':path': `/p${i}`, ':method': 'POST' }, Buffer.alloc(10000 + i))))
      all.forEach((r, i) => {
        expect(r.status).toBe(200)
        if (i % 2) expect(r.body.toString()).toBe('ok')
        else expect(r.body.toString().split(' ')[0]).toBe(String(10000 + i))
      })
    } finally {
      session.close()
    }
  })

  test('an app that sends no certificate for an https prefix is refused with TLS_NO_CERT', async () => {
    await expect(hubClient.attach({
      socketPath: hub.socketPath,
      urls: ['https://127.0.0.1:0/'],
      handlers: { onRequest () {} }
    })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_TLS_NO_CERT' })
    await expect(hubClient.attach({
      socketPath: hub.socketPath,
      urls: ['https://127.0.0.1:0/'],
      tls: { cert: certs.read(certs.a.cert), key: certs.read(certs.b.key) },
      handlers: { onRequest () {} }
    })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_TLS_CERT', message: expect.stringMatching(/does not belong to the certificate/) })
    expect(hub.queues()).toEqual([w.info.queue])
  })
})

describe('client certificates', () => {
  let hub
  let port
  let w

  beforeAll(async () => {
    port = await freePort()
    hub = await startHub({
      tls: [{ port, cert: certs.localhost.cert, key: certs.localhost.key, ca: certs.ca.cert, requestCert: true }]
    })
    await hub.createQueue('site', { urls: [`https://+:${port}/`] })
    w = await startWorker(hub, { queue: 'site', handle: echo })
  })

  afterAll(async () => {
    w.att.close()
    await hub.close()
  })

  test('a certificate the CA signed is accepted, and the app sees it', async () => {
    const res = await get(port, { cert: certs.read(certs.client.cert), key: certs.read(certs.client.key) })
    expect(res.status).toBe(200)
    const seen = JSON.parse(res.body)
    expect(seen.tls.authorized).toBe(true)
    expect(seen.tls.authorizationError).toBe(null)
    expect(seen.tls.peerCertificate).toBeGreaterThan(100)
  })

  test('no certificate, or one the CA did not sign: refused before any app sees it, and counted', async () => {
    const before = hub.tlsStats().failures
    const served = hub.queueStats('site').served
    await expect(get(port, { cert: certs.read(certs.stranger.cert), key: certs.read(certs.stranger.key) })).rejects.toThrow()
    await expect(get(port)).rejects.toThrow()
    await until(() => hub.tlsStats().failures >= before + 2)
    expect(hub.queueStats('site').served).toBe(served)
  })
})

describe('certificate reload and redirect_http', () => {
  let hub
  let port
  let httpPort
  let w
  let dir

  beforeAll(async () => {
    port = await freePort()
    httpPort = await freePort()
    dir = fs.mkdtempSync(path.join(certs.dir, 'live-'))
    fs.copyFileSync(certs.a.cert, path.join(dir, 'site.crt'))
    fs.copyFileSync(certs.a.key, path.join(dir, 'site.key'))
    hub = await startHub({ tls: [{ port, cert: path.join(dir, 'site.crt'), key: path.join(dir, 'site.key') }] })
    await hub.createQueue('site', { urls: [`https://+:${port}/app/`] })
    await hub.addRedirect('site', httpPort, [`https://+:${port}/app/`])
    w = await startWorker(hub, { queue: 'site', handle: echo })
  })

  afterAll(async () => {
    w.att.close()
    await hub.close()
  })

  test('where the config\'s certificate serves the port, the app\'s is not used and so not checked: an app whose pair the hub would refuse still attaches', async () => {
    // the same mismatched pair is ERR_HTTPSYS_TLS_CERT on a port without a config entry
    // (the TLS_NO_CERT test above); here the operator's certificate wins over it
    const served = []
    const att = await hubClient.attach({
      socketPath: hub.socketPath,
      urls: [`https://+:${port}/shipped/`],
      tls: { cert: certs.read(certs.a.cert), key: certs.read(certs.b.key) },
      handlers: {
        onRequest (req) {
          served.push(req.url)
          att.respond(req.id, 200, 'OK', ['Content-Length', '2'], Buffer.from('ok'), 0)
        }
      }
    })
    try {
      const res = await get(port, { path: '/shipped/x' })
      expect(res.status).toBe(200)
      expect(served).toEqual(['/shipped/x'])
      expect(res.peer.subject.CN).toBe('a.localhost') // the config's file (site.crt)
    } finally {
      att.close()
    }
  })

  test('a changed certificate is served to new connections; a connection already up keeps working', async () => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false })
    const keep = (p) => new Promise((resolve, reject) => {
      https.get({ port, host: '127.0.0.1', path: p, agent }, (res) => {
        const socket = res.socket // gone from res once it is back in the agent's pool
        const cn = socket.getPeerCertificate().subject.CN
        res.resume()
        res.on('end', () => resolve({ status: res.statusCode, cn, socket }))
      }).on('error', reject)
    })
    const first = await keep('/app/1')
    expect(first.cn).toBe('a.localhost')
    // a renewal: write the new files, then reload (what `httpsys reload` or the file watcher does)
    fs.copyFileSync(certs.b.cert, path.join(dir, 'site.crt'))
    fs.copyFileSync(certs.b.key, path.join(dir, 'site.key'))
    const result = hub.reloadTls()
    expect(result).toEqual([{ label: path.join(dir, 'site.crt'), changed: true }])
    const second = await keep('/app/2')
    expect(second.socket).toBe(first.socket) // the same connection, not dropped
    expect(second.status).toBe(200)
    agent.destroy()
    const fresh = await get(port, { path: '/app/3' })
    expect(fresh.peer.subject.CN).toBe('b.localhost')
  })

  test('a broken file on reload keeps the certificate that serves, and says which file', async () => {
    fs.writeFileSync(path.join(dir, 'site.key'), 'not a key')
    const result = hub.reloadTls()
    expect(result[0].changed).toBe(false)
    expect(result[0].error.code).toBe('ERR_HTTPSYS_TLS_CERT')
    expect(result[0].error.message).toContain(path.join(dir, 'site.key'))
    expect((await get(port, { path: '/app/' })).status).toBe(200)
  })

  test('redirect_http: plain http to the app\'s prefix gets a 308 to https, other paths are not routed', async () => {
    const res = await request(httpPort, { path: '/app/x?y=1', headers: { host: `example.test:${httpPort}` } })
    expect(res.status).toBe(308)
    expect(res.headers.location).toBe(`https://example.test:${port}/app/x?y=1`)
    const other = await request(httpPort, { path: '/elsewhere' })
    expect(other.status).toBe(404)
  })
})
