'use strict'

// Unmodified https apps under `httpsys start` on the hub: https.createServer(options,
// handler).listen(port) attaches to the queue (https://+:port/) and the hub serves its
// certificate; ESM named imports; express's req.secure; h2 to an HTTP/1.1 app; the
// config's tls entries (they win over the app's, and name a bad file at start);
// redirect_http.

const fs = require('node:fs')
const https = require('node:https')
const http2 = require('node:http2')
const os = require('node:os')
const path = require('node:path')
const { start, freePort, request, writeConfig, ROOT } = require('../fixtures/apps/harness')
const { makeCerts } = require('../helpers/tls-certs')

let certs
beforeAll(() => { certs = makeCerts() })
afterAll(() => certs.cleanup())

function get (port, { path: p = '/', servername, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    https.get({ host: '127.0.0.1', port, path: p, servername, headers, rejectUnauthorized: false, agent: false }, (res) => {
      const peer = res.socket.getPeerCertificate()
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body, peer }))
    }).on('error', reject)
  })
}

function h2get (port, p = '/') {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false })
    session.on('error', reject)
    const r = session.request({ ':path': p })
    let head = null
    let body = ''
    r.setEncoding('utf8')
    r.on('response', (h) => { head = h })
    r.on('data', (c) => { body += c })
    r.on('end', () => {
      session.close()
      resolve({ status: head[':status'], headers: head, body })
    })
    r.on('error', reject)
  })
}

const appEnv = (port, pair) => ({ APP_PORT: String(port), KEY_FILE: pair.key, CERT_FILE: pair.cert })

describe('an unmodified https app', () => {
  let run
  let port

  beforeAll(async () => {
    port = await freePort()
    run = start(['test/fixtures/apps/https-app.js', '-n', 'tls'], { env: appEnv(port, certs.localhost) })
    await run.waitFor((r) => r.event === 'ready')
  })
  afterAll(async () => {
    run.signal('SIGINT')
    await run.exited
    await run.cleanup()
  })

  test('listen(port) is https://+:port/, served with the app\'s own certificate', async () => {
    const res = await get(port, { path: '/hello' })
    expect(res.status).toBe(200)
    expect(res.peer.subject.CN).toBe('localhost')
    expect(JSON.parse(res.body)).toMatchObject({
      app: 'tls', url: '/hello', httpVersion: '1.1', encrypted: true, protocol: 'TLSv1.3', cipher: expect.any(String), isHttpsServer: true
    })
  })

  test('HTTP/2 to the same app: HTTP/2.0, and no connection-specific headers back', async () => {
    const res = await h2get(port, '/two')
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body)).toMatchObject({ url: '/two', httpVersion: '2.0', alpnProtocol: 'h2', encrypted: true })
    expect(res.headers.connection).toBeUndefined()
    expect(res.headers['transfer-encoding']).toBeUndefined()
  })

  test('plain http on the https port is not served', async () => {
    await expect(request(port, { timeout: 3000 })).rejects.toThrow()
  })
})

test('ESM: import { createServer } from \'node:https\' attaches too', async () => {
  const port = await freePort()
  const run = start(['test/fixtures/apps/https-esm.mjs', '-n', 'esm'], { env: appEnv(port, certs.localhost) })
  try {
    await run.waitFor((r) => r.event === 'ready')
    expect((await get(port)).body).toBe('esm true 1.1')
  } finally {
    run.signal('SIGINT')
    await run.exited
    await run.cleanup()
  }
})

test('express: req.secure and req.protocol from the router\'s TLS, no x-forwarded-proto', async () => {
  const port = await freePort()
  const run = start(['test/fixtures/apps/https-express.js', '-n', 'exp'], { env: appEnv(port, certs.localhost) })
  try {
    await run.waitFor((r) => r.event === 'ready')
    expect(JSON.parse((await get(port)).body)).toEqual({ secure: true, protocol: 'https', hostname: '127.0.0.1' })
    expect(JSON.parse((await h2get(port)).body)).toEqual({ secure: true, protocol: 'https', hostname: '127.0.0.1' })
  } finally {
    run.signal('SIGINT')
    await run.exited
    await run.cleanup()
  }
})

describe('the config\'s tls entries', () => {
  let dir
  beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-https-')) })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  test('two apps on one port by SNI, the config\'s certificates winning over the app\'s, and redirect_http', async () => {
    const port = await freePort()
    const plain = await freePort()
    const script = path.join(ROOT, 'test', 'fixtures', 'apps', 'https-app.js')
    const file = writeConfig(dir, {
      tls: [
        { port, host: 'a.localhost', cert: certs.a.cert, key: certs.a.key },
        { port, host: 'b.localhost', cert: certs.read(certs.b.cert), key: certs.read(certs.b.key) }
      ],
      apps: [
        // the app passes the localhost certificate; the config's a.localhost one serves
        { name: 'a', script, urls: [`https://a.localhost:${port}/`], redirect_http: plain, env: appEnv(port, certs.localhost) },
        { name: 'b', script, urls: [`https://b.localhost:${port}/`], env: { APP_PORT: String(port) } }
      ]
    })
    const run = start(['-c', file])
    try {
      await run.waitFor((r) => r.event === 'ready', { count: 2 })
      const a = await get(port, { servername: 'a.localhost', headers: { host: `a.localhost:${port}` } })
      const b = await get(port, { servername: 'b.localhost', headers: { host: `b.localhost:${port}` } })
      expect(a.peer.subject.CN).toBe('a.localhost')
      expect(b.peer.subject.CN).toBe('b.localhost')
      expect(JSON.parse(a.body)).toMatchObject({ app: 'a', servername: 'a.localhost' })
      expect(JSON.parse(b.body)).toMatchObject({ app: 'b', servername: 'b.localhost' })
      const moved = await request(plain, { path: '/x?y', headers: { host: `a.localhost:${plain}` } })
      expect(moved.status).toBe(308)
      expect(moved.headers.location).toBe(`https://a.localhost:${port}/x?y`)
    } finally {
      run.signal('SIGINT')
      await run.exited
      await run.cleanup()
    }
  })

  test('a certificate and key that do not match: a clear error at start naming the files, nothing runs', async () => {
    const port = await freePort()
    const file = writeConfig(dir, {
      tls: [{ port, cert: certs.a.cert, key: certs.b.key }],
      apps: [{ name: 'x', script: path.join(ROOT, 'test', 'fixtures', 'apps', 'https-app.js'), urls: [`https://+:${port}/`] }]
    })
    const run = start(['-c', file])
    const { code } = await run.exited
    expect(code).toBe(1)
    const text = JSON.stringify(run.records) + run.stderr
    expect(text).toContain('ERR_HTTPSYS_TLS_CERT')
    expect(text).toContain(certs.a.cert)
    expect(text).toContain(certs.b.key)
    expect(run.pids()).toEqual([])
    await run.cleanup()
  })

  test('a tls entry with only a thumbprint is a config error on the hub, naming the key', async () => {
    const file = writeConfig(dir, {
      backend: 'hub',
      tls: [{ port: 8443, thumbprint: 'ab'.repeat(20) }],
      apps: [{ name: 'x', script: path.join(ROOT, 'test', 'fixtures', 'apps', 'https-app.js'), urls: ['https://+:8443/'] }]
    })
    const run = start(['-c', file])
    const { code } = await run.exited
    expect(code).toBe(1)
    const text = JSON.stringify(run.records) + run.stderr
    expect(text).toContain('tls[0].thumbprint')
    await run.cleanup()
  })
})
