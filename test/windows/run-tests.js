'use strict'

// The Wine test suite: Windows node.exe under Wine, the cross-built addon, HTTP.SYS as
// Wine implements it, clients on Linux. Run by test/windows/run.sh (which installs and
// builds everything first); prints TAP-like lines and a final `N passed, N failed`.
//
//   HTTPSYS_WINE_NODE=/path/to/node.exe WINEPREFIX=... node test/windows/run-tests.js [filter]
//
// One test at a time: under Wine, closing any request queue closes every http.sys
// listener (docs/wine.md 2.6), so servers never overlap across tests.

const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')
const W = require('./lib/wine')

const FIX = 'test/windows/fixtures'
const PRELOAD = ['--require', './src/register.js', '--require', `./${FIX}/preload-probe.js`]
const PRELOAD_ENV = { HTTPSYS_BACKEND: 'httpsys' }
// Wine's http.sys takes a request only whole, body included, into one buffer that grows by
// what the socket holds when it looks: a request whose bytes arrive in two bursts after that
// buffer is full is dropped (docs/wine.md 2.10). Over loopback a request of up to one
// segment (64 KiB less the headers) arrives in one burst, so these sizes reach the worker
// whatever the timing; backend-echo reads in 4 KiB pieces, so the larger ones still take
// many HttpReceiveRequestEntityBody calls. Larger uploads, sent in pieces, are checked on
// real Windows (test/windows-host/download.js).
const BODY_SIZES = [0, 1, 4095, 4096, 40000, 60 * 1024]

const tests = []
// keep: the test shares a server with the next ones; a failure does not stop it
// timeout: ms the test may take (default 90 s)
const test = (name, fn, { keep = false, timeout = 90000 } = {}) => tests.push({ name, fn, keep, timeout })

// Processes a test started; whatever is still running afterwards is stopped.
let running = []
function start (name, args, options) {
  const proc = W.startNode(name, args, options)
  running.push(proc)
  return proc
}

async function stopAll () {
  const procs = running
  running = []
  const slow = []
  for (const proc of procs) {
    // a supervisor is stopped the way a user would (`httpsys stop all`), others by the stop file
    if (!(await (proc.stopWith ? proc.stopWith() : W.stop(proc)))) slow.push(proc.name)
  }
  return slow
}

/** Stops the test's processes and fails when one did not exit by itself. */
async function cleanShutdown () {
  const slow = await stopAll()
  assert.deepEqual(slow, [], `did not exit after a graceful stop: ${slow.join(', ')}`)
}

function sha256 (buf) {
  return crypto.createHash('sha256').update(buf).digest('hex')
}

function json (res) {
  assert.equal(res.status, 200, `status ${res.status}: ${res.body.toString().slice(0, 300)}`)
  return JSON.parse(res.body.toString())
}

async function startEcho (prefix, name = 'backend-echo') {
  const proc = start(name, [`${FIX}/backend-echo.js`], { env: { HTTPSYS_WINE_PREFIX: prefix } })
  const m = await W.waitFor(proc, /^(READY|ERROR) (.*)$/m)
  assert.equal(m[1], 'READY', `attach failed: ${m[2]}`)
  return { proc, info: JSON.parse(m[2]) }
}

async function startPreloaded (name, script, env) {
  const proc = start(name, [...PRELOAD, script], { env: { ...PRELOAD_ENV, ...env } })
  const m = await W.waitFor(proc, /^BACKEND (\w+)$/m)
  assert.equal(m[1], 'httpsys', 'src/queue did not pick the HTTP.SYS backend for HTTPSYS_BACKEND=httpsys')
  return proc
}

async function checkBodies (port, target) {
  for (const size of BODY_SIZES) {
    const body = crypto.randomBytes(size)
    const res = await W.request(port, { method: 'POST', path: target, body, headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': size } })
    const got = json(res)
    assert.equal(got.length, size, `POST of ${size} bytes arrived as ${got.length}`)
    assert.equal(got.sha256, sha256(body), `POST of ${size} bytes arrived altered`)
  }
}

// ---------------------------------------------------------------------------
// The addon

test('the addon loads in node.exe under Wine through the loader', async () => {
  const { code, output } = await W.runNode('load-addon', [`${FIX}/load-addon.js`])
  const m = /^LOADED (.*)$/m.exec(output)
  assert.ok(m, `no LOADED line (exit ${code}):\n${W.tail(output)}`)
  const info = JSON.parse(m[1])
  assert.equal(code, 0)
  assert.ok(info.wine, 'the addon did not detect Wine')
  assert.equal(info.features.streaming, false, 'HttpSendResponseEntityBody must be off under Wine (a stub that aborts)')
  assert.equal(info.features.cancel, false, 'HttpCancelHttpRequest must be off under Wine (a stub that aborts)')
  for (const name of ['findUrlGroupId', 'updateServiceConfiguration', 'isFeatureSupported']) {
    assert.equal(info.features[name], false, `${name} must be off under Wine (unimplemented there)`)
  }
  assert.equal(info.error183, 'ERROR_ALREADY_EXISTS')
  for (const name of ['Queue', 'errors', 'platform', 'urlAclSet', 'urlAclList', 'sslCertSet', 'sslCertList', 'lookupAccount']) {
    assert.ok(info.exports.includes(name), `missing export ${name}`)
  }
})

test('the addon loads in a renamed host exe (delay-load hook)', async () => {
  const renamed = path.join(path.dirname(W.NODE_EXE), 'renamed-host.exe')
  if (!fs.existsSync(renamed)) fs.copyFileSync(W.NODE_EXE, renamed)
  const { code, output } = await W.runNode('load-renamed', [`${FIX}/load-addon.js`], { exe: renamed })
  assert.equal(code, 0, W.tail(output))
  assert.match(output, /^LOADED .*renamed-host\.exe/m)
})

// ---------------------------------------------------------------------------
// The backend on its own (src/queue/httpsys, no src/http)

const echo = {}

test('backend: a request arrives with method, raw URL, headers and addresses', async () => {
  echo.port = await W.freePort()
  echo.server = await startEcho(`http://+:${echo.port}/echo/`)
  assert.deepEqual(echo.server.info, { queue: null, urls: [`http://+:${echo.port}/echo/`], ports: [echo.port] })
  const got = json(await W.request(echo.port, { path: '/echo/a%20b?x=1&y=%C3%A9', headers: { 'x-test': 'one', 'x-other': 'two' } }))
  assert.equal(got.method, 'GET')
  assert.equal(got.url, '/echo/a%20b?x=1&y=%C3%A9')
  assert.equal(got.httpVersion, '1.1')
  assert.equal(got.remoteAddress, '127.0.0.1')
  assert.equal(got.localPort, echo.port)
  const headers = Object.fromEntries(got.rawHeaders.reduce((acc, v, i, all) => (i % 2 ? acc : [...acc, [v.toLowerCase(), all[i + 1]]]), []))
  assert.equal(headers.host, `localhost:${echo.port}`)
  assert.equal(headers['x-test'], 'one')
  assert.equal(headers['x-other'], 'two')
}, { keep: true })

test('backend: verbs keep their identity, a verb node does not know is 400; HTTP/1.0', async () => {
  assert.equal(json(await W.request(echo.port, { method: 'PATCH', path: '/echo/p' })).method, 'PATCH')
  assert.equal(json(await W.request(echo.port, { method: 'PURGE', path: '/echo/p' })).method, 'PURGE')
  // HTTP.SYS passes an unknown verb through; the worker answers it as node (and the hub) do
  assert.equal((await W.request(echo.port, { method: 'FROB', path: '/echo/p' })).status, 400)
  const raw = await rawExchange(echo.port, `GET /echo/ten HTTP/1.0\r\nHost: localhost:${echo.port}\r\n\r\n`)
  assert.match(raw, /^HTTP\/1\.1 200 OK/)
  assert.match(raw, /"httpVersion":"1.0"/)
  assert.match(raw, /"keepAlive":false/)
}, { keep: true })

test('backend: headers beyond the 4 KB receive buffer (ERROR_MORE_DATA, same RequestId)', async () => {
  const big = 'v'.repeat(7000)
  const got = json(await W.request(echo.port, { path: '/echo/big', headers: { 'x-big': big } }))
  const i = got.rawHeaders.findIndex((v, j) => j % 2 === 0 && v.toLowerCase() === 'x-big')
  assert.ok(i >= 0, 'x-big did not arrive')
  assert.equal(got.rawHeaders[i + 1], big)
}, { keep: true })

test('backend: POST bodies up to 60 KiB arrive intact, read in 4 KiB pieces', async () => {
  await checkBodies(echo.port, '/echo/post')
}, { keep: true })

test('backend: keep-alive and concurrent requests are all answered', async () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  for (let i = 0; i < 10; i++) assert.equal(json(await W.request(echo.port, { path: `/echo/k${i}`, agent })).url, `/echo/k${i}`)
  agent.destroy()
  const all = await Promise.all(Array.from({ length: 16 }, (_, i) => W.request(echo.port, { path: `/echo/c${i}` })))
  assert.deepEqual(all.map((r) => json(r).url), Array.from({ length: 16 }, (_, i) => `/echo/c${i}`))
}, { keep: true })

test('backend: several Set-Cookie headers all reach the client', async () => {
  const res = await W.request(echo.port, { path: '/echo/cookies' })
  assert.deepEqual(res.headers['set-cookie'], ['a=1; Path=/', 'b=2; Path=/'])
  assert.equal(res.body.toString(), 'ok')
}, { keep: true })

test('backend: a response sent in pieces arrives whole (one send under Wine)', async () => {
  const res = await W.request(echo.port, { path: '/echo/pieces' })
  assert.equal(res.status, 200)
  assert.equal(res.body.toString(), 'piece1piece2piece3')
  assert.equal(res.headers['transfer-encoding'], undefined)
}, { keep: true })

test('backend: close() ends the attachment and the process exits by itself', async () => {
  await cleanShutdown()
  assert.match(echo.server.proc.output(), /^CLOSED null$/m)
})

test('backend: one queue serves several prefixes (Wine: one URL group per prefix)', async () => {
  const [p1, p2] = [await W.freePort(), await W.freePort()]
  const { info } = await startEcho(`http://+:${p1}/one/,http://localhost:${p2}/two/`, 'two-prefixes')
  assert.deepEqual(info.urls, [`http://+:${p1}/one/`, `http://localhost:${p2}/two/`])
  assert.deepEqual(info.ports, [p1, p2])
  const a = json(await W.request(p1, { path: '/one/a' }))
  const b = json(await W.request(p2, { path: '/two/b' }))
  assert.equal(a.pid, b.pid)
  assert.deepEqual([a.url, b.url], ['/one/a', '/two/b'])
  await cleanShutdown()
})

// ---------------------------------------------------------------------------
// Through the preload (node.exe --require src/register.js app.js)

test('preload: examples/hello answers curl from Linux', async () => {
  const port = await W.freePort()
  await startPreloaded('hello', 'examples/hello/app.js', { PORT: String(port) })
  const res = await W.eventually(async () => {
    const r = await W.curl(['-i', `http://localhost:${port}/`])
    if (r.code !== 0) throw new Error(`curl exit ${r.code}: ${r.stderr}`)
    return r
  })
  assert.match(res.stdout, /^HTTP\/1\.1 200 OK/)
  assert.match(res.stdout, /\r\n\r\nhello world\n$/)
  await cleanShutdown()
})

test('preload: examples/express serves its API, cookies, static files and 404s', async () => {
  const port = await W.freePort()
  await startPreloaded('express', 'examples/express/app.js', { PORT: String(port) })
  const list = await W.eventually(() => W.request(port, { path: '/api/notes' }))
  assert.deepEqual(json(list), [])
  const body = JSON.stringify({ text: 'buy milk' })
  const created = await W.request(port, { method: 'POST', path: '/api/notes', body, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) } })
  assert.equal(created.status, 201, created.body.toString())
  assert.equal(created.headers.location, '/api/notes/1')
  assert.equal(JSON.parse(created.body).text, 'buy milk')
  assert.equal(json(await W.request(port, { path: '/api/notes/1' })).text, 'buy milk')
  const who = await W.request(port, { path: '/whoami', headers: { Cookie: 'visits=4' } })
  assert.equal(json(who).visits, 5)
  assert.match(String(who.headers['set-cookie']), /visits=5/)
  const page = await W.request(port, { path: '/' })
  assert.equal(page.status, 200)
  assert.match(page.headers['content-type'], /text\/html/)
  const missing = await W.request(port, { path: '/nope' })
  assert.equal(missing.status, 404)
  assert.equal(JSON.parse(missing.body).error, 'not found')
  await cleanShutdown()
})

// Wine's HTTP.SYS takes no authentication property (docs/wine.md 2.10) and so hands no
// request an identity: what runs here is the worker's side over the real addon (the 401
// and its challenges, the app's own 401); the sign-in itself is test/windows-host's.
test('preload: examples/windows-auth: anonymous: false answers 401 with the challenges; the app\'s own 401 gets them too', async () => {
  const port = await W.freePort()
  const auth = (anonymous) => JSON.stringify({ auth: { schemes: ['negotiate', 'ntlm'], anonymous, realm: null, domain: null, kerberosCredentialCaching: false, devIdentity: null }, promote: ['AUTH_USER'] })
  await startPreloaded('windows-auth', 'examples/windows-auth/app.js', { PORT: String(port), HTTPSYS_AUTH: auth(false) })
  const refused = await W.eventually(() => W.request(port, { path: '/me' }))
  assert.equal(refused.status, 401)
  assert.deepEqual(refused.rawHeaders.filter((_, i, a) => i % 2 === 1 && /^www-authenticate$/i.test(a[i - 1])), ['Negotiate', 'NTLM'])
  await cleanShutdown()
  await startPreloaded('windows-auth-anonymous', 'examples/windows-auth/app.js', { PORT: String(port), HTTPSYS_AUTH: auth(true) })
  const own = await W.eventually(() => W.request(port, { path: '/signin' }))
  assert.equal(own.status, 401)
  assert.equal(own.body.toString(), 'Sign in, please.\n')
  assert.deepEqual(own.rawHeaders.filter((_, i, a) => i % 2 === 1 && /^www-authenticate$/i.test(a[i - 1])), ['Negotiate', 'NTLM'])
  await cleanShutdown()
})

test('preload: POST bodies up to 60 KiB arrive intact in a plain http app', async () => {
  const port = await W.freePort()
  await startPreloaded('echo-app', `${FIX}/echo-app.js`, { HTTPSYS_WINE_LISTEN: String(port) })
  await W.eventually(() => W.request(port, { path: '/ready' }))
  await checkBodies(port, '/upload')
  await cleanShutdown()
})

test('preload: a response written to req.socket (hijacked, with Content-Length) reaches the client through HTTP.SYS', async () => {
  // one whole response in one write: one send. Wine's HTTP.SYS does not stream, so a
  // close-delimited raw response (sent in pieces, ended by socket.end()) is checked on
  // the hub only; real Windows would serve it as it serves any streamed response.
  const port = await W.freePort()
  await startPreloaded('echo-raw', `${FIX}/echo-app.js`, { HTTPSYS_WINE_LISTEN: String(port) })
  await W.eventually(() => W.request(port, { path: '/ready' }))
  const res = await W.request(port, { path: '/raw' })
  assert.equal(res.status, 203)
  assert.equal(res.headers['x-raw'], 'yes')
  assert.equal(res.body.toString(), 'raw ok!')
  const after = await W.request(port, { path: '/after' })
  assert.equal(json(after).url, '/after')
  await cleanShutdown()
})

test('preload: a streamed express download arrives whole (one send under Wine)', async () => {
  const port = await W.freePort()
  await startPreloaded('express-download', 'examples/express/app.js', { PORT: String(port) })
  await W.eventually(() => W.request(port, { path: '/api/notes' }))
  const size = 200 * 1024 + 123
  const res = await W.request(port, { path: `/download?size=${size}` })
  assert.equal(res.status, 200)
  assert.equal(res.body.length, size)
  assert.equal(res.body.subarray(0, 16).toString(), 'httpsys streams ')
  await cleanShutdown()
})

test('preload: two apps listen() on prefixes of one port and each gets its own requests', async () => {
  const port = await W.freePort()
  const a = start('prefix-a', [...PRELOAD, `${FIX}/echo-app.js`], { env: { ...PRELOAD_ENV, HTTPSYS_WINE_LISTEN: `http://+:${port}/a/` } })
  await W.waitFor(a, /^LISTENING /m)
  const b = start('prefix-b', [...PRELOAD, `${FIX}/echo-app.js`], { env: { ...PRELOAD_ENV, HTTPSYS_WINE_LISTEN: `http://+:${port}/b/` } })
  await W.waitFor(b, /^LISTENING /m)
  const fromA = json(await W.request(port, { path: '/a/one' }))
  const fromB = json(await W.request(port, { path: '/b/two' }))
  assert.equal(fromA.url, '/a/one')
  assert.equal(fromB.url, '/b/two')
  assert.notEqual(fromA.pid, fromB.pid)
  await cleanShutdown()
})

test('preload: listen() on a prefix another process holds fails with ERR_HTTPSYS_URL_CONFLICT', async () => {
  const port = await W.freePort()
  await startEcho(`http://+:${port}/`, 'holder')
  const app = start('echo-app-conflict', [...PRELOAD, `${FIX}/echo-app.js`], { env: { ...PRELOAD_ENV, HTTPSYS_WINE_LISTEN: String(port) } })
  const m = await W.waitFor(app, /^(LISTEN_ERROR|LISTENING) (.*)$/m)
  assert.equal(`${m[1]} ${m[2]}`, 'LISTEN_ERROR ERR_HTTPSYS_URL_CONFLICT 183')
  await cleanShutdown()
})

// ---------------------------------------------------------------------------
// One port, several processes, and the mapped registration errors

test('two node.exe processes with different prefixes share one port', async () => {
  const port = await W.freePort()
  const a = await startEcho(`http://+:${port}/a/`, 'share-a')
  const b = await startEcho(`http://+:${port}/b/`, 'share-b')
  const fromA = json(await W.request(port, { path: '/a/x' }))
  const fromB = json(await W.request(port, { path: '/b/x' }))
  assert.notEqual(fromA.pid, fromB.pid)
  assert.match(a.proc.output(), /READY/)
  assert.match(b.proc.output(), /READY/)
  // alternating on one keep-alive connection
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const pids = []
  for (const p of ['/a/1', '/b/1', '/a/2', '/b/2']) pids.push(json(await W.request(port, { path: p, agent })).pid)
  agent.destroy()
  assert.deepEqual(pids, [fromA.pid, fromB.pid, fromA.pid, fromB.pid])
  await cleanShutdown()
})

test('a prefix registered twice is ERR_HTTPSYS_URL_CONFLICT (183)', async () => {
  const port = await W.freePort()
  await startEcho(`http://+:${port}/c/`, 'conflict-holder')
  const { output } = await W.runNode('register-conflict', [`${FIX}/register-prefix.js`], { env: { HTTPSYS_WINE_PREFIX: `http://+:${port}/c/` } })
  assert.match(output, /^ERROR ERR_HTTPSYS_URL_CONFLICT 183 /m, W.tail(output))
  await cleanShutdown()
})

test('a port held by another socket is ERR_HTTPSYS_PORT_IN_USE (32)', async () => {
  const blocker = net.createServer()
  await new Promise((resolve) => blocker.listen(0, '0.0.0.0', resolve))
  const port = blocker.address().port
  try {
    const { output } = await W.runNode('register-port-held', [`${FIX}/register-prefix.js`], { env: { HTTPSYS_WINE_PREFIX: `http://+:${port}/` } })
    assert.match(output, new RegExp(`^ERROR ERR_HTTPSYS_PORT_IN_USE 32 .*findstr :${port}`, 'm'), W.tail(output))
  } finally {
    blocker.close()
  }
})

test('a prefix HTTP.SYS rejects is ERR_HTTPSYS_BAD_PREFIX (87)', async () => {
  const port = await W.freePort()
  const { output } = await W.runNode('register-bad', [`${FIX}/register-prefix.js`], { env: { HTTPSYS_WINE_PREFIX: `http://[::1]:${port}/` } })
  assert.match(output, /^ERROR ERR_HTTPSYS_BAD_PREFIX 87 /m, W.tail(output))
})

test('setup calls (URL ACL, certificate bindings, SID lookup) run without crashing (no-ops in Wine)', async () => {
  const port = await W.freePort()
  const { code, output } = await W.runNode('service-config', [`${FIX}/service-config.js`], { env: { HTTPSYS_WINE_PREFIX: `http://+:${port}/` } })
  const m = /^CONFIG (.*)$/m.exec(output)
  assert.ok(m, `no CONFIG line (exit ${code}):\n${W.tail(output)}`)
  const out = JSON.parse(m[1])
  assert.match(out.account.sid, /^S-1-5-21-/)
  // Windows answers 'set', then 'exists' for a second set; Wine's set always succeeds
  assert.equal(out.urlAclSet, 'set')
  // deleting: true (Wine says it deleted, whatever was there); Windows: false when absent
  assert.equal(out.urlAclDelete, true)
  for (const key of ['sslCertSet', 'sslCertSetSni']) assert.equal(out[key], 'set', key)
  assert.equal(out.sslCertDelete, true)
  // Wine's queries always answer ERROR_FILE_NOT_FOUND: an empty list, not an error
  assert.deepEqual(out.urlAclList, [])
  assert.deepEqual(out.sslCertList, [])
})

// ---------------------------------------------------------------------------
// The request-queue contract suite (test/contract/) against the real addon

require('./contract-tests').register(test, { W })

// ---------------------------------------------------------------------------
// The Windows user's path: the packed tarball, doctor, the setup commands

require('./setup-tests').register(test)

// ---------------------------------------------------------------------------
// The addon's newer parts: constant tables, option checks, request fields, sends,
// receives past the first buffer, the setup and diagnostic calls

require('./addon-tests').register(test, { start, json, startEcho, cleanShutdown })

// ---------------------------------------------------------------------------
// The supervisor (`httpsys start --backend hub` in node.exe)

require('./supervisor-tests').register(test, {
  start,
  untrack: (proc) => { running = running.filter((p) => p !== proc) },
  json
})
require('./service-tests').register(test, { json })
require('./standalone-tests').register(test, { start, json })

test('no node.exe process is left behind, nor a native router', async () => {
  await stopAll()
  await W.sleep(500)
  assert.deepEqual(W.leftovers(), [])
  assert.deepEqual(W.processesMatching('httpsys-router.exe'), [])
})

// ---------------------------------------------------------------------------

// One request on a raw socket; resolves with the response once its Content-Length
// bytes are in (Wine's http.sys keeps even an HTTP/1.0 connection open).
function rawExchange (port, text) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let out = ''
    const done = () => {
      socket.destroy()
      resolve(out)
    }
    socket.setTimeout(8000, () => socket.destroy(new Error(`raw exchange timed out; got ${JSON.stringify(out)}`)))
    socket.on('data', (d) => {
      out += d.toString('latin1')
      const end = out.indexOf('\r\n\r\n')
      const m = /\r\ncontent-length: *(\d+)/i.exec(out)
      if (end !== -1 && m && out.length >= end + 4 + Number(m[1])) done()
    })
    socket.on('end', done)
    socket.on('error', reject)
    // no half-close: Wine's http.sys drops a request whose client already sent FIN
    socket.write(text)
  })
}

async function main () {
  if (!W.NODE_EXE || !fs.existsSync(W.NODE_EXE)) {
    console.log('HTTPSYS_WINE_NODE must name a Windows node.exe (test/windows/run.sh sets it up)')
    console.log('0 passed, 1 failed')
    process.exit(1)
  }
  const filter = process.argv[2] ? new RegExp(process.argv[2], 'i') : null
  let passed = 0
  let failed = 0
  let skipped = 0
  let n = 0
  for (const t of tests) {
    if (filter && !filter.test(t.name)) continue
    n++
    const started = Date.now()
    try {
      let timer
      const timeout = new Promise((resolve, reject) => { timer = setTimeout(() => reject(new Error(`test timed out after ${t.timeout / 1000} s`)), t.timeout) })
      await Promise.race([t.fn(), timeout]).finally(() => clearTimeout(timer))
      passed++
      console.log(`ok ${n} - ${t.name} (${Date.now() - started} ms)`)
    } catch (err) {
      if (err instanceof W.Skip) {
        skipped++
        console.log(`ok ${n} - ${t.name} # SKIP ${err.message}`)
        continue
      }
      failed++
      console.log(`not ok ${n} - ${t.name}`)
      console.log(String(err && err.stack ? err.stack : err).split('\n').map((l) => `  # ${l}`).join('\n'))
      if (!t.keep) await stopAll()
    }
  }
  // skipped tests (what Wine cannot show) count neither way; test/windows/README.md lists
  // what a real Windows host must check for them
  if (skipped > 0) console.log(`${skipped} skipped`)
  console.log(`${passed} passed, ${failed} failed`)
  process.exitCode = failed === 0 && passed > 0 ? 0 : 1
}

main()
