'use strict'

// The output cache (docs/output-cache.md) against the native router (router/, issue 25;
// the JS hub, src/hub, ran it too until it was removed), started with the options and
// the same unmodified app attached to a queue the test made, as a supervisor's worker
// (HTTPSYS_HUB, HTTPSYS_QUEUE, HTTPSYS_CACHE). Ported from hub-cache.test.js (its
// HTTP/1.1 parts: the key a client chooses, the Host port rule, pipelining, a 200 KB
// response, Range, HEAD and conditional requests) and hub-cache-upgrade.test.js (an
// upgrade request is never answered with the stored page; its TLS, h2 and
// client-certificate parts: one entry for HTTP/1.1 over TLS and h2, a client with a
// certificate treated like one with Authorization unless the app says public), with the rules the hub
// applies before it stores anything, the invalidation when an instance attaches or
// leaves, the stats `ls` shows and the byte budget (issue 23: it counts the keys).
//
// Each body says how many requests the app had seen (n=...) and what it saw, so the
// same body twice means the second answer came from the cache, not from the app.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { request, RawClient, until } = require('../helpers/hub-harness')
const { startNativeRouter } = require('../helpers/native-router')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')
const { makeCerts } = require('../helpers/tls-certs')
const { httpsRequest, h2connect, closeSession, h2 } = require('../helpers/tls-clients')
const { freePort } = require('../helpers/httpsys-process')

jest.setTimeout(30000)

// /slow and /plain carry no Cache-Control (never cached but by a config rule); /smax
// is `s-maxage=60`; /cookie, /vary, /nostore say what keeps them out; /chunked is sent
// with writeHead() then end() (src/http frames it chunked), /stream in two writes;
// every other path is `public, max-age=60` with an ETag naming the request that made
// it and a fixed Last-Modified.
const APP = `'use strict'
const http = require('node:http')
let seen = 0
const server = http.createServer((req, res) => {
  seen++
  const u = req.url
  const peer = req.socket.encrypted ? req.socket.getPeerCertificate() : null
  const cert = peer && peer.subject ? peer.subject.CN : 'none'
  const stamp = 'n=' + seen + ' url=' + u + ' host=' + req.headers.host + ' auth=' + (req.headers.authorization || 'none') +
    ' v=' + req.httpVersion + ' cert=' + cert
  if (u.startsWith('/slow')) {
    setTimeout(() => res.end(stamp), 300)
    return
  }
  if (u.startsWith('/big')) {
    res.setHeader('Cache-Control', 'public, max-age=60')
    res.end(stamp + '\\n' + 'x'.repeat(Number(process.env.BIG || 200000)))
    return
  }
  if (u.startsWith('/chunked')) {
    res.writeHead(200, { 'Cache-Control': 'public, max-age=60', 'Content-Type': 'text/plain' })
    res.end(stamp)
    return
  }
  if (u.startsWith('/stream')) {
    res.setHeader('Cache-Control', 'public, max-age=60')
    res.write(stamp)
    setTimeout(() => res.end(' (end)'), 20)
    return
  }
  if (u.startsWith('/smax')) {
    res.setHeader('Cache-Control', 's-maxage=60')
  } else if (u.startsWith('/nostore')) {
    res.setHeader('Cache-Control', 'public, max-age=60, no-store')
  } else if (u.startsWith('/ttl1')) {
    res.setHeader('Cache-Control', 'public, max-age=1')
  } else if (!u.startsWith('/plain') && !u.startsWith('/static') && !u.startsWith('/search')) {
    res.setHeader('Cache-Control', 'public, max-age=60')
    res.setHeader('ETag', '"e' + seen + '"')
    res.setHeader('Last-Modified', 'Sun, 06 Nov 1994 08:49:37 GMT')
  }
  if (u.startsWith('/cookie')) res.setHeader('Set-Cookie', 'a=' + seen)
  if (u.startsWith('/vary')) res.setHeader('Vary', 'Accept')
  if (u.startsWith('/missing')) res.statusCode = 404
  res.setHeader('Content-Type', 'text/plain')
  res.end(stamp)
})
server.listen(0, () => process.stdout.write('listening\\n'))
`

const RULES = JSON.stringify([{ path: '/static/', ttl: 60 }, { path: '/search', ttl: 60, query: true }])

let dir
let appFile
let certs

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-router-cache-'))
  appFile = path.join(dir, 'app.js')
  fs.writeFileSync(appFile, APP)
  certs = makeCerts()
})

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
  if (certs) certs.cleanup()
})

/** The n=... the app wrote into a body. */
function seenBy (body) {
  const m = /^n=(\d+) /.exec(body.toString())
  if (m === null) throw new Error(`not a body the app made: ${JSON.stringify(body.toString())}`)
  return Number(m[1])
}

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
  const routers = []
  const children = new Set()

  afterEach(async () => {
    for (const child of children) await stopApp(child)
    for (const r of routers.splice(0)) await r.close()
  })

  async function router (opts) {
    const r = await start(opts)
    routers.push(r)
    return r
  }

  /** A router with one queue, `app`, on a free port: { r, port }. */
  async function routerWithQueue (opts, queueOpts = {}) {
    const r = await router(opts)
    const port = (await r.createQueue('app', { urls: ['http://+:0/'], ...queueOpts })).ports[0]
    return { r, port }
  }

  /** An instance of the app attached to r's queue `app`, as a supervisor starts it. */
  function startApp (r, extraEnv = {}) {
    const env = standaloneEnv({ HTTPSYS_HUB: r.socketPath, HTTPSYS_QUEUE: 'app', HTTPSYS_BACKEND: 'hub', HTTPSYS_CACHE: RULES, ...extraEnv })
    const child = spawn(process.execPath, ['-r', REGISTER, appFile], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
    children.add(child)
    child.exited = new Promise((resolve) => child.once('exit', resolve))
    let err = ''
    child.stderr.setEncoding('utf8').on('data', (d) => { err += d })
    return new Promise((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (d) => { if (d.includes('listening')) resolve(child) })
      child.once('exit', (code, signal) => reject(new Error(`the app exited (${code ?? signal}) before listening:\n${err}`)))
    })
  }

  async function stopApp (child) {
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid, 'SIGKILL')
    await child.exited
    children.delete(child)
  }

  /** A router, its queue and one app instance: { r, port, app }. */
  async function setup (opts, queueOpts, appEnv) {
    const { r, port } = await routerWithQueue(opts, queueOpts)
    const app = await startApp(r, appEnv)
    return { r, port, app }
  }

  describe('what is stored and how it is answered', () => {
    test('Cache-Control: public, max-age=60 is answered from the cache: the same body, Age, Content-Length, the app\'s headers', async () => {
      const { port } = await setup()
      const first = await request(port, { path: '/public' })
      expect(first.status).toBe(200)
      expect(first.body.toString()).toMatch(/^n=1 url=\/public /)
      expect(first.headers.age).toBeUndefined()
      for (let i = 0; i < 3; i++) {
        const res = await request(port, { path: '/public' })
        expect(res.status).toBe(200)
        expect(res.body.toString()).toBe(first.body.toString()) // n=1: the app never saw it
        expect(res.headers.age).toMatch(/^\d+$/)
        expect(res.headers['content-length']).toBe(String(first.body.length))
        expect(res.headers['content-type']).toBe('text/plain')
        expect(res.headers['cache-control']).toBe('public, max-age=60')
        expect(res.headers.etag).toBe(first.headers.etag)
        expect(res.headers.date).toBe(first.headers.date)
      }
      expect(seenBy((await request(port, { path: '/plain' })).body)).toBe(2)
    })

    test('the stored answer\'s head, byte for byte: the app\'s fields in order, then Content-Length and Age; Connection only where the router closes', async () => {
      const { port } = await setup()
      const len = (await request(port, { path: '/bytes', headers: { host: '127.0.0.1' } })).body.length
      const c = new RawClient(port)
      await c.connected
      let raw = ''
      c.socket.on('data', (d) => { raw += d.toString('latin1') })
      c.write('GET /bytes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /bytes HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\nGET /bytes HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
      await c.waitClosed()
      // the heads as written, but Date and the Age's value
      const heads = []
      for (let at = 0; at < raw.length;) {
        const end = raw.indexOf('\r\n\r\n', at)
        const head = raw.slice(at, end)
        heads.push(head.replace(/\r\nDate: [^\r]*/, '').replace(/\r\nAge: \d+/, '\r\nAge: A'))
        at = end + 4 + Number(/Content-Length: (\d+)/.exec(head)[1])
      }
      expect(heads[0]).toBe('HTTP/1.1 200 OK\r\nCache-Control: public, max-age=60\r\nETag: "e1"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Type: text/plain\r\nContent-Length: ' + len + '\r\nAge: A')
      expect(heads[1]).toBe(heads[0] + '\r\nConnection: keep-alive')
      expect(heads[2]).toBe(heads[0] + '\r\nConnection: close')
      c.close()
    })

    test('a 200 KB response (under cache_max_response) is stored whole; one over it is not', async () => {
      const { port } = await setup({ cacheMaxResponse: 100000 })
      const small = await request(port, { path: '/big/a' })
      expect(small.body.length).toBeGreaterThan(200000)
      expect((await request(port, { path: '/big/a' })).headers.age).toBeUndefined()
      await stopApp([...children][0])
      const { port: p2, r: r2 } = await setup()
      const first = await request(p2, { path: '/big' })
      expect(first.body.toString()).toMatch(/^n=1 url=\/big /)
      const again = await request(p2, { path: '/big' })
      expect(again.headers.age).toMatch(/^\d+$/)
      expect(again.headers['content-length']).toBe(String(first.body.length))
      expect(again.body.equals(first.body)).toBe(true)
      expect((await r2.queueStats('app')).cache).toMatchObject({ stores: 1, hits: 1, entries: 1 })
    })

    test('a chunked response (writeHead then end) is stored bare, with a Content-Length; a response sent in two writes is stored whole', async () => {
      const { port } = await setup()
      const first = await request(port, { path: '/chunked' })
      expect(first.headers['transfer-encoding']).toBe('chunked')
      const again = await request(port, { path: '/chunked' })
      expect(again.body.toString()).toBe(first.body.toString())
      expect(again.headers['transfer-encoding']).toBeUndefined()
      expect(again.headers['content-length']).toBe(String(first.body.length))
      expect(again.headers.age).toMatch(/^\d+$/)
      const stream = await request(port, { path: '/stream' })
      expect(stream.body.toString()).toMatch(/ \(end\)$/)
      const streamAgain = await request(port, { path: '/stream' })
      expect(streamAgain.body.toString()).toBe(stream.body.toString())
      expect(streamAgain.headers.age).toMatch(/^\d+$/)
    })

    test('HEAD is the head of the cached GET, with its Content-Length and no body', async () => {
      const { port } = await setup()
      const full = await request(port, { path: '/head' })
      const head = await request(port, { path: '/head', method: 'HEAD' })
      expect(head.status).toBe(200)
      expect(head.body.length).toBe(0)
      expect(head.headers['content-length']).toBe(String(full.body.length))
      expect(head.headers.age).toMatch(/^\d+$/)
      expect(head.headers.etag).toBe(full.headers.etag) // the app would have made a new ETag
      expect(seenBy((await request(port, { path: '/plain/after' })).body)).toBe(2)
    })

    test('Range and conditional requests are answered from the entry', async () => {
      const { port } = await setup()
      const full = await request(port, { path: '/range' })
      const len = full.body.length
      const part = await request(port, { path: '/range', headers: { range: 'bytes=4-9' } })
      expect(part.status).toBe(206)
      expect(part.headers['content-range']).toBe(`bytes 4-9/${len}`)
      expect(part.headers['content-length']).toBe('6')
      expect(part.headers['content-type']).toBe('text/plain')
      expect(part.headers.age).toMatch(/^\d+$/)
      expect(part.body.toString()).toBe(full.body.subarray(4, 10).toString())
      const suffix = await request(port, { path: '/range', headers: { range: 'bytes=-5' } })
      expect(suffix.status).toBe(206)
      expect(suffix.body.toString()).toBe(full.body.subarray(len - 5).toString())
      const open = await request(port, { path: '/range', headers: { range: 'bytes=10-' } })
      expect(open.body.toString()).toBe(full.body.subarray(10).toString())
      const beyond = await request(port, { path: '/range', headers: { range: `bytes=${len + 10}-` } })
      expect(beyond.status).toBe(416)
      expect(beyond.headers['content-range']).toBe(`bytes */${len}`)
      expect(beyond.body.length).toBe(0)
      // several ranges, or If-Range naming another ETag: the whole 200
      const several = await request(port, { path: '/range', headers: { range: 'bytes=0-1,3-4' } })
      expect(several.status).toBe(200)
      expect(several.body.equals(full.body)).toBe(true)
      const stale = await request(port, { path: '/range', headers: { range: 'bytes=0-1', 'if-range': '"other"' } })
      expect(stale.status).toBe(200)
      const valid = await request(port, { path: '/range', headers: { range: 'bytes=0-1', 'if-range': full.headers.etag } })
      expect(valid.status).toBe(206)

      const notModified = await request(port, { path: '/range', headers: { 'if-none-match': `"x", W/${full.headers.etag}` } })
      expect(notModified.status).toBe(304)
      expect(notModified.headers.etag).toBe(full.headers.etag)
      expect(notModified.headers['cache-control']).toBe('public, max-age=60')
      expect(notModified.headers['content-type']).toBeUndefined()
      expect(notModified.headers.age).toMatch(/^\d+$/)
      expect(notModified.body.length).toBe(0)
      const since = await request(port, { path: '/range', headers: { 'if-modified-since': 'Mon, 07 Nov 1994 08:49:37 GMT' } })
      expect(since.status).toBe(304)
      const before = await request(port, { path: '/range', headers: { 'if-modified-since': 'Sat, 05 Nov 1994 08:49:37 GMT' } })
      expect(before.status).toBe(200)
      expect(before.body.equals(full.body)).toBe(true)
    })

    test('never stored: Set-Cookie, Vary, no-store, a status other than 200, a query string without a rule; a request with Authorization is neither answered nor stored', async () => {
      const { r, port } = await setup()
      for (const p of ['/cookie', '/vary', '/nostore', '/missing', '/public?q=1', '/plain']) {
        const a = await request(port, { path: p })
        const b = await request(port, { path: p })
        expect(b.headers.age).toBeUndefined()
        expect(seenBy(b.body)).toBe(seenBy(a.body) + 1)
      }
      // stored for anonymous clients, never given to one with Authorization
      const anon = await request(port, { path: '/auth' })
      const mine = await request(port, { path: '/auth', headers: { authorization: 'Basic dTpw' } })
      expect(mine.headers.age).toBeUndefined()
      expect(mine.body.toString()).toContain('auth=Basic dTpw')
      // nor is its response stored
      const mine2 = await request(port, { path: '/auth2', headers: { authorization: 'Basic dTpw' } })
      const anon2 = await request(port, { path: '/auth2' })
      expect(anon2.body.toString()).not.toBe(mine2.body.toString())
      expect(anon2.body.toString()).toContain('auth=none')
      expect((await request(port, { path: '/auth' })).body.toString()).toBe(anon.body.toString())
      // a POST is never answered from the cache
      const post = await request(port, { method: 'POST', path: '/auth', body: 'x' })
      expect(post.headers.age).toBeUndefined()
      expect((await r.queueStats('app')).cache.stores).toBe(2) // /auth, /auth2 (anonymous)
    })

    test('the config rules (HTTPSYS_CACHE) decide on the URL the client sent: /static/ and a /search query', async () => {
      const { port } = await setup()
      const css = await request(port, { path: '/static/site.css' })
      expect(css.headers['cache-control']).toBeUndefined()
      expect((await request(port, { path: '/static/site.css' })).body.toString()).toBe(css.body.toString())
      const q1 = await request(port, { path: '/search?q=1' })
      const q2 = await request(port, { path: '/search?q=2' })
      expect(q2.body.toString()).not.toBe(q1.body.toString())
      expect((await request(port, { path: '/search?q=1' })).body.toString()).toBe(q1.body.toString())
      expect((await request(port, { path: '/static/x?v=1' })).headers.age).toBeUndefined()
    })

    test('an expired entry is not answered: the app makes the page again', async () => {
      const { port } = await setup()
      const a = await request(port, { path: '/ttl1' })
      expect((await request(port, { path: '/ttl1' })).body.toString()).toBe(a.body.toString())
      await new Promise((resolve) => setTimeout(resolve, 2100))
      const b = await request(port, { path: '/ttl1' })
      expect(b.headers.age).toBeUndefined()
      expect(seenBy(b.body)).toBe(seenBy(a.body) + 1)
    })

    // hub-cache-upgrade.test.js: the upgrade is the app's to answer, never a stored page
    test('an upgrade request to a cached URL reaches the app, and the page stays cached for GETs', async () => {
      const { port } = await setup()
      const page = await request(port, { path: '/ws' })
      expect((await request(port, { path: '/ws' })).body.toString()).toBe(page.body.toString())
      const c = new RawClient(port)
      await c.connected
      c.write('GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n')
      await until(() => c.responses.length > 0 || c.ended, 5000, 'an answer to the upgrade')
      if (c.responses.length > 0) expect(c.responses[0].body.toString()).not.toBe(page.body.toString())
      c.close()
      const plain = await request(port, { path: '/plain/after-upgrade' })
      expect(seenBy(plain.body)).toBe(seenBy(page.body) + 2) // the upgrade request reached the app
      expect((await request(port, { path: '/ws' })).body.toString()).toBe(page.body.toString())
    })
  })

  describe('the key: what a client chooses of its request target and Host', () => {
    test('Host is lower case with its port, as the app saw it: one entry per port; another host, another entry', async () => {
      const { port } = await setup()
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
      expect((await request(port, { path: '/key/host', headers: { host: 'example.com' } })).body.toString()).toBe(bare.body.toString())
      expect((await request(port, { path: '/key/host', headers: { host: `example.com:${port}` } })).body.toString()).toBe(first.body.toString())
      const other = await request(port, { path: '/key/host', headers: { host: `other.example:${port}` } })
      expect(other.headers.age).toBeUndefined()
      expect(seenBy(other.body)).toBeGreaterThan(seenBy(first.body))
    })

    // issue 23: HTTP.SYS refuses such a Host; had the app seen it, its page (which reflects
    // the Host) would have been stored and served to every client of that Host
    test('a Host whose port is not digits is 400 and never reaches the app', async () => {
      const { port } = await setup()
      let n = 0
      for (const host of ["localhost:'onmouseover='alert(1)'", 'localhost:80a', 'localhost:1:2']) {
        n++
        const before = seenBy((await request(port, { path: '/plain/count' })).body)
        const bad = await request(port, { path: `/key/xss/${n}`, headers: { host } })
        expect(bad.status).toBe(400)
        expect(bad.body.toString()).not.toContain('n=')
        const clean = await request(port, { path: `/key/xss/${n}`, headers: { host: 'localhost' } })
        expect(clean.status).toBe(200)
        expect(clean.body.toString()).toContain('host=localhost ')
        expect(seenBy((await request(port, { path: '/plain/count' })).body)).toBe(before + 2)
        const absolute = await request(port, { path: `http://${host}/key/xss/${n}`, headers: { host: 'localhost' } })
        expect(absolute.status).toBe(400)
      }
    })

    test('a target with dot segments or escaped unreserved characters hits the entry of its canonical path', async () => {
      const { port } = await setup()
      const direct = await request(port, { path: '/key/x' })
      for (const target of ['/a/../key/x', '/key/./x', '/key/y/../x', '/%6bey/%78']) {
        const res = await request(port, { path: target })
        expect(res.status).toBe(200)
        expect(res.body.toString()).toBe(direct.body.toString())
        expect(res.headers.age).toMatch(/^\d+$/)
      }
      const dotted = await request(port, { path: '/b/./../key/z' })
      expect(dotted.body.toString()).toMatch(/^n=\d+ url=\/key\/z /)
      const plain = await request(port, { path: '/key/z' })
      expect(plain.body.toString()).toBe(dotted.body.toString())
      const upper = await request(port, { path: '/KEY/x' })
      expect(upper.body.toString()).not.toBe(direct.body.toString())
    })
  })

  describe('pipelining', () => {
    const get = (port, p, extra = '') => `GET ${p} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${extra}\r\n`

    test('GETs for cached URLs written in one TCP write get their answers in order', async () => {
      const { port } = await setup()
      const a = await request(port, { path: '/pipe/a' })
      const b = await request(port, { path: '/pipe/b' })
      const c = new RawClient(port)
      await c.connected
      c.write(get(port, '/pipe/a') + get(port, '/pipe/b') + get(port, '/pipe/a', 'Connection: close\r\n'))
      const got = await c.waitFor(3)
      expect(got.map((x) => x.body.toString())).toEqual([a.body.toString(), b.body.toString(), a.body.toString()])
      for (const x of got) expect(x.headers.age).toMatch(/^\d+$/)
      expect(got[0].headers.connection).toBeUndefined()
      expect(got[2].headers.connection).toBe('close')
      await c.waitClosed()
      expect(c.responses.length).toBe(3)
      expect(c.buf.length).toBe(0)
    })

    test('a cached answer waits behind an earlier request the app is still answering', async () => {
      const { port } = await setup()
      const a = await request(port, { path: '/pipe/c' })
      const c = new RawClient(port)
      await c.connected
      c.write(get(port, '/pipe/c') + get(port, '/slow/1') + get(port, '/pipe/c'))
      const got = await c.waitFor(3, 15000)
      expect(got.map((x) => x.status)).toEqual([200, 200, 200])
      expect(got[0].body.toString()).toBe(a.body.toString())
      expect(got[1].body.toString()).toMatch(/^n=\d+ url=\/slow\/1 /)
      expect(got[2].body.toString()).toBe(a.body.toString())
      c.close()
    })
  })

  describe('invalidation, stats and the budget', () => {
    test('an instance attaching, and one leaving, empty the app\'s entries', async () => {
      const { r, port, app } = await setup()
      const a = await request(port, { path: '/inv' })
      expect((await request(port, { path: '/inv' })).body.toString()).toBe(a.body.toString())
      const second = await startApp(r)
      // a new instance may be a new build: the entry went when it attached
      const b = await request(port, { path: '/inv' })
      expect(b.headers.age).toBeUndefined()
      expect((await request(port, { path: '/inv' })).body.toString()).toBe(b.body.toString())
      await stopApp(second)
      await eventually(async () => (await r.queueStats('app')).workers.length === 1, 5000, 'the instance to leave')
      const c = await request(port, { path: '/inv' })
      expect(c.headers.age).toBeUndefined()
      expect(c.body.toString()).not.toBe(b.body.toString())
      expect(app.exitCode).toBe(null)
    })

    test('queueStats has the app\'s cache counters; an app with cache: false has none and is never answered from it', async () => {
      const r = await router()
      const port = (await r.createQueue('app', { urls: ['http://+:0/on/'] })).ports[0]
      await r.createQueue('off', { urls: [`http://+:${port}/off/`], cache: false })
      await startApp(r)
      const off = await startApp(r, { HTTPSYS_QUEUE: 'off' })
      expect(off.exitCode).toBe(null)
      expect((await r.queueStats('app')).cache).toEqual({ hits: 0, misses: 0, stores: 0, evictions: 0, entries: 0, bytes: 0 })
      await request(port, { path: '/on/x' })
      await request(port, { path: '/on/x' })
      await request(port, { path: '/on/x', method: 'HEAD' })
      await request(port, { path: '/on/x', method: 'DELETE' })
      const s = (await r.queueStats('app')).cache
      expect(s).toMatchObject({ hits: 2, misses: 1, stores: 1, evictions: 0, entries: 1 })
      expect(s.bytes).toBeGreaterThan(512)
      expect((await r.queueStats('off')).cache).toBe(null)
      const a = await request(port, { path: '/off/x' })
      const b = await request(port, { path: '/off/x' })
      expect(b.headers.age).toBeUndefined()
      expect(seenBy(b.body)).toBe(seenBy(a.body) + 1)
      await r.deleteQueue('app')
    })

    test('cacheSize 0 turns the cache off for every app', async () => {
      const { r, port } = await setup({ cacheSize: 0 })
      const a = await request(port, { path: '/public' })
      const b = await request(port, { path: '/public' })
      expect(b.headers.age).toBeUndefined()
      expect(seenBy(b.body)).toBe(seenBy(a.body) + 1)
      expect((await r.queueStats('app')).cache).toBe(null)
    })

    // issue 23: the budget counts each entry's key (a long Host), and bounds their number
    test('the byte budget counts keys: long Hosts evict the least recently used entries', async () => {
      const { r, port } = await setup({ cacheSize: 64 * 1024 })
      const long = ('h'.repeat(59) + '.').repeat(100)
      for (let i = 0; i < 20; i++) {
        const res = await request(port, { path: '/budget', headers: { host: `${long}${i}.example` } })
        expect(res.status).toBe(200)
      }
      const s = (await r.queueStats('app')).cache
      expect(s.stores).toBe(20)
      expect(s.evictions).toBeGreaterThan(0)
      expect(s.bytes).toBeLessThanOrEqual(64 * 1024)
      expect(s.entries).toBe(20 - s.evictions)
      // the first went, the last is answered
      const first = await request(port, { path: '/budget', headers: { host: `${long}0.example` } })
      expect(first.headers.age).toBeUndefined()
      const last = await request(port, { path: '/budget', headers: { host: `${long}19.example` } })
      expect(last.headers.age).toMatch(/^\d+$/)
    })
  })

  // hub-cache.test.js "HTTP/2 over TLS" and "client certificates": the cache serves h2
  // streams as HTTP/1.1 requests (src/hub/h2-request.js respondFromCache), one entry for
  // both (the key is scheme, port, Host, target), and a client certificate is treated
  // like Authorization unless the app says public (issue 23)
  describe('over TLS and h2', () => {
    let r
    let http
    let https
    let session
    const client = () => ({ cert: certs.read(certs.client.cert), key: certs.read(certs.client.key) })

    beforeEach(async () => {
      https = await freePort()
      r = await router({ tls: [{ port: https, cert: certs.localhost.cert, key: certs.localhost.key, ca: certs.ca.cert, requestCert: true, rejectUnauthorized: false }] })
      // (the native router lists a port-0 prefix after the fixed ones: the http port by its scheme)
      const made = await r.createQueue('app', { urls: ['http://+:0/', `https://+:${https}/`] })
      http = made.ports[made.urls.findIndex((u) => u.startsWith('http:'))]
      await startApp(r)
      session = await h2connect(https)
    })

    afterEach(async () => {
      if (session) await closeSession(session)
      session = null
    })

    /** An h2 session that presents the client certificate. */
    function h2WithCert () {
      return new Promise((resolve, reject) => {
        const s = require('node:http2').connect(`https://127.0.0.1:${https}`, { rejectUnauthorized: false, ...client() })
        s.once('connect', () => resolve(s))
        s.once('error', reject)
      })
    }

    test('an h2 response is answered from the cache to later h2 requests: same body, Age, Content-Length', async () => {
      const first = await h2(session, { ':path': '/h2/same' })
      expect(first.status).toBe(200)
      expect(first.headers.age).toBeUndefined() // made by the app
      expect(first.body.toString()).toMatch(/^n=\d+ url=\/h2\/same .* v=2\.0 cert=none$/)
      const again = await h2(session, { ':path': '/h2/same' })
      expect(again.status).toBe(200)
      expect(again.body.toString()).toBe(first.body.toString())
      expect(again.headers.age).toMatch(/^\d+$/)
      expect(again.headers['content-length']).toBe(String(first.body.length))
      expect(again.headers['content-type']).toBe('text/plain')
      expect(again.headers['cache-control']).toBe('public, max-age=60')
      expect(again.headers.etag).toBe(first.headers.etag)
      expect(again.headers.date).toMatch(/ GMT$/)
      // the app's fields as stored, in its order, then Content-Length and Age
      expect(Object.keys(again.headers)).toEqual([...Object.keys(first.headers).filter((k) => k !== 'content-length'), 'content-length', 'age'])
      // many streams at once on one connection, and a new connection: all from the entry
      const many = await Promise.all(Array.from({ length: 20 }, () => h2(session, { ':path': '/h2/same' })))
      for (const res of many) {
        expect(res.status).toBe(200)
        expect(res.body.toString()).toBe(first.body.toString())
      }
      const other = await h2connect(https)
      try {
        expect((await h2(other, { ':path': '/h2/same' })).body.toString()).toBe(first.body.toString())
      } finally {
        await closeSession(other)
      }
      // the app saw the first request only
      const plain = await h2(session, { ':path': '/plain/h2' })
      expect(seenBy(plain.body)).toBe(seenBy(first.body) + 1)
      const s = (await r.queueStats('app')).cache
      expect(s.stores).toBe(1)
      expect(s.hits).toBe(22)
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
      expect(notModified.headers['content-type']).toBeUndefined()
      expect(notModified.body.length).toBe(0)
    })

    test('an h2 request with Authorization is neither answered nor stored; a chunked response is stored bare', async () => {
      await h2(session, { ':path': '/h2/auth' })
      const mine = await h2(session, { ':path': '/h2/auth', authorization: 'Basic dTpw' })
      expect(mine.headers.age).toBeUndefined()
      expect(mine.body.toString()).toContain('auth=Basic dTpw')
      const chunked = await h2(session, { ':path': '/chunked/h2' })
      const again = await h2(session, { ':path': '/chunked/h2' })
      expect(again.body.toString()).toBe(chunked.body.toString())
      expect(again.headers['content-length']).toBe(String(chunked.body.length))
      const stream = await h2(session, { ':path': '/stream/h2' })
      expect(stream.body.toString()).toMatch(/ \(end\)$/)
      expect((await h2(session, { ':path': '/stream/h2' })).body.toString()).toBe(stream.body.toString())
    })

    // issue 23: the Host port rule holds for :authority as for HTTP/1.1
    test('an :authority whose port is not digits is 400 and never reaches the app', async () => {
      for (const authority of ["localhost:'onmouseover='x'", 'localhost:80a']) {
        const bad = await h2(session, { ':path': '/h2/authority', ':authority': authority })
        expect(bad.status).toBe(400)
        expect(bad.body.toString()).not.toContain('n=')
      }
      const ok = await h2(session, { ':path': '/h2/authority', ':authority': `localhost:${https}` })
      expect(ok.status).toBe(200)
      expect(ok.body.toString()).toContain(`host=localhost:${https} `)
      expect(seenBy(ok.body)).toBe(1)
    })

    test('one entry for HTTP/1.1 over TLS and h2 (same scheme, host, port and path); plain http is another', async () => {
      // stored from HTTP/1.1, served to h2
      const viaH1 = await httpsRequest(https, { path: '/cross/one' })
      expect(viaH1.status).toBe(200)
      expect(viaH1.body.toString()).toMatch(/^n=\d+ url=\/cross\/one .* v=1\.1 /)
      const toH2 = await h2(session, { ':path': '/cross/one' })
      expect(toH2.status).toBe(200)
      expect(toH2.body.toString()).toBe(viaH1.body.toString())
      expect(toH2.headers.age).toMatch(/^\d+$/)
      expect(toH2.headers['content-length']).toBe(String(viaH1.body.length))
      // stored from h2, served to HTTP/1.1
      const viaH2 = await h2(session, { ':path': '/cross/two' })
      expect(viaH2.body.toString()).toMatch(/^n=\d+ url=\/cross\/two .* v=2\.0 /)
      const toH1 = await httpsRequest(https, { path: '/cross/two' })
      expect(toH1.status).toBe(200)
      expect(toH1.body.toString()).toBe(viaH2.body.toString())
      expect(toH1.headers.age).toMatch(/^\d+$/)
      expect(toH1.headers['content-length']).toBe(String(viaH2.body.length))
      expect(toH1.headers['transfer-encoding']).toBeUndefined()
      // http://127.0.0.1:<other port>/cross/two is not https://127.0.0.1:<port>/cross/two
      const plain = await request(http, { path: '/cross/two' })
      expect(plain.status).toBe(200)
      expect(plain.headers.age).toBeUndefined()
      expect(seenBy(plain.body)).toBeGreaterThan(seenBy(viaH2.body))
    })

    test('a response to a client with a certificate (s-maxage, not public) is never served to a client without one', async () => {
      const mine = await httpsRequest(https, { path: '/smax/who', ...client() })
      expect(mine.status).toBe(200)
      expect(mine.body.toString()).toMatch(/cert=test client$/)
      for (let i = 0; i < 2; i++) {
        const anonymous = await httpsRequest(https, { path: '/smax/who' })
        expect(anonymous.status).toBe(200)
        expect(anonymous.body.toString()).toMatch(/cert=none$/)
      }
      // the anonymous page was stored: a second anonymous client gets it
      expect((await httpsRequest(https, { path: '/smax/who' })).headers.age).toMatch(/^\d+$/)
      // and over h2
      const s = await h2WithCert()
      try {
        const viaH2 = await h2(s, { ':path': '/smax/who-h2' })
        expect(viaH2.body.toString()).toMatch(/cert=test client$/)
        const anonymous = await httpsRequest(https, { path: '/smax/who-h2' })
        expect(anonymous.body.toString()).toMatch(/cert=none$/)
        // an entry that is not public is no answer to an h2 client with a certificate
        const stored = await h2(session, { ':path': '/smax/who-h2' })
        expect(stored.headers.age).toMatch(/^\d+$/)
        const again = await h2(s, { ':path': '/smax/who-h2' })
        expect(again.headers.age).toBeUndefined()
        expect(again.body.toString()).toMatch(/cert=test client$/)
      } finally {
        await closeSession(s)
      }
    })

    test('Cache-Control: public is the app\'s word that the page is the same for everyone: stored and served both ways, over h2 too', async () => {
      const mine = await httpsRequest(https, { path: '/public/cert', ...client() })
      expect(mine.body.toString()).toMatch(/cert=test client$/)
      const anonymous = await httpsRequest(https, { path: '/public/cert' })
      expect(anonymous.body.toString()).toBe(mine.body.toString())
      expect(anonymous.headers.age).toMatch(/^\d+$/)
      const s = await h2WithCert()
      try {
        const viaH2 = await h2(s, { ':path': '/public/cert-h2' })
        expect(viaH2.body.toString()).toMatch(/cert=test client$/)
        const again = await h2(s, { ':path': '/public/cert-h2' })
        expect(again.body.toString()).toBe(viaH2.body.toString())
        expect(again.headers.age).toMatch(/^\d+$/)
        expect((await h2(session, { ':path': '/public/cert-h2' })).body.toString()).toBe(viaH2.body.toString())
      } finally {
        await closeSession(s)
      }
    })
  })
})
