'use strict'

// The router's output cache (docs/output-cache.md) where start-cache.test.js does not go:
// HTTP/2 over TLS (GET, HEAD, Range, conditional, and one entry shared by HTTP/1.1 and
// h2 clients), a standalone app (`node -r src/register.js app.js`, its router its child)
// with and without HTTPSYS_CACHE=off, the parts of the key a client chooses (Host case
// and port, dot segments, percent-encoding, absolute-form), a Host whose port is not
// digits (400, never an app's page), client certificates (issue 23), and pipelined
// requests.
//
// Every test talks to a real child process: an unmodified app (written to a temporary
// folder below) with an http and an https server under the preload. Each body says how
// many requests the app had seen (n=...) and what it saw of the request, so the same
// body twice means the second answer came from the cache, not from the app.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const http2 = require('node:http2')
const os = require('node:os')
const path = require('node:path')
const { request, RawClient } = require('../helpers/hub-harness')
const { makeCerts } = require('../helpers/tls-certs')
const { httpsRequest, h2connect, closeSession, h2 } = require('../helpers/tls-clients')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')
const { routerBin } = require('../helpers/native-router')

// a standalone app's router: the native router the preload runs as the app's child
// (issue 25)
const ROUTERS = [
  ['the native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })]
]

// /slow and /plain carry no Cache-Control (never cached); /smax is `s-maxage=60` (cached,
// not public); every other path is `public, max-age=60` with an ETag naming the request
// that made it. Bodies end with the client certificate's CN (cert=none without one).
const APP = `'use strict'
const fs = require('node:fs')
const http = require('node:http')
const https = require('node:https')

let seen = 0
function handle (req, res) {
  seen++
  const peer = req.socket.encrypted ? req.socket.getPeerCertificate() : null
  const cert = peer && peer.subject ? peer.subject.CN : 'none'
  const stamp = 'n=' + seen + ' url=' + req.url + ' v=' + req.httpVersion + ' host=' + req.headers.host + ' cert=' + cert
  if (req.url.startsWith('/slow')) {
    setTimeout(() => res.end(stamp), 300)
    return
  }
  if (req.url.startsWith('/big')) {
    // 200 KB: the hub takes it in pieces (FrameReader onPieces) and stores them
    res.setHeader('Cache-Control', 'public, max-age=60')
    res.end(stamp + '\\n' + 'x'.repeat(200000))
    return
  }
  if (req.url.startsWith('/smax')) {
    res.setHeader('Cache-Control', 's-maxage=60')
  } else if (!req.url.startsWith('/plain')) {
    res.setHeader('Cache-Control', 'public, max-age=60')
    res.setHeader('ETag', '"e' + seen + '"')
  }
  res.setHeader('Content-Type', 'text/plain')
  res.end(stamp)
}

const plain = http.createServer(handle)
// CA_FILE: clients are asked for a certificate, and served without one too
const asked = process.env.CA_FILE ? { requestCert: true, rejectUnauthorized: false, ca: fs.readFileSync(process.env.CA_FILE) } : {}
const secure = https.createServer({ key: fs.readFileSync(process.env.KEY_FILE), cert: fs.readFileSync(process.env.CERT_FILE), ...asked }, handle)
let left = 2
function listening () {
  if (--left === 0) process.stdout.write(JSON.stringify({ http: plain.address().port, https: secure.address().port }) + '\\n')
}
// LISTEN_PREFIX: the plain server listens on a URL prefix, so its router keeps its own
// rules (canonical targets, which the key is made of); on a port it would own the port
// and get every target as sent, as on node
plain.listen(process.env.LISTEN_PREFIX ? 'http://+:0/' : 0, listening)
secure.listen(0, listening)
`

let certs
let dir
let appFile
const children = new Set()

beforeAll(() => {
  certs = makeCerts()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-hub-cache-'))
  appFile = path.join(dir, 'app.js')
  fs.writeFileSync(appFile, APP)
})

afterAll(async () => {
  for (const child of children) await stopChild(child)
  if (certs) certs.cleanup()
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

/**
 * The app as a standalone process (no router given: the preload starts a hub inside
 * it). Resolves { child, http, https } (its two ports) once both servers listen: the
 * https port serves TLS from then on, as node's does (router-standalone-tls.test.js).
 */
function startStandalone (extraEnv = {}) {
  // TMPDIR: the router's worker socket is made there, and a killed app leaves it
  const env = standaloneEnv({ KEY_FILE: certs.localhost.key, CERT_FILE: certs.localhost.cert, TMPDIR: dir, ...extraEnv })
  const child = spawn(process.execPath, ['-r', REGISTER, appFile], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
  children.add(child)
  child.exited = new Promise((resolve) => child.once('exit', resolve))
  let out = ''
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (d) => { err += d })
  return new Promise((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d
      const nl = out.indexOf('\n')
      if (nl !== -1) resolve({ child, ...JSON.parse(out.slice(0, nl)) })
    })
    child.once('exit', (code, signal) => reject(new Error(`the app exited (${code ?? signal}) before listening:\n${out}${err}`)))
  })
}

async function stopChild (child) {
  if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL')
  await child.exited
  children.delete(child)
}

async function stopApp (app) {
  if (app) await stopChild(app.child)
}

/** The n=... the app wrote into a body. */
function seenBy (body) {
  const m = /^n=(\d+) /.exec(body.toString())
  if (m === null) throw new Error(`not a body the app made: ${JSON.stringify(body.toString())}`)
  return Number(m[1])
}

describe.each(ROUTERS)('%s', (name, envOf) => {
  const startApp = (extraEnv = {}) => startStandalone({ ...envOf(), ...extraEnv })

  describe('HTTP/2 over TLS through the router', () => {
    let app
    let session

    beforeAll(async () => {
      app = await startApp()
    })

    beforeEach(async () => {
      session = await h2connect(app.https)
    })

    afterEach(async () => {
      if (session) await closeSession(session)
      session = null
    })

    afterAll(async () => {
      await stopApp(app)
    })

    test('an h2 response is answered from the cache to later h2 requests: same body, Age, Content-Length', async () => {
      const first = await h2(session, { ':path': '/h2/same' })
      expect(first.status).toBe(200)
      expect(first.headers.age).toBeUndefined() // made by the app
      expect(first.body.toString()).toMatch(/^n=\d+ url=\/h2\/same v=2\.0 /)

      const again = await h2(session, { ':path': '/h2/same' })
      expect(again.status).toBe(200)
      expect(again.body.toString()).toBe(first.body.toString())
      expect(again.headers.age).toMatch(/^\d+$/)
      expect(again.headers['content-length']).toBe(String(first.body.length))
      expect(again.headers['content-type']).toBe('text/plain')
      expect(again.headers['cache-control']).toBe('public, max-age=60')
      expect(again.headers.etag).toBe(first.headers.etag)

      // many streams at once on one connection, and a new connection: all from the entry
      const many = await Promise.all(Array.from({ length: 20 }, () => h2(session, { ':path': '/h2/same' })))
      for (const res of many) {
        expect(res.status).toBe(200)
        expect(res.body.toString()).toBe(first.body.toString())
      }
      const other = await h2connect(app.https)
      try {
        expect((await h2(other, { ':path': '/h2/same' })).body.toString()).toBe(first.body.toString())
      } finally {
        await closeSession(other)
      }
      // the app saw the first request only
      const plain = await h2(session, { ':path': '/plain/h2' })
      expect(seenBy(plain.body)).toBe(seenBy(first.body) + 1)
    })

    test('HEAD over h2 is the head of the cached GET, with its Content-Length and no body', async () => {
      const full = await h2(session, { ':path': '/h2/head' })
      expect(full.status).toBe(200)
      const head = await h2(session, { ':path': '/h2/head', ':method': 'HEAD' })
      expect(head.status).toBe(200)
      expect(head.body.length).toBe(0)
      expect(head.headers['content-length']).toBe(String(full.body.length))
      expect(head.headers.age).toMatch(/^\d+$/)
      // the app would have made a new ETag had the HEAD reached it
      expect(head.headers.etag).toBe(full.headers.etag)
      expect((await h2(session, { ':path': '/h2/head' })).body.toString()).toBe(full.body.toString())
    })

    test('Range and conditional requests over h2 are answered from the entry', async () => {
      const full = await h2(session, { ':path': '/h2/range' })
      const len = full.body.length
      expect(len).toBeGreaterThan(12)

      const part = await h2(session, { ':path': '/h2/range', range: 'bytes=4-9' })
      expect(part.status).toBe(206)
      expect(part.headers['content-range']).toBe(`bytes 4-9/${len}`)
      expect(part.headers['content-length']).toBe('6')
      expect(part.headers.age).toMatch(/^\d+$/)
      expect(part.body.toString()).toBe(full.body.subarray(4, 10).toString())

      const suffix = await h2(session, { ':path': '/h2/range', range: 'bytes=-5' })
      expect(suffix.status).toBe(206)
      expect(suffix.body.toString()).toBe(full.body.subarray(len - 5).toString())

      const beyond = await h2(session, { ':path': '/h2/range', range: `bytes=${len + 10}-` })
      expect(beyond.status).toBe(416)
      expect(beyond.headers['content-range']).toBe(`bytes */${len}`)
      expect(beyond.body.length).toBe(0)

      const notModified = await h2(session, { ':path': '/h2/range', 'if-none-match': full.headers.etag })
      expect(notModified.status).toBe(304)
      expect(notModified.headers.etag).toBe(full.headers.etag)
      expect(notModified.body.length).toBe(0)
    })

    // issue 23: the Host port rule holds for :authority (and a Host field) as for HTTP/1.1
    test('an :authority whose port is not digits is 400 and never reaches the app', async () => {
      for (const authority of ["localhost:'onmouseover='x'", 'localhost:80a']) {
        const bad = await h2(session, { ':path': '/h2/authority', ':authority': authority })
        expect(bad.status).toBe(400)
        expect(bad.body.toString()).not.toContain('n=')
      }
      const ok = await h2(session, { ':path': '/h2/authority', ':authority': `localhost:${app.https}` })
      expect(ok.status).toBe(200)
      expect(ok.body.toString()).toContain(`host=localhost:${app.https} `)
    })

    test('one entry for HTTP/1.1 over TLS and h2 (same scheme, host, port and path); plain http is another', async () => {
      // stored from HTTP/1.1, served to h2
      const viaH1 = await httpsRequest(app.https, { path: '/cross/one' })
      expect(viaH1.status).toBe(200)
      expect(viaH1.alpn).toBe(false)
      expect(viaH1.body.toString()).toMatch(/^n=\d+ url=\/cross\/one v=1\.1 /)
      const toH2 = await h2(session, { ':path': '/cross/one' })
      expect(toH2.status).toBe(200)
      expect(toH2.body.toString()).toBe(viaH1.body.toString())
      expect(toH2.headers.age).toMatch(/^\d+$/)
      expect(toH2.headers['content-length']).toBe(String(viaH1.body.length))

      // stored from h2, served to HTTP/1.1
      const viaH2 = await h2(session, { ':path': '/cross/two' })
      expect(viaH2.body.toString()).toMatch(/^n=\d+ url=\/cross\/two v=2\.0 /)
      const toH1 = await httpsRequest(app.https, { path: '/cross/two' })
      expect(toH1.status).toBe(200)
      expect(toH1.body.toString()).toBe(viaH2.body.toString())
      expect(toH1.headers.age).toMatch(/^\d+$/)
      expect(toH1.headers['content-length']).toBe(String(viaH2.body.length))
      expect(toH1.headers['transfer-encoding']).toBeUndefined()

      // http://127.0.0.1:<other port>/cross/two is not https://127.0.0.1:<port>/cross/two
      const plain = await request(app.http, { path: '/cross/two' })
      expect(plain.status).toBe(200)
      expect(plain.headers.age).toBeUndefined()
      expect(seenBy(plain.body)).toBeGreaterThan(seenBy(viaH2.body))
    })
  })

  describe('a standalone app (node -r src/register.js app.js)', () => {
    let app

    afterEach(async () => {
      await stopApp(app)
      app = null
    })

    test('Cache-Control: public, max-age=60 is answered from the cache by the app\'s own router', async () => {
      app = await startApp()
      const first = await request(app.http, { path: '/public' })
      expect(first.status).toBe(200)
      expect(first.body.toString()).toMatch(/^n=1 url=\/public /)
      expect(first.headers.age).toBeUndefined()
      for (let i = 0; i < 3; i++) {
        const res = await request(app.http, { path: '/public' })
        expect(res.status).toBe(200)
        expect(res.body.toString()).toBe(first.body.toString()) // n=1: the app never saw it
        expect(res.headers.age).toMatch(/^\d+$/)
      }
      expect(seenBy((await request(app.http, { path: '/plain' })).body)).toBe(2)
    })

    test('a 200 KB response (under cache_max_response) is stored whole and answered from the cache over HTTP/1.1 and h2', async () => {
      app = await startApp()
      const first = await request(app.http, { path: '/big' })
      expect(first.status).toBe(200)
      expect(first.body.length).toBe(first.body.indexOf('\n') + 1 + 200000)
      expect(first.body.toString()).toMatch(/^n=1 url=\/big /)
      const again = await request(app.http, { path: '/big' })
      expect(again.headers.age).toMatch(/^\d+$/)
      expect(again.headers['content-length']).toBe(String(first.body.length))
      expect(again.body.equals(first.body)).toBe(true)
      // over TLS it is another entry (another scheme and port): made once, then shared by h2
      const session = await h2connect(app.https)
      try {
        const a = await h2(session, { ':path': '/big' })
        const b = await h2(session, { ':path': '/big' })
        expect(a.body.toString()).toMatch(/^n=2 url=\/big v=2.0 /)
        expect(a.body.length).toBe(a.body.indexOf('\n') + 1 + 200000)
        expect(b.body.equals(a.body)).toBe(true)
        expect(b.headers.age).toMatch(/^\d+$/)
      } finally {
        await closeSession(session)
      }
    })

    test('a server that owns its port gets its targets as sent: a dotted target is an entry of its own, seen by the app as written', async () => {
      app = await startApp()
      const direct = await request(app.http, { path: '/static/y' })
      const dotted = await request(app.http, { path: '/a/../static/y' })
      expect(dotted.body.toString()).toMatch(/^n=2 url=\/a\/\.\.\/static\/y /)
      expect((await request(app.http, { path: '/a/../static/y' })).body.equals(dotted.body)).toBe(true)
      expect((await request(app.http, { path: '/static/y' })).body.equals(direct.body)).toBe(true)
    })

    test('HTTPSYS_CACHE=off: the same app sees every request', async () => {
      app = await startApp({ HTTPSYS_CACHE: 'off' })
      for (let n = 1; n <= 4; n++) {
        const res = await request(app.http, { path: '/public' })
        expect(res.status).toBe(200)
        expect(res.headers['cache-control']).toBe('public, max-age=60')
        expect(res.headers.age).toBeUndefined()
        expect(seenBy(res.body)).toBe(n)
      }
      // over h2 too
      const session = await h2connect(app.https)
      try {
        const a = await h2(session, { ':path': '/public' })
        const b = await h2(session, { ':path': '/public' })
        expect(seenBy(a.body)).toBe(5)
        expect(seenBy(b.body)).toBe(6)
      } finally {
        await closeSession(session)
      }
    })
  })

  describe('the key: what a client chooses of its request target and Host', () => {
    let app
    let port

    beforeAll(async () => {
      app = await startApp({ LISTEN_PREFIX: '1' })
      port = app.http
    })

    afterAll(async () => {
      await stopApp(app)
    })

    test('Host is lower case with its port, as the app saw it: one entry per port; another host, another entry', async () => {
      const first = await request(port, { path: '/key/host', headers: { host: `Example.COM:${port}` } })
      expect(first.status).toBe(200)
      expect(first.body.toString()).toContain(`host=Example.COM:${port}`)
      expect(first.headers.age).toBeUndefined()

      for (const host of [`example.com:${port}`, `EXAMPLE.com:${port}`]) {
        const res = await request(port, { path: '/key/host', headers: { host } })
        expect(res.body.toString()).toBe(first.body.toString())
        expect(res.headers.age).toMatch(/^\d+$/)
      }
      // absolute-form: the target's host is the request's host
      const absolute = await request(port, { path: `http://EXAMPLE.COM:${port}/key/host`, headers: { host: 'ignored.example' } })
      expect(absolute.body.toString()).toBe(first.body.toString())

      // the same name without the port, or with another: the app made a page for that Host
      const bare = await request(port, { path: '/key/host', headers: { host: 'example.com' } })
      expect(bare.headers.age).toBeUndefined()
      expect(bare.body.toString()).toContain('host=example.com ')
      const wrongPort = await request(port, { path: '/key/host', headers: { host: 'example.com:1337' } })
      expect(wrongPort.headers.age).toBeUndefined()
      expect(wrongPort.body.toString()).toContain('host=example.com:1337 ')
      // each is its own entry now, and none answers the others
      expect((await request(port, { path: '/key/host', headers: { host: 'example.com' } })).body.toString()).toBe(bare.body.toString())
      expect((await request(port, { path: '/key/host', headers: { host: `example.com:${port}` } })).body.toString()).toBe(first.body.toString())

      const other = await request(port, { path: '/key/host', headers: { host: `other.example:${port}` } })
      expect(other.status).toBe(200)
      expect(other.headers.age).toBeUndefined()
      expect(other.body.toString()).toContain(`host=other.example:${port}`)
      expect(seenBy(other.body)).toBeGreaterThan(seenBy(first.body))
      const otherAgain = await request(port, { path: '/key/host', headers: { host: `OTHER.example:${port}` } })
      expect(otherAgain.body.toString()).toBe(other.body.toString())
    })

    // issue 23: HTTP.SYS refuses such a Host; had the app seen it, its page (which reflects
    // the Host) would have been stored and served to every client of that Host
    test.each([
      ["localhost:'onmouseover='alert(1)'", 1],
      ['localhost:80a', 2],
      ['localhost:1:2', 3]
    ])('a Host whose port is not digits (%s) is 400 and never reaches the app', async (host, n) => {
      const before = seenBy((await request(port, { path: '/plain/count' })).body)
      const bad = await request(port, { path: `/key/xss/${n}`, headers: { host } })
      expect(bad.status).toBe(400)
      expect(bad.body.toString()).not.toContain('n=')
      const clean = await request(port, { path: `/key/xss/${n}`, headers: { host: 'localhost' } })
      expect(clean.status).toBe(200)
      expect(clean.body.toString()).toContain('host=localhost ')
      expect(clean.body.toString()).not.toContain(host)
      expect(seenBy((await request(port, { path: '/plain/count' })).body)).toBe(before + 2) // the clean request, /plain/count
      // nor in an absolute-form target, whose authority becomes the Host
      const absolute = await request(port, { path: `http://${host}/key/xss/${n}`, headers: { host: 'localhost' } })
      expect(absolute.status).toBe(400)
    })

    test('a target with dot segments or escaped unreserved characters hits the entry of its canonical path', async () => {
      const direct = await request(port, { path: '/static/x' })
      expect(direct.body.toString()).toMatch(/^n=\d+ url=\/static\/x /)
      for (const target of ['/a/../static/x', '/static/./x', '/static/y/../x', '/%73tatic/%78']) {
        const res = await request(port, { path: target })
        expect(res.status).toBe(200)
        expect(res.body.toString()).toBe(direct.body.toString())
        expect(res.headers.age).toMatch(/^\d+$/)
      }
      // stored from a dotted target (the app sees the canonical one), hit by the plain one
      const dotted = await request(port, { path: '/b/./../static/z' })
      expect(dotted.body.toString()).toMatch(/^n=\d+ url=\/static\/z /)
      const plain = await request(port, { path: '/static/z' })
      expect(plain.body.toString()).toBe(dotted.body.toString())
      expect(plain.headers.age).toMatch(/^\d+$/)
      // a path differing only in case is another path
      const upper = await request(port, { path: '/STATIC/x' })
      expect(upper.body.toString()).not.toBe(direct.body.toString())
    })
  })

  describe('client certificates (requestCert, rejectUnauthorized: false): like Authorization unless the app says public (issue 23)', () => {
    let app
    let client

    beforeAll(async () => {
      app = await startApp({ CA_FILE: certs.ca.cert })
      client = { cert: certs.read(certs.client.cert), key: certs.read(certs.client.key) }
    })

    afterAll(async () => {
      await stopApp(app)
    })

    /** An h2 session that presents the client certificate. */
    function h2WithCert () {
      return new Promise((resolve, reject) => {
        const session = http2.connect(`https://127.0.0.1:${app.https}`, { rejectUnauthorized: false, ...client })
        session.once('connect', () => resolve(session))
        session.once('error', reject)
      })
    }

    test('a response to a client with a certificate (s-maxage, not public) is never served to a client without one', async () => {
      const mine = await httpsRequest(app.https, { path: '/smax/who', ...client })
      expect(mine.status).toBe(200)
      expect(mine.body.toString()).toMatch(/cert=test client$/)
      for (let i = 0; i < 2; i++) {
        const anonymous = await httpsRequest(app.https, { path: '/smax/who' })
        expect(anonymous.status).toBe(200)
        expect(anonymous.body.toString()).toMatch(/cert=none$/)
        expect(anonymous.body.toString()).not.toContain('test client')
      }
      // the anonymous page was stored: a second anonymous client gets it
      const a = await httpsRequest(app.https, { path: '/smax/who' })
      expect(a.headers.age).toMatch(/^\d+$/)
      // and over h2
      const session = await h2WithCert()
      try {
        const viaH2 = await h2(session, { ':path': '/smax/who-h2' })
        expect(viaH2.body.toString()).toMatch(/cert=test client$/)
        const anonymous = await httpsRequest(app.https, { path: '/smax/who-h2' })
        expect(anonymous.body.toString()).toMatch(/cert=none$/)
      } finally {
        await closeSession(session)
      }
    })

    test('a client with a certificate is not answered from an entry that is not public', async () => {
      const anonymous = await httpsRequest(app.https, { path: '/smax/page' })
      expect(anonymous.body.toString()).toMatch(/cert=none$/)
      expect((await httpsRequest(app.https, { path: '/smax/page' })).body.toString()).toBe(anonymous.body.toString())
      const mine = await httpsRequest(app.https, { path: '/smax/page', ...client })
      expect(mine.headers.age).toBeUndefined()
      expect(mine.body.toString()).toMatch(/cert=test client$/)
    })

    test('Cache-Control: public is the app\'s word that the page is the same for everyone: stored and served both ways', async () => {
      const mine = await httpsRequest(app.https, { path: '/public/cert', ...client })
      expect(mine.body.toString()).toMatch(/cert=test client$/)
      const anonymous = await httpsRequest(app.https, { path: '/public/cert' })
      expect(anonymous.body.toString()).toBe(mine.body.toString())
      expect(anonymous.headers.age).toMatch(/^\d+$/)
      const again = await httpsRequest(app.https, { path: '/public/cert', ...client })
      expect(again.body.toString()).toBe(mine.body.toString())
    })
  })

  describe('pipelining', () => {
    let app
    let port
    let client

    beforeAll(async () => {
      app = await startApp()
      port = app.http
    })

    afterEach(() => {
      if (client) client.close()
      client = null
    })

    afterAll(async () => {
      await stopApp(app)
    })

    const get = (p, extra = '') => `GET ${p} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}\r\n`

    test('GETs for cached URLs written in one TCP write get their answers in order', async () => {
      const a = await request(port, { path: '/pipe/a' })
      const b = await request(port, { path: '/pipe/b' })
      client = new RawClient(port)
      await client.connected
      client.write(get('/pipe/a') + get('/pipe/b') + get('/pipe/a', 'Connection: close\r\n'))
      const got = await client.waitFor(3)
      expect(got.map((r) => r.status)).toEqual([200, 200, 200])
      expect(got.map((r) => r.body.toString())).toEqual([a.body.toString(), b.body.toString(), a.body.toString()])
      for (const r of got) expect(r.headers.age).toMatch(/^\d+$/)
      expect(got[0].headers.connection).toBeUndefined()
      expect(got[2].headers.connection).toBe('close')
      await client.waitClosed()
      expect(client.responses.length).toBe(3)
      expect(client.buf.length).toBe(0)
    })

    test('a cached answer waits behind an earlier request the app is still answering', async () => {
      const a = await request(port, { path: '/pipe/c' })
      client = new RawClient(port)
      await client.connected
      // /slow takes the app 300 ms; the cache could answer the third at once
      client.write(get('/pipe/c') + get('/slow/1') + get('/pipe/c'))
      const got = await client.waitFor(3, 15000)
      expect(got.map((r) => r.status)).toEqual([200, 200, 200])
      expect(got[0].body.toString()).toBe(a.body.toString())
      expect(got[1].body.toString()).toMatch(/^n=\d+ url=\/slow\/1 /)
      expect(got[2].body.toString()).toBe(a.body.toString())
      expect(got[2].headers.age).toMatch(/^\d+$/)
    })
  })
})
