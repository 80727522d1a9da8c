'use strict'

// The native Go router (router/, issue 25) on Windows: the supervisor's `--backend hub`
// on it (the default, and since issue 25 the only router), its workers attached over its
// named pipe (router/internal/listen/pipe_windows.go), and that pipe's security: the
// router's user owns it and is the only one its DACL lets in; a name another process
// holds already makes the router's start fail instead of sharing it. A standalone app
// on it (HTTPSYS_ROUTER=native), where the router binds while listen() waits.
//
// The router binary: HTTPSYS_ROUTER_PATH, else router/bin/httpsys-router.exe, else built
// there now with Go (npm run build:router); with neither Go nor a binary the checks are
// skipped and say so. Under Wine (test/windows/run.sh) the one run.sh cross-built.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')

const WINE_PIPE = 'Wine has no PowerShell to read the pipe\'s DACL and does not enforce FILE_FLAG_FIRST_PIPE_INSTANCE (docs/wine.md 2.12)'

/** The router binary to test, built now if the checkout has none and Go is here. */
function routerBinary (t) {
  const h = t.host
  if (process.env.HTTPSYS_ROUTER_PATH) return process.env.HTTPSYS_ROUTER_PATH
  if (t.wine) {
    const linux = process.env.HTTPSYS_WINE_ROUTER
    if (!linux) t.skip('no Windows router: test/windows/run.sh cross-builds it with Go (HTTPSYS_WINE_ROUTER)')
    return `Z:${linux.replace(/\//g, '\\')}`
  }
  const checkout = path.join(h.ROOT, 'router', 'bin', 'httpsys-router.exe')
  if (fs.existsSync(checkout)) return checkout
  const { buildRouter } = require(path.join(h.ROOT, 'scripts', 'build-router.js'))
  const r = buildRouter({ out: checkout, platform: 'win32', arch: 'x64', stdio: 'pipe' })
  if (!r.ok && r.noGo) t.skip(`no router binary and no Go to build one: set HTTPSYS_ROUTER_PATH, or install Go and run npm run build:router (${r.message})`)
  if (!r.ok) throw new Error(r.message)
  t.note('built router/bin/httpsys-router.exe (it stays there)')
  return checkout
}

/** The router as the supervisor runs it (src/supervisor/router-process.js), stopped by a cleanup. */
async function startRouter (t, binary) {
  const { RouterProcess } = require(path.join(t.host.ROOT, 'src', 'supervisor', 'router-process.js'))
  const quiet = () => {}
  const logger = { trace: quiet, debug: quiet, info: quiet, warn: quiet, error: quiet, fatal: quiet, level: 'warn' }
  const proc = new RouterProcess({ binary, logger })
  await proc.spawn()
  t.cleanup(`stop the router (pid ${proc.child.pid})`, () => {
    if (proc.exitInfo === null) proc.child.kill()
  })
  return proc
}

/** A pipe name no one uses: this run's pid and a counter. */
let pipes = 0
function pipeName (what) {
  return `\\\\.\\pipe\\httpsys-host-${what}-${process.pid}-${++pipes}`
}

module.exports = {
  group: 'native router',
  checks: [
    {
      name: 'httpsys start --backend hub: the Go router, the default (no HTTPSYS_ROUTER), serves the app as a process of its own, and stop ends it',
      async run (t) {
        const h = t.host
        const binary = routerBinary(t)
        const port = await h.freePort()
        const sup = h.startSupervisor(t, 'native-router', [path.join(h.APPS, 'host-app.js'), '-u', `http://+:${port}/`, '--backend', 'hub'],
          { env: { HTTPSYS_ROUTER: '', HTTPSYS_ROUTER_PATH: binary, HOST_APP: 'native' } })
        const backend = await sup.waitRecord((r) => r.event === 'backend', 'the backend record')
        assert.equal(backend.backend, 'hub', backend.msg)
        const router = await sup.waitRecord((r) => r.event === 'router', 'the native router record')
        assert.equal(router.router, 'native', router.msg)
        assert.ok(router.pid !== sup.pid && h.alive(router.pid), `the router (pid ${router.pid}) is not a process of its own`)
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        const res = await h.getJson(`http://127.0.0.1:${port}/x`)
        assert.equal(res.app, 'native')
        const ls = await sup.httpsys(['ls', '--json'])
        assert.equal(ls.code, 0, ls.output)
        const [s] = JSON.parse(ls.stdout.slice(ls.stdout.indexOf('[')))
        assert.equal(s.router.pid, router.pid)
        assert.ok(s.router.memory > 1e6, `the router's memory in ls: ${s.router.memory}`)
        await sup.stop()
        await h.eventually(async () => assert.ok(!h.alive(router.pid), `the router (pid ${router.pid}) outlived its supervisor`), 10000)
      }
    },
    {
      name: 'a supervisor terminated outright (TerminateProcess, no stop) takes its native router along',
      async run (t) {
        const h = t.host
        const binary = routerBinary(t)
        const port = await h.freePort()
        const sup = h.startSupervisor(t, 'native-router-killed', [path.join(h.APPS, 'host-app.js'), '-u', `http://+:${port}/`, '--backend', 'hub'],
          { env: { HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: binary, HOST_APP: 'native-killed' } })
        const router = await sup.waitRecord((r) => r.event === 'router', 'the native router record')
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        assert.equal((await h.getJson(`http://127.0.0.1:${port}/x`)).app, 'native-killed')
        // the supervisor alone (process.kill is TerminateProcess; taskkill /T would end
        // the router itself): its end closes the router's stdin, and its job object holds
        // the router too
        process.kill(sup.pid)
        await sup.exited
        await h.eventually(async () => assert.ok(!h.alive(router.pid), `the router (pid ${router.pid}) outlived its supervisor`), 10000)
        // the port is free again
        await h.eventually(async () => {
          const probe = net.createServer()
          await new Promise((resolve, reject) => probe.once('error', reject).listen(port, '127.0.0.1', resolve))
          await new Promise((resolve) => probe.close(resolve))
        }, 10000)
      }
    },
    {
      name: 'a standalone app on the native router (HTTPSYS_ROUTER=native, HTTP.SYS left out): listen(0) knows its port when it returns and serves, a port in use is EADDRINUSE at once, and the app exits by itself after close()',
      async run (t) {
        const h = t.host
        const binary = routerBinary(t)
        // the router binds while listen() waits (src/preload/standalone-native-win.js)
        const app = [
          "const http = require('node:http')",
          'const t0 = process.hrtime.bigint()',
          'const s = http.createServer((req, res) => res.end(JSON.stringify({ pid: process.pid, url: req.url })))',
          's.listen(0)',
          'const firstMs = Number(process.hrtime.bigint() - t0) / 1e6',
          'const address = s.address()',
          'const t1 = process.hrtime.bigint()',
          "const other = http.createServer().listen(0, '127.0.0.1')",
          'const nextMs = Number(process.hrtime.bigint() - t1) / 1e6',
          'const otherAddress = other.address()',
          'other.close()',
          'const taken = http.createServer().listen(address.port)',
          "taken.on('error', (err) => {",
          "  http.get({ host: '127.0.0.1', port: address.port, path: '/standalone', agent: false }, (res) => {",
          "    let body = ''",
          "    res.on('data', (d) => { body += d })",
          "    res.on('end', () => {",
          '      console.log(JSON.stringify({ pid: process.pid, address, otherAddress, firstMs, nextMs, taken: err.code, body }))',
          '      s.close()',
          '    })',
          "  }).on('error', (e) => { console.log(JSON.stringify({ error: e.message })); s.close() })",
          '})'
        ].join('\n')
        const r = await h.run(process.execPath, ['--require', path.join(h.ROOT, 'src', 'register.js'), '-e', app],
          { env: { HTTPSYS_BACKEND: 'hub', HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: binary }, timeout: 30000 })
        assert.equal(r.code, 0, `the app did not exit by itself after close():\n${r.output}`)
        const out = JSON.parse(r.stdout.trim().split(/\r?\n/).pop())
        t.note(`listen(): first ${out.firstMs.toFixed(1)} ms (starts the router), next ${out.nextMs.toFixed(1)} ms`)
        assert.ok(Number.isInteger(out.address.port) && out.address.port > 0, r.output)
        assert.equal(out.otherAddress.address, '127.0.0.1', r.output)
        assert.equal(out.taken, 'EADDRINUSE', r.output)
        assert.deepEqual(JSON.parse(out.body), { pid: out.pid, url: '/standalone' })
      }
    },
    {
      name: 'a standalone app on the native router, the servers without a plain port of their own: an https server (its chain verified by the root), listen(pipe) reached from another process, a pipe another process holds is EADDRINUSE, the pipe free again after close(), two listen(prefix) servers sharing a port, a stream handed to a server; src/hub never loaded',
      async run (t) {
        const h = t.host
        const binary = routerBinary(t)
        // the router binds each while listen() waits (src/preload/standalone-native-win-paths.js)
        // (Wine has neither openssl nor PowerShell to make them: test/windows/standalone-tests.js
        // serves https there with certificates made on Linux)
        const certs = t.wine ? null : require('./lib/certs').makeCertificates(path.join(h.tmpDir, 'standalone-native-certs'))
        if (certs === null) t.note('https left out under Wine (no openssl, no PowerShell)')
        const squatted = pipeName('standalone-squat')
        const squatter = net.createServer()
        await new Promise((resolve, reject) => squatter.once('error', reject).listen(squatted, resolve))
        t.cleanup('close the squatting pipe server', () => squatter.close())
        const app = [
          "const http = require('node:http')",
          "const https = require('node:https')",
          "const fs = require('node:fs')",
          "const { execFile } = require('node:child_process')",
          "const { duplexPair } = require('node:stream')",
          "const body = (res) => new Promise((resolve) => { let t = ''; res.on('data', (d) => { t += d }); res.on('end', () => resolve(res.statusCode + ' ' + t)) })",
          'const get = (o, m = http) => new Promise((resolve, reject) => m.get({ agent: false, ...o }, (res) => body(res).then(resolve)).on(\'error\', reject))',
          'const env = process.env',
          ';(async () => {',
          '  const out = {}',
          '  const tls = https.createServer(env.HOST_PFX ? { pfx: fs.readFileSync(env.HOST_PFX), passphrase: env.HOST_PASS } : {}, (req, res) => res.end(\'tls \' + req.url))',
          "  if (env.HOST_PFX) tls.listen(0, '127.0.0.1')",
          "  out.https = env.HOST_PFX ? await get({ host: '127.0.0.1', port: tls.address().port, path: '/s', ca: env.HOST_ROOT, servername: 'localhost' }, https) : 'left out'",
          '  const pipe = env.HOST_PIPE',
          '  const p = http.createServer((req, res) => res.end(\'pipe \' + req.url))',
          '  p.listen(pipe)',
          '  out.pipeAddress = p.address() === pipe',
          "  const client = 'require(\"http\").get({ socketPath: ' + JSON.stringify(pipe) + ', path: \"/other\" }, (r) => { let t = \"\"; r.on(\"data\", (d) => { t += d }); r.on(\"end\", () => console.log(r.statusCode + \" \" + t)) })'",
          "  out.pipeFromAnother = await new Promise((resolve) => execFile(process.execPath, ['-e', client], (err, stdout) => resolve(err ? String(err) : stdout.trim())))",
          "  out.squatted = await new Promise((resolve) => { const q = http.createServer(); q.on('error', (e) => resolve(e.code)); q.listen(env.HOST_SQUATTED, () => q.close(() => resolve('listening'))) })",
          '  await new Promise((resolve) => p.close(resolve))',
          "  out.pipeFreed = await new Promise((resolve) => { const n = require('node:net').createServer(); n.on('error', (e) => resolve(e.code)); n.listen(pipe, () => n.close(() => resolve('free'))) })",
          '  const a = http.createServer((req, res) => res.end(\'a \' + req.url))',
          '  const b = http.createServer((req, res) => res.end(\'b \' + req.url))',
          "  a.listen('http://+:0/a/')",
          '  const port = a.address().port',
          "  b.listen('http://+:' + port + '/b/')",
          "  out.prefixes = [await get({ host: '127.0.0.1', port, path: '/a/x' }), await get({ host: '127.0.0.1', port, path: '/b/y' }), (await get({ host: '127.0.0.1', port, path: '/c' })).slice(0, 3)]",
          '  const s = http.createServer((req, res) => res.end(\'via \' + req.url))',
          '  const [c, server] = duplexPair()',
          "  s.emit('connection', server)",
          "  out.handed = await new Promise((resolve) => http.get({ createConnection: () => c, path: '/duplex' }, (res) => body(res).then(resolve)))",
          '  out.hubLoaded = Object.keys(require.cache).some((k) => /[\\\\/]src[\\\\/]hub[\\\\/]hub\\.js$/.test(k))',
          '  tls.close(); a.close(); b.close()',
          '  console.log(JSON.stringify(out))',
          '})().catch((e) => { console.log(JSON.stringify({ error: e.stack })); process.exit(1) })'
        ].join('\n')
        const r = await h.run(process.execPath, ['--require', path.join(h.ROOT, 'src', 'register.js'), '-e', app], {
          env: { HTTPSYS_BACKEND: 'hub', HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: binary, ...(certs === null ? {} : { HOST_PFX: certs.serverPfx, HOST_PASS: certs.passphrase, HOST_ROOT: certs.rootPem }), HOST_PIPE: pipeName('standalone-app'), HOST_SQUATTED: squatted },
          timeout: 60000
        })
        assert.equal(r.code, 0, `the app did not exit by itself after close():\n${r.output}`)
        const out = JSON.parse(r.stdout.trim().split(/\r?\n/).pop())
        assert.deepEqual(out, {
          https: certs === null ? 'left out' : '200 tls /s',
          pipeAddress: true,
          pipeFromAnother: '200 pipe /other',
          // (Wine lets a second process make the first instance again: docs/wine.md 2.12)
          squatted: t.wine ? out.squatted : 'EADDRINUSE',
          pipeFreed: 'free',
          prefixes: ['200 a /a/x', '200 b /b/y', '404'],
          handed: '200 via /duplex',
          hubLoaded: false
        }, r.output)
      }
    },
    {
      name: 'the worker pipe is its user\'s only (owner, the one entry of a protected DACL); a pipe name another process holds makes start fail',
      wine: WINE_PIPE,
      async run (t) {
        const h = t.host
        const binary = routerBinary(t)
        const { routerLimits } = require(path.join(h.ROOT, 'src', 'supervisor', 'native-router.js'))
        const proc = await startRouter(t, binary)
        const name = pipeName('acl')
        await proc.call('start', { workerSocket: name, workersMayCreate: false, limits: routerLimits(null) })
        // read as a client reads it: connected (the router takes it as a worker that
        // says nothing), the security descriptor of the pipe through its handle
        const ps = await h.run('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', [
          `$p = New-Object System.IO.Pipes.NamedPipeClientStream('.', '${name.slice('\\\\.\\pipe\\'.length)}', [System.IO.Pipes.PipeDirection]::InOut)`,
          '$p.Connect(5000)',
          "$p.GetAccessControl().GetSecurityDescriptorSddlForm([System.Security.AccessControl.AccessControlSections]'Owner,Access')",
          '$p.Dispose()',
          '[Security.Principal.WindowsIdentity]::GetCurrent().User.Value'
        ].join('; ')])
        assert.equal(ps.code, 0, ps.output)
        const [sddl, me] = ps.stdout.trim().split(/\r?\n/).map((l) => l.trim())
        const owner = /^O:([^:]+?)(?=[GDS]:)/.exec(sddl)
        assert.ok(owner, `no owner in ${sddl}`)
        assert.equal(owner[1], me, `the pipe's owner: ${sddl}`)
        const dacl = /D:([A-Z]*)((?:\([^)]*\))*)/.exec(sddl)
        assert.ok(dacl, `no DACL in ${sddl}`)
        assert.match(dacl[1], /P/, `the DACL is not protected: ${sddl}`)
        const aces = dacl[2].match(/\([^)]*\)/g) || []
        // one entry, the user's, allowing: nobody else (another user, Everyone, the
        // administrators) may open the pipe; a second account is not made to try
        assert.equal(aces.length, 1, `entries: ${sddl}`)
        assert.match(aces[0], new RegExp(`^\\(A;[^;]*;[^;]*;[^;]*;[^;]*;${me}\\)$`), `the entry is not the user's: ${sddl}`)
        await proc.call('close')

        // a squatter first: node's net.Server on the name (libuv makes its first instance
        // with FILE_FLAG_FIRST_PIPE_INSTANCE too)
        const taken = pipeName('squat')
        const squatter = net.createServer()
        await new Promise((resolve, reject) => squatter.once('error', reject).listen(taken, resolve))
        t.cleanup('close the squatting pipe server', () => squatter.close())
        const second = await startRouter(t, binary)
        await assert.rejects(second.call('start', { workerSocket: taken, workersMayCreate: false, limits: routerLimits(null) }),
          (err) => /cannot listen for workers at/.test(err.message))
        await second.stop()
      }
    }
  ]
}
