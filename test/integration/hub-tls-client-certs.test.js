'use strict'

// Client certificates are the hub's verdict, never a resumed session's (README "HTTPS and
// HTTP/2", "Client certificates"): a TLS session made where no certificate is asked
// cannot be resumed into an entry that requires one (on another port, or under another
// SNI name of the same port, TLS 1.3 and 1.2), nor is it reported as authorized; and a
// request whose Host belongs to another certificate entry than the handshake's is 421
// (RFC 9110 15.5.20), on HTTP/1.1 and h2. Resumption keeps working where it is right.
// In-process hub and workers (hub-harness.js); node's TLS client with raw HTTP/1.1.

const tls = require('node:tls')
const http2 = require('node:http2')
const { startHub, startWorker, reply } = require('../helpers/hub-harness')
const { makeCerts } = require('../helpers/tls-certs')
const { freePort } = require('../helpers/httpsys-process')
const { h2 } = require('../helpers/tls-clients')

let certs
let hub
let ports
const workers = []
const seen = { pub: [], sec: [], secReject: [], a: [], b: [] }

beforeAll(async () => {
  certs = makeCerts()
  ports = { pub: await freePort(), sec: await freePort(), secReject: await freePort(), shared: await freePort() }
  const pair = { cert: certs.localhost.cert, key: certs.localhost.key }
  const verify = { ca: certs.ca.cert, requestCert: true }
  hub = await startHub({
    tls: [
      { port: ports.pub, ...pair },
      { port: ports.sec, ...pair, ...verify, rejectUnauthorized: false },
      { port: ports.secReject, ...pair, ...verify },
      // one port, two names: a.localhost asks nothing, b.localhost requires a certificate
      { port: ports.shared, ...pair },
      { port: ports.shared, host: 'a.localhost', cert: certs.a.cert, key: certs.a.key },
      { port: ports.shared, host: 'b.localhost', cert: certs.b.cert, key: certs.b.key, ...verify }
    ]
  })
  const apps = {
    pub: `https://+:${ports.pub}/`,
    sec: `https://+:${ports.sec}/`,
    secReject: `https://+:${ports.secReject}/`,
    a: `https://a.localhost:${ports.shared}/`,
    b: `https://b.localhost:${ports.shared}/`
  }
  for (const [name, url] of Object.entries(apps)) {
    await hub.createQueue(name, { urls: [url] })
    workers.push(await startWorker(hub, {
      queue: name,
      handle: (req, body, w) => {
        const t = req.tls
        seen[name].push({ authorized: t.authorized, authorizationError: t.authorizationError, peer: t.peerCertificate !== null })
        reply(w, req, 200, JSON.stringify({ app: name, authorized: t.authorized, peer: t.peerCertificate !== null }))
      }
    }))
  }
})

afterAll(async () => {
  for (const w of workers) w.att.close()
  await hub.close()
  certs.cleanup()
})

beforeEach(() => { for (const k of Object.keys(seen)) seen[k].length = 0 })

const CLIENT = () => ({ cert: certs.read(certs.client.cert), key: certs.read(certs.client.key) })

/**
 * One HTTP/1.1 request on its own TLS connection, raw bytes (Connection: close).
 * @returns {Promise<{status: number|null, body: string, reused: boolean, session: Buffer|null, error: string|null}>}
 *   status null when the connection ended without a response (refused after the handshake)
 */
function get (port, { servername, host, session, maxVersion = 'TLSv1.3', cert, key } = {}) {
  return new Promise((resolve) => {
    const socket = tls.connect({ port, host: '127.0.0.1', servername, session, minVersion: maxVersion, maxVersion, cert, key, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] })
    let newSession = null
    let reused = false
    let error = null
    const chunks = []
    socket.on('session', (s) => { newSession = s })
    socket.on('secureConnect', () => {
      reused = socket.isSessionReused()
      socket.write(`GET / HTTP/1.1\r\nHost: ${host || servername || '127.0.0.1'}:${port}\r\nConnection: close\r\n\r\n`)
    })
    socket.on('data', (c) => chunks.push(c))
    socket.on('error', (err) => { error = err.code || err.message })
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1')
      const m = /^HTTP\/1\.1 (\d{3})/.exec(text)
      resolve({ status: m ? Number(m[1]) : null, body: text.slice(text.indexOf('\r\n\r\n') + 4), reused, session: newSession, error })
    })
  })
}

describe.each(['TLSv1.3', 'TLSv1.2'])('%s: a session never carries a client certificate verdict it did not earn', (version) => {
  test('a session from a port that asks no certificate does not resume on one that asks: the app sees no certificate, not authorized', async () => {
    const first = await get(ports.pub, { maxVersion: version })
    expect(first.status).toBe(200)
    expect(first.session).not.toBe(null)
    const again = await get(ports.sec, { maxVersion: version, session: first.session })
    expect(again.status).toBe(200)
    expect(again.reused).toBe(false) // each port has its own session keys
    expect(seen.sec).toEqual([{ authorized: false, authorizationError: expect.any(String), peer: false }])
  })

  test('... nor on a port that requires one: refused before any app sees it', async () => {
    const first = await get(ports.pub, { maxVersion: version })
    expect(first.session).not.toBe(null) // (without one, nothing would be offered for resumption)
    const again = await get(ports.secReject, { maxVersion: version, session: first.session })
    expect(again.status).toBe(null)
    expect(seen.secReject).toEqual([])
  })

  test('one port, two names: a session made for the name that asks nothing does not reach the name that requires a certificate', async () => {
    const first = await get(ports.shared, { maxVersion: version, servername: 'a.localhost' })
    expect(first.status).toBe(200)
    expect(JSON.parse(first.body).app).toBe('a')
    expect(first.session).not.toBe(null)
    const again = await get(ports.shared, { maxVersion: version, servername: 'b.localhost', session: first.session })
    // refused at the handshake (TLS 1.3 names the entry), or 421 for b's Host (node
    // reports no server name on a resumed TLS 1.2 session)
    expect(again.status === null || again.status === 421).toBe(true)
    expect(seen.b).toEqual([])
  })

  test('resumption still works: on a port that asks nothing, and with a verified certificate where one is required', async () => {
    const first = await get(ports.shared, { maxVersion: version, servername: 'a.localhost' })
    const again = await get(ports.shared, { maxVersion: version, servername: 'a.localhost', session: first.session })
    expect(again).toMatchObject({ status: 200, reused: true })
    const full = await get(ports.shared, { maxVersion: version, servername: 'b.localhost', ...CLIENT() })
    expect(full.status).toBe(200)
    const resumed = await get(ports.shared, { maxVersion: version, servername: 'b.localhost', session: full.session, ...CLIENT() })
    expect(resumed).toMatchObject({ status: 200, reused: true })
    expect(JSON.parse(resumed.body)).toEqual({ app: 'b', authorized: true, peer: true })
    expect(seen.b.map((s) => s.authorized)).toEqual([true, true])
  })

  test('a verified session from one port is not authorized on another port with another CA policy', async () => {
    const full = await get(ports.shared, { maxVersion: version, servername: 'b.localhost', ...CLIENT() })
    expect(full.status).toBe(200)
    expect(full.session).not.toBe(null)
    const elsewhere = await get(ports.sec, { maxVersion: version, session: full.session })
    expect(elsewhere.status).toBe(200)
    expect(elsewhere.reused).toBe(false)
    expect(seen.sec).toEqual([{ authorized: false, authorizationError: expect.any(String), peer: false }])
  })
})

describe('421 Misdirected Request: a Host whose certificate entry is not the handshake\'s', () => {
  test('HTTP/1.1: SNI a.localhost with Host b.localhost is 421 and the connection closes; no app sees it', async () => {
    const r = await get(ports.shared, { servername: 'a.localhost', host: 'b.localhost' })
    expect(r.status).toBe(421)
    expect(r.body).toContain('421')
    expect(seen.a).toEqual([])
    expect(seen.b).toEqual([])
  })

  test('HTTP/1.1: no SNI (the port\'s certificate) with Host b.localhost is 421; with a verified certificate for b, Host a.localhost is 421 too', async () => {
    expect((await get(ports.shared, { host: 'b.localhost' })).status).toBe(421)
    expect((await get(ports.shared, { servername: 'b.localhost', host: 'a.localhost', ...CLIENT() })).status).toBe(421)
    expect(seen.a).toEqual([])
    expect(seen.b).toEqual([])
  })

  test('HTTP/1.1: the Host the handshake named is served, whatever its case and port', async () => {
    const r = await get(ports.shared, { servername: 'a.localhost', host: 'A.LocalHost' })
    expect(r.status).toBe(200)
    expect(JSON.parse(r.body).app).toBe('a')
  })

  test('h2 (connection coalescing): a stream for another entry\'s :authority is 421, the session serves on', async () => {
    const session = http2.connect(`https://127.0.0.1:${ports.shared}`, { servername: 'a.localhost', rejectUnauthorized: false })
    session.on('error', () => {})
    try {
      const wrong = await h2(session, { ':path': '/', ':authority': `b.localhost:${ports.shared}` })
      expect(wrong.status).toBe(421)
      const right = await h2(session, { ':path': '/', ':authority': `a.localhost:${ports.shared}` })
      expect(right.status).toBe(200)
      expect(JSON.parse(right.body).app).toBe('a')
      expect(seen.b).toEqual([])
    } finally {
      session.destroy()
    }
  })
})
