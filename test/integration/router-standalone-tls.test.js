'use strict'

// A standalone https server (node -r register, the process's own router) serves TLS
// from the moment listen() reports it listening, as node does: its certificate goes to
// the router with the port's bind, not later with the worker's attach. On the native
// router (issue 25), both ways it gets the port: node binds and hands the socket over,
// or the router binds, as on Windows (HTTPSYS_STANDALONE_BIND=router).

const { spawnSync, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { makeCerts } = require('../helpers/tls-certs')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')
const { routerBin } = require('../helpers/native-router')

const ROUTERS = [
  ['the native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })],
  // the path Windows runs (standalone-native-win.js): the router binds, the key material goes with bindQueue
  ['the native router binding itself', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin(), HTTPSYS_STANDALONE_BIND: 'router' })]
]

let certs
beforeAll(() => { certs = makeCerts() })
afterAll(() => certs.cleanup())

test.each(ROUTERS)('%s: a TLS handshake right after \'listening\' succeeds, and the request is answered', (name, routerEnv) => {
  const app = path.join(certs.dir, 'https-now.js')
  fs.writeFileSync(app, `
const fs = require('node:fs')
const https = require('node:https')
const server = https.createServer({ key: fs.readFileSync(${JSON.stringify(certs.localhost.key)}), cert: fs.readFileSync(${JSON.stringify(certs.localhost.cert)}) }, (req, res) => res.end('ok'))
server.listen(0, () => {
  // the handshake alone first (a bare TLS client), then a request on its own connection
  const tls = require('node:tls')
  const s = tls.connect({ port: server.address().port, host: '127.0.0.1', rejectUnauthorized: false })
  s.on('error', (err) => { console.log('handshake failed: ' + err.message); process.exit(1) })
  s.on('secureConnect', () => {
    s.destroy()
    https.get({ port: server.address().port, host: '127.0.0.1', rejectUnauthorized: false }, (res) => {
      let body = ''
      res.on('data', (c) => { body += c })
      res.on('end', () => { console.log(res.statusCode + ' ' + body); process.exit(0) })
    }).on('error', (err) => { console.log('failed: ' + err.message); process.exit(1) })
  })
})
`)
  const r = spawnSync(process.execPath, ['-r', REGISTER, app], { env: standaloneEnv(routerEnv()), encoding: 'utf8', timeout: 20000 })
  expect(r.stdout.trim()).toBe('200 ok')
  expect(r.status).toBe(0)
})

// ---- an https server's own key material and client certificates, as node serves them ----
// Each app runs three ways: on node alone (the reference), and with the preload each
// way of ROUTERS; what its clients saw must be node's. routerKids() says the router
// served it: the app's child process (Linux: /proc), none on node alone.

const { runPreloaded } = require('../helpers/run-preloaded')

const KIDS = `function routerKids () {
  // (every thread's: where the router binds, a worker thread spawns it)
  const fs = require('node:fs')
  try { return fs.readdirSync('/proc/' + process.pid + '/task').reduce((n, t) => n + fs.readFileSync('/proc/' + process.pid + '/task/' + t + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean).length, 0) } catch { return null }
}
`

/** Runs source as an app (with the preload unless env is null); resolves { lines, err, code }. */
const runApp = (source, env) => runPreloaded(KIDS + source, {
  file: path.join(certs.dir, `app-${process.hrtime.bigint()}.js`),
  cwd: certs.dir,
  preload: env !== null,
  env: env || {},
  timeoutMs: 20000
})

/** node's result, then each router's, each with the children the app had (the routers'). */
async function everyWay (source, extraEnv = {}) {
  const node = await runApp(source, { ...extraEnv, NODE_OPTIONS: '' })
  const ways = {}
  for (const [name, routerEnv] of ROUTERS) ways[name] = await runApp(source, { ...routerEnv(), ...extraEnv })
  return { node, ways }
}

const expectServedLikeNode = ({ node, ways }) => {
  expect(node.err).toBe('')
  expect(node.code).toBe(0)
  for (const [name, r] of Object.entries(ways)) {
    const [kids, ...rest] = r.lines
    expect({ name, err: r.err, code: r.code, lines: rest }).toEqual({ name, err: '', code: 0, lines: node.lines.slice(1) })
    // the router runs as the app's child
    if (kids.kids !== null) expect({ name, kids: kids.kids }).toEqual({ name, kids: 1 })
  }
}

// a request to each server; the client's view: status, body, the certificate it was served
const ASK = `
const https = require('node:https')
function ask (server, opts = {}) {
  return new Promise((resolve) => {
    const req = https.get({ port: server.address().port, host: '127.0.0.1', servername: 'localhost', rejectUnauthorized: false, agent: false, ...opts }, (res) => {
      const cn = res.socket.getPeerCertificate().subject.CN
      let body = ''
      res.on('data', (d) => { body += d })
      res.on('end', () => resolve({ status: res.statusCode, body, cn }))
    })
    req.on('error', () => resolve({ error: true }))
  })
}
async function main (servers, clients) {
  for (const s of servers) await new Promise((resolve) => s.listen(0, '127.0.0.1', resolve))
  console.log(JSON.stringify({ kids: routerKids() }))
  for (const s of servers) for (const c of clients) console.log(JSON.stringify(await ask(s, c)))
  for (const s of servers) s.close()
}
`

test('an https server\'s own material in node\'s forms: key and cert as arrays, an encrypted key with its passphrase, a .pfx with its passphrase, served as node serves them', async () => {
  const pfx = path.join(certs.dir, 'localhost.pfx')
  execFileSync('openssl', ['pkcs12', '-export', '-in', certs.localhost.cert, '-inkey', certs.localhost.key, '-out', pfx, '-passout', 'pass:s3cret'], { stdio: 'ignore' })
  const r = await everyWay(`${ASK}
const fs = require('node:fs')
const crypto = require('node:crypto')
const key = fs.readFileSync(${JSON.stringify(certs.localhost.key)})
const cert = fs.readFileSync(${JSON.stringify(certs.localhost.cert)})
const sealed = crypto.createPrivateKey(key).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pw' })
const handle = (name) => (req, res) => res.end(name + ' ' + req.socket.encrypted + ' ' + req.socket.getProtocol())
main([
  https.createServer({ key: [key], cert: [cert.toString()] }, handle('arrays')),
  https.createServer({ key: sealed, passphrase: 'pw', cert }, handle('encrypted')),
  https.createServer({ key: [{ pem: sealed, passphrase: 'pw' }], cert }, handle('encrypted-own')),
  https.createServer({ pfx: fs.readFileSync(${JSON.stringify(pfx)}), passphrase: 's3cret' }, handle('pfx'))
], [{}])
`)
  expect(r.node.lines.slice(1)).toEqual(['arrays', 'encrypted', 'encrypted-own', 'pfx'].map((n) => ({ status: 200, body: `${n} true TLSv1.3`, cn: 'localhost' })))
  expectServedLikeNode(r)
}, 60000)

// what the server saw of each client certificate (req.socket), through the wire
const JUDGE = () => `
const fs = require('node:fs')
const read = (f) => fs.readFileSync(f)
const judge = (req, res) => {
  const peer = req.socket.getPeerCertificate()
  res.end(JSON.stringify({ authorized: req.socket.authorized, error: req.socket.authorizationError || null, cn: peer && peer.subject ? peer.subject.CN : null, issuer: peer && peer.issuer ? peer.issuer.CN : null }))
}
const clients = [
  {},
  { cert: read(${JSON.stringify(certs.client.cert)}), key: read(${JSON.stringify(certs.client.key)}) },
  { cert: read(${JSON.stringify(certs.stranger.cert)}), key: read(${JSON.stringify(certs.stranger.key)}) }
]
const own = { key: read(${JSON.stringify(certs.localhost.key)}), cert: read(${JSON.stringify(certs.localhost.cert)}) }
`

test('requestCert with a ca: req.socket.authorized, authorizationError and getPeerCertificate() for a client the CA signed, a stranger and none; rejectUnauthorized refuses the two', async () => {
  const r = await everyWay(`${ASK}${JUDGE()}
main([
  https.createServer({ ...own, requestCert: true, rejectUnauthorized: false, ca: read(${JSON.stringify(certs.ca.cert)}) }, judge),
  https.createServer({ ...own, requestCert: true, ca: [read(${JSON.stringify(certs.ca.cert)}).toString()] }, judge)
], clients)
`)
  const body = (authorized, error, cn, issuer) => ({ status: 200, cn: 'localhost', body: JSON.stringify({ authorized, error, cn, issuer }) })
  expect(r.node.lines.slice(1)).toEqual([
    body(false, 'UNABLE_TO_GET_ISSUER_CERT', null, null),
    body(true, null, 'test client', 'httpsys test CA'),
    body(false, 'DEPTH_ZERO_SELF_SIGNED_CERT', 'stranger', 'stranger'),
    { error: true },
    body(true, null, 'test client', 'httpsys test CA'),
    { error: true }
  ])
  expectServedLikeNode(r)
}, 60000)

test('requestCert without a ca: client certificates are checked against node\'s default CAs (here NODE_EXTRA_CA_CERTS), as node checks them', async () => {
  const r = await everyWay(`${ASK}${JUDGE()}
main([https.createServer({ ...own, requestCert: true, rejectUnauthorized: false }, judge)], clients.slice(1))
`, { NODE_EXTRA_CA_CERTS: certs.ca.cert })
  expect(r.node.lines.slice(1)).toEqual([
    { status: 200, cn: 'localhost', body: JSON.stringify({ authorized: true, error: null, cn: 'test client', issuer: 'httpsys test CA' }) },
    { status: 200, cn: 'localhost', body: JSON.stringify({ authorized: false, error: 'DEPTH_ZERO_SELF_SIGNED_CERT', cn: 'stranger', issuer: 'stranger' }) }
  ])
  expectServedLikeNode(r)
}, 60000)

test.each(ROUTERS)('%s: key material that cannot serve (a key of another certificate) is the server\'s \'error\' ERR_HTTPSYS_TLS_CERT', async (name, routerEnv) => {
  const r = await runApp(`
const fs = require('node:fs')
const https = require('node:https')
const s = https.createServer({ key: fs.readFileSync(${JSON.stringify(certs.a.key)}), cert: fs.readFileSync(${JSON.stringify(certs.localhost.cert)}) }, (req, res) => res.end())
s.on('error', (err) => { console.log(JSON.stringify({ kids: routerKids() })); console.log(JSON.stringify({ code: err.code, reason: err.reason })); process.exit(0) })
s.listen(0)
`, routerEnv())
  expect(r.lines[1]).toEqual({ code: 'ERR_HTTPSYS_TLS_CERT', reason: 'the private key does not belong to the certificate' })
  if (r.lines[0].kids !== null) expect(r.lines[0].kids).toBe(name.startsWith('the native router') ? 1 : 0)
}, 30000)

test('server.setSecureContext() on a listening server: new connections get the new certificate, as node\'s; material node refuses throws', async () => {
  const r = await everyWay(`${ASK}
const fs = require('node:fs')
const read = (f) => fs.readFileSync(f)
const s = https.createServer({ key: read(${JSON.stringify(certs.localhost.key)}), cert: read(${JSON.stringify(certs.localhost.cert)}) }, (req, res) => res.end('ok'))
s.listen(0, '127.0.0.1', async () => {
  console.log(JSON.stringify({ kids: routerKids() }))
  console.log(JSON.stringify(await ask(s)))
  s.setSecureContext({ key: read(${JSON.stringify(certs.a.key)}), cert: read(${JSON.stringify(certs.a.cert)}) })
  // (node's is synchronous; the native router hears of it over the IPC channel, so a
  // connection accepted in that moment may still get the old certificate: the first
  // answer with another one, within 2 s)
  let next = await ask(s)
  for (let i = 0; i < 40 && next.cn === 'localhost'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    next = await ask(s)
  }
  console.log(JSON.stringify(next))
  try { s.setSecureContext({ key: 'not a key', cert: read(${JSON.stringify(certs.a.cert)}) }); console.log('"taken"') } catch (err) { console.log(JSON.stringify({ threw: err.code })) }
  console.log(JSON.stringify(await ask(s)))
  s.close()
})
`)
  expect(r.node.lines.slice(1)).toEqual([
    { status: 200, body: 'ok', cn: 'localhost' },
    { status: 200, body: 'ok', cn: 'a.localhost' },
    { threw: expect.any(String) },
    { status: 200, body: 'ok', cn: 'a.localhost' }
  ])
  expectServedLikeNode(r)
}, 60000)
