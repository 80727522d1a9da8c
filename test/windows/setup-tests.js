'use strict'

// The Windows user's path, under Wine: the packed tarball installed into an empty
// folder and run from there (`node.exe node_modules/httpsys-cli/bin/httpsys start
// app.js`, served by HTTP.SYS), `httpsys doctor`, and the setup commands as far as
// Wine's stubs allow. Wine stores no service configuration (docs/wine.md 2.8): a set
// succeeds and changes nothing, a query finds nothing. What a real Windows host shows
// instead is in test/windows/README.md ("Manual checks"). Registered by run-tests.js.

const assert = require('node:assert/strict')
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseRecords } = require('../helpers/records')
const W = require('./lib/wine')

const STOP_MS = 20000

function register (test) {
  const state = {}

  function records (proc) {
    return parseRecords(proc.output())
  }

  async function waitRecord (proc, match, what) {
    const end = Date.now() + STOP_MS
    for (;;) {
      const found = records(proc).find(match)
      if (found) return found
      if (Date.now() > end) throw new Error(`${proc.name}: no ${what} record within ${STOP_MS} ms:\n${W.tail(proc.output())}`)
      await W.sleep(50)
    }
  }

  test('package: the packed tarball, installed into an empty folder, holds the addon and runs `httpsys --version`', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-pack-'))
    // as a release packs it: the prepack script builds the addon (mingw-w64) first
    const addonFile = path.join(W.ROOT, 'prebuilds', 'win32-x64', 'httpsys_native.node')
    const before = fs.statSync(addonFile).mtimeMs
    // the router's platform packages: only Windows' (a release builds all five; test/exe
    // checks that); each cold Go build takes a minute here
    const env = { ...process.env, HTTPSYS_PACK_ROUTERS: 'win32-x64' }
    const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], { cwd: W.ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    assert.ok(fs.statSync(addonFile).mtimeMs > before, 'prepack did not build the addon')
    const [{ filename, files }] = JSON.parse(out)
    assert.ok(files.some((f) => f.path === 'prebuilds/win32-x64/httpsys_native.node'), 'the tarball holds the prebuilt addon')
    const app = path.join(dir, 'app')
    fs.mkdirSync(app)
    fs.writeFileSync(path.join(app, 'package.json'), '{ "name": "a-user-app", "private": true }\n')
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--omit=dev', path.join(dir, filename)], { cwd: app, encoding: 'utf8', stdio: 'pipe' })
    fs.copyFileSync(path.join(W.ROOT, 'examples', 'hello', 'app.js'), path.join(app, 'app.js'))
    assert.ok(fs.existsSync(path.join(app, 'node_modules', 'httpsys-cli', 'prebuilds', 'win32-x64', 'httpsys_native.node')))
    const version = await W.runNode('pack-version', ['node_modules/httpsys-cli/bin/httpsys', '--version'], { cwd: app })
    assert.equal(version.code, 0, version.output)
    assert.match(version.output, new RegExp(`^${require('../../package.json').version}$`, 'm'))
    state.app = app
    state.dir = dir
  }, { keep: true, timeout: 300000 })

  test('package: `node.exe node_modules/httpsys-cli/bin/httpsys start app.js` serves through HTTP.SYS', async () => {
    assert.ok(state.app, 'the install test did not run')
    const port = await W.freePort()
    const env = { HTTPSYS_RUNTIME_DIR: path.join(state.dir, 'runtime') }
    const proc = W.startNode('pack-start', ['node_modules/httpsys-cli/bin/httpsys', 'start', 'app.js', '-u', `http://+:${port}/`, '--json'], { cwd: state.app, env })
    try {
      const backend = await waitRecord(proc, (r) => r.event === 'backend', 'backend')
      assert.deepEqual([backend.backend, backend.reason], ['httpsys', 'Windows, and the HTTP.SYS addon loads'])
      await waitRecord(proc, (r) => r.event === 'ready', 'ready')
      const res = await W.request(port, { path: '/from-the-package' })
      assert.equal(res.status, 200)
      assert.match(res.body.toString(), /hello/i)
      const stop = await W.runNode('pack-stop', ['node_modules/httpsys-cli/bin/httpsys', 'stop', 'all'], { cwd: state.app, env })
      assert.equal(stop.code, 0, stop.output)
      assert.notEqual(await W.within(proc.exited, STOP_MS), 'timeout', `the supervisor did not stop:\n${W.tail(proc.output())}`)
    } finally {
      if (proc.child.exitCode === null) {
        proc.child.kill('SIGKILL')
        await proc.exited
      }
    }
  }, { keep: true })

  test('doctor: runs in node.exe, checks HTTP.SYS for the config, and answers 0/1 as its findings say', async () => {
    const port = await W.freePort()
    fs.writeFileSync(path.join(state.app, 'httpsys.config.js'), `module.exports = { apps: [{ script: 'app.js', urls: ['http://+:${port}/'] }] }\n`)
    const { code, output } = await W.runNode('doctor', ['node_modules/httpsys-cli/bin/httpsys', 'doctor', '--json'], { cwd: state.app })
    const report = JSON.parse(output.slice(output.indexOf('{')))
    assert.equal(report.router, 'HTTP.SYS')
    const areas = new Set(report.findings.map((f) => f.area))
    for (const area of ['elevation', 'service', 'ports', 'urlacl']) assert.ok(areas.has(area), `no ${area} finding: ${output}`)
    assert.equal(code, report.ok ? 0 : 1)
    // Wine has no reservations at all (queries find nothing): the prefix is reported as
    // uncovered, with the command that fixes it. On Windows an elevated run says the same,
    // as a warning.
    const urlacl = report.findings.find((f) => f.area === 'urlacl')
    assert.match(urlacl.message, new RegExp(`no URL reservation covers http://\\+:${port}/`))
    assert.match(urlacl.fix, new RegExp(`httpsys urlacl add http://\\+:${port}/`))
    const ports = report.findings.find((f) => f.area === 'ports')
    assert.equal(ports.level, 'ok', `port ${port} is free: ${ports.message}`)
  }, { keep: true })

  // An encrypted PEM key is opened by httpsys (node's crypto, with --passphrase) and
  // reaches the addon's import as PKCS#8: on Windows, elevated, it is imported and bound;
  // Wine's NCryptImportKey has no PKCS#8 (NTE_NOT_SUPPORTED, docs/wine.md 2.8), and a
  // prefix without LocalMachine\My says so. A wrong passphrase is decided before the
  // import, the same everywhere.
  test('cert add: an encrypted PEM key opens with --passphrase and reaches the import in node.exe', async () => {
    assert.ok(state.app, 'the install test did not run')
    const ssl = (...args) => execFileSync('openssl', args, { cwd: state.dir, stdio: ['ignore', 'ignore', 'pipe'] })
    try {
      ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'plain.key', '-out', 'site.crt', '-days', '2', '-subj', '/CN=site.test')
      ssl('pkcs8', '-topk8', '-in', 'plain.key', '-out', 'site-enc.key', '-passout', 'pass:secret')
    } catch (err) {
      W.skip(`openssl could not make the test certificate (${err.message.split('\n')[0]})`)
    }
    const run = (name, ...args) => W.runNode(name, ['node_modules/httpsys-cli/bin/httpsys', 'cert', 'add', '--port', '18443',
      '--cert', path.join(state.dir, 'site.crt'), '--key', path.join(state.dir, 'site-enc.key'), ...args], { cwd: state.app })
    const wrong = await run('cert-add-wrong', '--passphrase', 'wrong')
    assert.equal(wrong.code, 1, wrong.output)
    assert.match(wrong.output, /the private key is encrypted and the passphrase is wrong.*ERR_HTTPSYS_CERT_FILE/)
    const right = await run('cert-add-encrypted', '--passphrase', 'secret')
    if (right.code === 0) {
      assert.match(right.output, /^0\.0\.0\.0:18443 now serves [0-9a-f]{40}$/m)
    } else {
      assert.match(right.output, /Windows could not import it \(NTE_NOT_SUPPORTED|LocalMachine\\My does not exist/)
    }
    assert.doesNotMatch(wrong.output + right.output, /PRIVATE KEY-----|secret/)
  }, { keep: true })

  test('urlacl: add, list and delete run through the HTTP Server API in node.exe (Wine stores nothing)', async () => {
    const run = (name, args) => W.runNode(name, ['node_modules/httpsys-cli/bin/httpsys', 'urlacl', ...args], { cwd: state.app })
    const add = await run('urlacl-add', ['add', 'http://+:18123/wine/', '--sddl', 'D:(A;;GX;;;S-1-1-0)'])
    assert.equal(add.code, 0, add.output)
    // Windows: `reserved http://+:18123/wine/ for Everyone (listen)`; Wine's store answers
    // the set with success and every later query with "not found"
    assert.match(add.output, /^reserved http:\/\/\+:18123\/wine\/ for (Everyone|S-1-1-0) \(listen\)$/m)
    const list = await run('urlacl-list', ['list', '--json'])
    assert.equal(list.code, 0, list.output)
    assert.ok(Array.isArray(JSON.parse(list.output.slice(list.output.indexOf('[')))))
    const del = await run('urlacl-delete', ['delete', 'http://+:18123/wine/'])
    assert.equal(del.code, 0, del.output)
    const bad = await run('urlacl-bad', ['add', 'http://+/no-port/'])
    assert.equal(bad.code, 1)
    assert.match(bad.output, /a port is required.*ERR_HTTPSYS_BAD_PREFIX/)
  }, { keep: true })
}

module.exports = { register }
