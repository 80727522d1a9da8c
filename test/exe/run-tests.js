'use strict'

// The single executables as a user runs them (docs/single-executable.md): the Linux one
// here, the Windows one under Wine (when test/windows/run.sh has set Wine up). Run by
// test/exe/run.sh after `npm run build:exe`; prints one line per test and a final
// `N passed, N failed` (skips are neither). Extra arguments filter tests by name.
//
// HTTPSYS_EXE_REQUIRE_WINE=1 (CI) counts a test that cannot run as failed.
//
// Every test has its own runtime directory (HTTPSYS_RUNTIME_DIR), cache directory
// (HTTPSYS_CACHE_DIR) and ports; processes a test started are stopped by pid.

const assert = require('node:assert/strict')
const { spawn, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { parseRecords } = require('../helpers/records')
const { freePort } = require('../helpers/httpsys-process')

const ROOT = path.join(__dirname, '..', '..')
const DIST = path.join(ROOT, 'dist')
const EXE = path.join(DIST, 'httpsys-linux-x64')
const WIN_EXE = path.join(DIST, 'httpsys-win-x64.exe')
const HELLO = path.join(ROOT, 'examples', 'hello', 'app.js')
const FIX = path.join(__dirname, 'fixtures')
const VERSION = require('../../package.json').version
const SIZE_LIMIT = 100e6
const START_LIMIT_MS = 300

const tests = []
const test = (name, fn) => tests.push({ name, fn })
class Skip extends Error {}

// ---- helpers ------------------------------------------------------------------------

const started = []

const dirs = []

function tmpdir (name) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `httpsys-exe-${name}-`))
  dirs.push(dir)
  return dir
}

/** A test's own world: runtime and cache directories, and the environment with them. */
function world (name, env = {}) {
  const runtime = tmpdir(`${name}-run`)
  const cache = tmpdir(`${name}-cache`)
  fs.chmodSync(runtime, 0o700)
  return { runtime, cache, env: { ...process.env, HTTPSYS_RUNTIME_DIR: runtime, HTTPSYS_CACHE_DIR: cache, ...env } }
}

/** Starts the executable in the background; its output is collected. */
function startExe (args, { env, cwd = ROOT, exe = EXE } = {}) {
  const child = spawn(exe, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
  started.push(child)
  let out = ''
  child.stdout.on('data', (d) => { out += d })
  child.stderr.on('data', (d) => { out += d })
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal || code)))
  return { child, exited, output: () => out }
}

/** Runs the executable to completion (a second shell). */
function runExe (args, { env, cwd = ROOT, exe = EXE, timeout = 30000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(exe, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

/** The supervisor's JSON records (started with --json). */
function records (proc) {
  return parseRecords(proc.output())
}

async function waitRecord (proc, match, what, timeout = 20000) {
  const end = Date.now() + timeout
  let exited = false
  proc.exited.then(() => { exited = true })
  for (;;) {
    const found = records(proc).find(match)
    if (found) return found
    if (Date.now() > end || exited) {
      throw new Error(`no ${what} record within ${timeout} ms${exited ? ' (it exited)' : ''}:\n${proc.output().split('\n').slice(-25).join('\n')}`)
    }
    await sleep(50)
  }
}

function get (port, target = '/') {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: target, agent: false }, (res) => {
      let body = ''
      res.on('data', (d) => { body += d })
      res.on('end', () => resolve({ status: res.statusCode, body }))
    })
    req.setTimeout(8000, () => req.destroy(new Error(`GET ${target}: no answer within 8 s`)))
    req.on('error', reject)
  })
}

/** `httpsys ls --json` from a second call: the instances of the one supervisor. */
async function ls (env, cwd) {
  const r = await runExe(['ls', '--json'], { env, cwd })
  assert.equal(r.code, 0, `ls failed: ${r.stderr}`)
  const sups = JSON.parse(r.stdout)
  assert.equal(sups.length, 1, `ls shows ${sups.length} supervisors: ${r.stdout}`)
  return sups[0].apps.flatMap((a) => a.instances.map((i) => ({ ...i, app: a.name })))
}

/** `httpsys stop all` from a second call; the supervisor must then exit 0 by itself. */
async function stopAll (proc, env, cwd) {
  const r = await runExe(['stop', 'all'], { env, cwd })
  assert.equal(r.code, 0, `stop all failed: ${r.stdout}${r.stderr}`)
  const code = await within(proc.exited, 20000)
  assert.equal(code, 0, `the supervisor did not exit 0 after stop all (${code}):\n${proc.output().slice(-2000)}`)
}

/** The program a process runs and its command line, from /proc. */
function proc (pid) {
  return {
    exe: fs.readlinkSync(`/proc/${pid}/exe`),
    argv: fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean),
    env: Object.fromEntries(fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
  }
}

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

function within (promise, ms) {
  let timer
  return Promise.race([promise, new Promise((resolve) => { timer = setTimeout(resolve, ms, 'timeout') })])
    .finally(() => clearTimeout(timer))
}

function realNode () {
  return fs.realpathSync(execFileSync('sh', ['-c', 'command -v node'], { encoding: 'utf8' }).trim())
}

// ---- Linux ----------------------------------------------------------------------------

test('linux: the executable is under 100 MB and prints the version cold in under 300 ms', async () => {
  const size = fs.statSync(EXE).size
  const times = []
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint()
    const out = execFileSync(EXE, ['--version'], { encoding: 'utf8', env: { ...process.env, HTTPSYS_CACHE_DIR: tmpdir('version') } })
    times.push(Number(process.hrtime.bigint() - t0) / 1e6)
    assert.equal(out.trim(), VERSION)
  }
  const best = Math.min(...times)
  console.log(`# ${path.basename(EXE)}: ${(size / 1e6).toFixed(1)} MB; --version ${times.map((t) => t.toFixed(0)).join(', ')} ms (best ${best.toFixed(0)})`)
  for (const f of ['httpsys-win-x64.exe', 'httpsys-linux-arm64', 'httpsys-win-arm64.exe']) {
    if (fs.existsSync(path.join(DIST, f))) console.log(`# ${f}: ${(fs.statSync(path.join(DIST, f)).size / 1e6).toFixed(1)} MB`)
  }
  assert.ok(size < SIZE_LIMIT, `${size} bytes`)
  assert.ok(best < START_LIMIT_MS, `--version took ${best.toFixed(0)} ms at best`)
})

test('linux: serves examples/hello/app.js on the PATH\'s node with the preload from the exe; ls and stop from a second call', async () => {
  const w = world('hello')
  const port = await freePort()
  const sup = startExe(['start', HELLO, '-u', `http://127.0.0.1:${port}/`, '--json'], { env: w.env })
  const ready = await waitRecord(sup, (r) => r.event === 'ready', 'ready')
  const node = records(sup).find((r) => r.event === 'node')
  assert.deepEqual([node.self, node.why], [false, 'found on the PATH'])
  assert.deepEqual(await get(port), { status: 200, body: 'hello world\n' })
  const [inst] = await ls(w.env)
  assert.deepEqual([inst.app, inst.pid, inst.state], ['app', ready.pid, 'ready'])
  const worker = proc(ready.pid)
  assert.equal(worker.exe, realNode(), 'the worker is the PATH\'s node')
  const preload = worker.argv[worker.argv.indexOf('--require') + 1]
  assert.equal(path.dirname(path.dirname(preload)), w.cache, `preload ${preload} is not the one written to the cache`)
  assert.equal(worker.env.HTTPSYS_NODE_MODE, undefined)
  await stopAll(sup, w.env)
})

test('linux: --node self runs the app on the exe itself (node mode); node_args reach it through NODE_OPTIONS', async () => {
  const w = world('self')
  const port = await freePort()
  const sup = startExe(['start', HELLO, '-u', `http://127.0.0.1:${port}/`, '--node', 'self', '--node-args', '--max-old-space-size=96', '--json'], { env: w.env })
  const ready = await waitRecord(sup, (r) => r.event === 'ready', 'ready')
  assert.deepEqual(await get(port), { status: 200, body: 'hello world\n' })
  const worker = proc(ready.pid)
  assert.equal(worker.exe, EXE)
  assert.equal(worker.env.HTTPSYS_NODE_MODE, '1')
  assert.match(worker.env.NODE_OPTIONS, /--max-old-space-size=96/)
  assert.equal((await ls(w.env))[0].state, 'ready')
  await stopAll(sup, w.env)
})

test('linux: with no usable node on the PATH (one too old is first) the app runs on the node inside, and the log says why', async () => {
  const bin = tmpdir('oldnode')
  fs.copyFileSync(path.join(FIX, 'old-node'), path.join(bin, 'node'))
  fs.chmodSync(path.join(bin, 'node'), 0o755)
  const w = world('oldpath', { PATH: `${bin}${path.delimiter}${process.env.PATH}` })
  const port = await freePort()
  const sup = startExe(['start', path.join(FIX, 'esm-app.mjs'), '-u', `http://127.0.0.1:${port}/`, '--json', '--', 'one', 'two'], { env: w.env })
  const ready = await waitRecord(sup, (r) => r.event === 'ready', 'ready')
  const node = records(sup).find((r) => r.event === 'node')
  assert.equal(node.self, true)
  assert.match(node.why, /v18\.19\.0, older than 20/)
  const res = await get(port, '/x')
  assert.equal(res.status, 200)
  assert.deepEqual(JSON.parse(res.body), { pid: ready.pid, execPath: EXE, argv1: path.join(FIX, 'esm-app.mjs'), args: ['one', 'two'], esm: true })
  await stopAll(sup, w.env)
})

test('linux: a cluster app on the node inside: its workers are the exe as node, with the preload, on the app\'s queue', async () => {
  const w = world('cluster')
  const port = await freePort()
  const sup = startExe(['start', path.join(FIX, 'cluster-app.js'), '-u', `http://127.0.0.1:${port}/`, '--node', 'self', '--node-args', '--max-old-space-size=80', '--wait-ready', '--json'], { env: w.env })
  const ready = await waitRecord(sup, (r) => r.event === 'ready', 'ready')
  const seen = new Map()
  for (let i = 0; i < 30 && seen.size < 2; i++) {
    const body = JSON.parse((await get(port, `/${i}`)).body)
    seen.set(body.pid, body)
  }
  assert.equal(seen.size, 2, 'both cluster workers serve from the queue')
  for (const body of seen.values()) {
    assert.notEqual(body.pid, ready.pid, 'the primary serves nothing')
    assert.equal(body.execPath, EXE)
    assert.ok(body.heapMb < 200, `NODE_OPTIONS reached the cluster worker (heap limit ${body.heapMb} MB)`)
  }
  await stopAll(sup, w.env)
})

test('linux: start -d from the exe returns once ready; ls and stop all reach the daemon', async () => {
  const w = world('daemon')
  const port = await freePort()
  const r = await runExe(['start', HELLO, '-u', `http://127.0.0.1:${port}/`, '-d'], { env: w.env })
  assert.equal(r.code, 0, r.stdout + r.stderr)
  assert.match(r.stdout, /runs in the background \(pid (\d+)\)/)
  const daemonPid = Number(/pid (\d+)\)/.exec(r.stdout)[1])
  try {
    assert.deepEqual(await get(port), { status: 200, body: 'hello world\n' })
    assert.equal((await ls(w.env))[0].state, 'ready')
    assert.equal(proc(daemonPid).exe, EXE)
    const stop = await runExe(['stop', 'all'], { env: w.env })
    assert.equal(stop.code, 0, stop.stdout + stop.stderr)
    for (let i = 0; i < 100 && fs.existsSync(`/proc/${daemonPid}`); i++) await sleep(100)
    assert.equal(fs.existsSync(`/proc/${daemonPid}`), false, 'the daemon exited')
  } finally {
    try { process.kill(daemonPid, 'SIGKILL') } catch {}
  }
})

test('linux: a config file from the exe, --node with a path for its apps; a bad --node fails the start with its code', async () => {
  const w = world('config')
  const dir = tmpdir('config-app')
  const port = await freePort()
  fs.copyFileSync(HELLO, path.join(dir, 'app.js'))
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'),
    `module.exports = { apps: [{ name: 'hello', script: 'app.js', urls: ['http://127.0.0.1:${port}/'] }] }\n`)
  const sup = startExe(['start', '--node', realNode(), '--json'], { env: w.env, cwd: dir })
  const ready = await waitRecord(sup, (r) => r.event === 'ready', 'ready')
  assert.equal(records(sup).find((r) => r.event === 'node').why, 'node: configured')
  assert.equal(proc(ready.pid).exe, realNode())
  assert.equal((await get(port)).body, 'hello world\n')
  await stopAll(sup, w.env, dir)

  const old = path.join(FIX, 'old-node')
  const bad = await runExe(['start', HELLO, '--node', old], { env: w.env })
  assert.equal(bad.code, 1)
  assert.match(bad.stderr, /v18\.19\.0.*ERR_HTTPSYS_NODE_UNUSABLE/s)
  const missing = await runExe(['start', HELLO, '--node', '/nonexistent/node'], { env: w.env })
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /\/nonexistent\/node is not a file.*ERR_HTTPSYS_CONFIG_INVALID/s)
})

test('linux: HTTPSYS_ROUTER=native: the exe writes out the native router it carries, once, and serves hello through it', async () => {
  const w = world('native', { HTTPSYS_ROUTER: 'native' })
  delete w.env.HTTPSYS_ROUTER_PATH
  for (let round = 0; round < 2; round++) {
    const port = await freePort()
    const sup = startExe(['start', HELLO, '-u', `http://127.0.0.1:${port}/`, '--json'], { env: w.env })
    const router = await waitRecord(sup, (r) => r.event === 'router', 'router')
    assert.equal(router.router, 'native', router.msg)
    const bin = proc(router.pid).exe
    assert.equal(path.dirname(path.dirname(bin)), w.cache, `the router ${bin} is not the one written to the cache`)
    assert.equal(path.basename(bin), 'httpsys-router')
    await waitRecord(sup, (r) => r.event === 'ready', 'ready')
    assert.deepEqual(await get(port), { status: 200, body: 'hello world\n' })
    await stopAll(sup, w.env)
  }
  // one build's folder, the router written once and reused by the second start
  const written = fs.readdirSync(w.cache).flatMap((d) => fs.readdirSync(path.join(w.cache, d)))
  assert.deepEqual(written.filter((f) => f.startsWith('httpsys-router')), ['httpsys-router'])
})

// The linux-arm64 executable under qemu's user-mode emulator (no arm64 machine here):
// the supervisor and the hub run as arm64 code; the app runs on the PATH's node, which
// is this machine's (the exe cannot start arm64 children without binfmt_misc).
const ARM_EXE = path.join(DIST, 'httpsys-linux-arm64')
const QEMU = ['qemu-aarch64-static', '-L', '/usr/aarch64-linux-gnu']
function armUsable () {
  if (!fs.existsSync(ARM_EXE)) return 'no linux-arm64 executable was built'
  if (!fs.existsSync('/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1')) return 'no arm64 glibc (apt-get install libc6-arm64-cross libstdc++6-arm64-cross)'
  try {
    execFileSync(QEMU[0], ['--version'], { stdio: 'ignore' })
  } catch {
    return 'no qemu-aarch64-static (apt-get install qemu-user-static)'
  }
  return null
}

// An arm64 process under qemu cannot exec an arm64 binary here (no binfmt_misc), so
// the router the arm64 exe carries is taken out of it by the exe itself (as node) and
// run through qemu by a wrapper HTTPSYS_ROUTER_PATH names: the arm64 supervisor drives
// the arm64 router.
test('linux-arm64 (qemu): the arm64 exe carries an arm64 native router; the arm64 supervisor serves hello through it', async () => {
  const why = armUsable()
  if (why) throw new Skip(why)
  const exe = QEMU[0]
  const arm = (args) => [...QEMU.slice(1), ARM_EXE, ...args]
  const dir = tmpdir('arm64-router')
  const router = path.join(dir, 'httpsys-router')
  const take = path.join(dir, 'take.js')
  fs.writeFileSync(take, 'require("node:fs").writeFileSync(process.argv[2], Buffer.from(require("node:sea").getRawAsset("httpsys-router-linux-arm64")), { mode: 0o755 })\n')
  const w = world('arm64-native', { HTTPSYS_ROUTER: 'native' })
  const taken = await runExe(arm([take, router]), { env: { ...w.env, HTTPSYS_NODE_MODE: '1' }, exe, timeout: 60000 })
  assert.equal(taken.code, 0, taken.stdout + taken.stderr)
  assert.equal(binaryKind(router), 'linux-arm64')
  const wrapper = path.join(dir, 'router-under-qemu')
  fs.writeFileSync(wrapper, `#!/bin/sh\nexec ${QEMU[0]} "${router}" "$@"\n`, { mode: 0o755 })
  w.env.HTTPSYS_ROUTER_PATH = wrapper
  const port = await freePort()
  const sup = startExe(arm(['start', HELLO, '-u', `http://127.0.0.1:${port}/`, '--json']), { env: w.env, exe })
  const started = await waitRecord(sup, (r) => r.event === 'router', 'router', 60000)
  assert.equal(started.router, 'native', started.msg)
  assert.deepEqual(proc(started.pid).argv.slice(0, 2), [QEMU[0], router], 'the router is the arm64 one, under qemu')
  await waitRecord(sup, (r) => r.event === 'ready', 'ready', 60000)
  assert.deepEqual(await get(port), { status: 200, body: 'hello world\n' })
  const stop = await runExe(arm(['stop', 'all']), { env: w.env, exe, timeout: 60000 })
  assert.equal(stop.code, 0, stop.stdout + stop.stderr)
  assert.equal(await within(sup.exited, 30000), 0, sup.output().slice(-2000))
})

test('linux: httpsys init from the exe writes the commented config, which config check accepts', async () => {
  const w = world('init')
  const dir = tmpdir('init')
  fs.copyFileSync(HELLO, path.join(dir, 'app.js'))
  const r = await runExe(['init'], { env: w.env, cwd: dir })
  assert.equal(r.code, 0, r.stdout + r.stderr)
  const text = fs.readFileSync(path.join(dir, 'httpsys.config.js'), 'utf8')
  assert.equal(text, fs.readFileSync(path.join(ROOT, 'templates', 'httpsys.config.js'), 'utf8'))
  const check = await runExe(['config', 'check'], { env: w.env, cwd: dir })
  assert.equal(check.code, 0, check.stdout + check.stderr)
})

test('linux: service install from the exe writes a unit whose program is the exe alone (in a mount namespace of its own)', async () => {
  // As root, --system writes a system unit to /etc/systemd/system (without it, root is
  // asked which it means): a private mount of a temp folder there keeps this machine's
  // own units untouched.
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) throw new Skip('needs root (a system unit, in a private mount namespace)')
  const dir = tmpdir('service')
  const units = tmpdir('service-units')
  fs.copyFileSync(HELLO, path.join(dir, 'app.js'))
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'), "module.exports = { apps: [{ name: 'hello', script: 'app.js', urls: ['http://+:8080/'] }] }\n")
  const w = world('service')
  const r = await runExe(['-m', 'sh', '-c', 'mount --bind "$1" /etc/systemd/system && exec "$2" service install --system --name httpsys-exe-test', 'sh', units, EXE],
    { env: w.env, cwd: dir, exe: 'unshare' }).catch((err) => ({ code: -1, stdout: '', stderr: err.message }))
  if (r.code !== 0 && /unshare|mount|Operation not permitted/i.test(r.stderr) && !/httpsys/.test(r.stdout)) throw new Skip(`no private mount namespace here: ${r.stderr.trim().split('\n')[0]}`)
  assert.equal(r.code, 0, r.stdout + r.stderr)
  const text = fs.readFileSync(path.join(units, 'httpsys-exe-test.service'), 'utf8')
  const config = path.join(dir, 'httpsys.config.js')
  assert.deepEqual(text.split('\n').filter((l) => l.startsWith('Exec')), [`ExecStart=${EXE} start -c ${config}`, `ExecReload=${EXE} reload all -c ${config}`])
})

// ---- Windows, read back ---------------------------------------------------------------

test('windows: the exes carry our version resource and icon, the SEA blob, and no signature (read back with resedit)', async () => {
  const exes = ['httpsys-win-x64.exe', 'httpsys-win-arm64.exe'].filter((f) => fs.existsSync(path.join(DIST, f)))
  if (exes.length === 0) throw new Skip('no Windows executable was built')
  const { NtExecutable, NtExecutableResource, Data, Format, Resource } = await import('resedit')
  const pkg = require('../../package.json')
  const [major, minor, patch] = VERSION.split(/[.+-]/).map(Number)
  const ico = Data.IconFile.from(fs.readFileSync(path.join(ROOT, 'assets', 'httpsys.ico')))
  for (const f of exes) {
    const exe = NtExecutable.from(fs.readFileSync(path.join(DIST, f)))
    const cert = exe.newHeader.optionalHeaderDataDirectory.get(Format.ImageDirectoryEntry.Certificate)
    assert.deepEqual(cert, { virtualAddress: 0, size: 0 }, `${f}: no Authenticode signature, and no entry for one`)
    const res = NtExecutableResource.from(exe)

    const vis = Resource.VersionInfo.fromEntries(res.entries)
    assert.equal(vis.length, 1, `${f}: one version resource`)
    const [vi] = vis
    assert.deepEqual(
      [vi.fixedInfo.fileVersionMS, vi.fixedInfo.fileVersionLS, vi.fixedInfo.productVersionMS, vi.fixedInfo.productVersionLS],
      [major * 65536 + minor, patch * 65536, major * 65536 + minor, patch * 65536], `${f}: the numeric versions are ${major}.${minor}.${patch}.0`)
    const langs = vi.getAllLanguagesForStringValues()
    assert.deepEqual(langs, [{ lang: 1033, codepage: 1200 }])
    const strings = vi.getStringValues(langs[0])
    const { FileDescription, CompanyName, LegalCopyright, ...rest } = strings
    assert.deepEqual(rest, { ProductName: 'httpsys', FileVersion: VERSION, ProductVersion: VERSION, OriginalFilename: 'httpsys.exe', InternalName: 'httpsys' }, `${f}: the version strings`)
    assert.match(FileDescription, /^httpsys: ./)
    // from package.json: without an author no company at all (node.exe's "Node.js" is gone)
    if (!pkg.author) assert.equal(CompanyName, undefined, `${f}: CompanyName ${CompanyName}`)
    assert.notEqual(CompanyName, 'Node.js')
    assert.ok(LegalCopyright.includes(`${pkg.license} license`), `${f}: LegalCopyright ${LegalCopyright}`)

    const groups = Resource.IconGroupEntry.fromEntries(res.entries)
    assert.equal(groups.length, 1, `${f}: one icon group`)
    assert.deepEqual(groups[0].icons.map((i) => [i.width || 256, i.height || 256, i.bitCount]),
      [[16, 16, 32], [32, 32, 32], [48, 48, 32], [256, 256, 32]], `${f}: the icon group holds our sizes`)
    const frames = groups[0].getIconItemsFromEntries(res.entries)
    assert.deepEqual(frames.map((fr) => Buffer.from(fr.bin)), ico.icons.map((i) => Buffer.from(i.data.bin)), `${f}: the frames are assets/httpsys.ico's`)
    assert.equal(res.entries.filter((e) => e.type === 3).length, 4, `${f}: node's own icon frames are gone`)

    const blob = res.entries.find((e) => e.type === 10 && e.id === 'NODE_SEA_BLOB')
    assert.ok(blob && blob.bin.byteLength > 100000, `${f}: the SEA blob is among the resources`)
  }
  console.log(`# ${exes.join(', ')}: version resource httpsys ${VERSION}, icon ${ico.icons.map((i) => i.width || 256).join('/')} px, unsigned`)
})

// ---- Windows, under Wine ----------------------------------------------------------------

function wineReady () {
  if (!fs.existsSync(WIN_EXE)) return `${path.relative(ROOT, WIN_EXE)} was not built`
  try { execFileSync('sh', ['-c', 'command -v wine'], { stdio: 'ignore' }) } catch { return 'wine is not installed (npm run test:windows installs it)' }
  if (!process.env.WINEPREFIX || !fs.existsSync(path.join(process.env.WINEPREFIX, '.httpsys-ready'))) {
    return 'no Wine prefix set up by test/windows/run.sh (run npm run test:windows first)'
  }
  return null
}

let W = null
function wine () {
  const why = wineReady()
  if (why) throw new Skip(why)
  if (W === null) W = require('../windows/lib/wine')
  return W
}

/** Z:\... for a Linux path: Wine maps / to Z: (no winepath process, which could fail on a busy wineserver) */
function winPath (p) {
  return 'Z:' + path.resolve(p).replace(/\//g, '\\')
}

/** The Windows exe under Wine: its own runtime and cache folders (Windows paths). */
function wineWorld (name) {
  const runtime = tmpdir(`win-${name}-run`)
  const cache = tmpdir(`win-${name}-cache`)
  return { cache, env: { HTTPSYS_RUNTIME_DIR: winPath(runtime), HTTPSYS_CACHE_DIR: winPath(cache) } }
}

async function wineHello (name, backend, { node } = {}) {
  const Wn = wine()
  const w = wineWorld(name)
  const port = await Wn.freePort()
  const sup = Wn.startNode(`exe-${name}`, ['start', 'examples/hello/app.js', '-u', `http://+:${port}/`, '--backend', backend, '--json',
    ...(node ? ['--node', winPath(node)] : [])], { exe: WIN_EXE, env: w.env })
  const stop = async () => {
    await Wn.runNode(`exe-${name}-stop`, ['stop', 'all'], { exe: WIN_EXE, env: w.env })
    if ((await Wn.within(sup.exited, 30000)) === 'timeout') {
      sup.child.kill('SIGKILL')
      return false
    }
    return true
  }
  try {
    const m = await Wn.waitFor(sup, /^\{.*"event":"backend".*$/m, 60000)
    const backendRecord = JSON.parse(m[0])
    assert.equal(backendRecord.backend, backend, backendRecord.msg)
    await Wn.waitFor(sup, /"event":"ready"/, 60000)
    const record = JSON.parse(/^\{.*"event":"node".*$/m.exec(sup.output())[0])
    if (node) assert.deepEqual([record.self, record.why], [false, 'node: configured'])
    else assert.deepEqual([record.self, record.why], [true, 'no node on the PATH'], 'no node.exe on Wine\'s PATH: the exe runs the app itself')
    const res = await Wn.eventually(() => Wn.request(port, { path: '/' }), 20000)
    assert.deepEqual([res.status, res.body.toString()], [200, 'hello world\n'])
    const list = await Wn.runNode(`exe-${name}-ls`, ['ls', '--json'], { exe: WIN_EXE, env: w.env })
    const sups = JSON.parse(list.output.slice(list.output.indexOf('[')))
    assert.equal(sups[0].apps[0].instances[0].state, 'ready', list.output)
    return { sup, cache: w.cache, output: sup.output }
  } finally {
    assert.ok(await stop(), `the supervisor did not exit after stop all:\n${sup.output().slice(-2000)}`)
  }
}

test('windows (Wine): httpsys-win-x64.exe --version', async () => {
  const Wn = wine()
  const r = await Wn.runNode('exe-version', ['--version'], { exe: WIN_EXE })
  assert.equal(r.code, 0, r.output)
  assert.equal(r.output.trim(), VERSION)
})

test('windows (Wine): the exe serves hello through HTTP.SYS with the addon it carries; ls and stop from a second call', async () => {
  const { cache } = await wineHello('httpsys', 'httpsys')
  const written = fs.readdirSync(cache).flatMap((d) => fs.readdirSync(path.join(cache, d)))
  assert.ok(written.includes('httpsys_native.node'), `the addon was written from the exe (${written.join(', ')})`)
})

// The router the Windows exe carries is not run under Wine: Go's runtime (1.22 and later)
// needs ProcessPrng from bcryptprimitives.dll, which Wine 8 (Debian 12's) lacks ("fatal
// error: bcryptprimitives.dll not found" before main); and on Windows the supervisor
// gives the router a named pipe for its workers, which it does not listen on yet
// (issue 25). So: the exe under Wine writes out the router it carries, an x64 PE.
test('windows (Wine): the exe carries a win32-x64 native router, which it writes out as node', async () => {
  const Wn = wine()
  const dir = tmpdir('win-router')
  const router = path.join(dir, 'httpsys-router.exe')
  const take = path.join(dir, 'take.js')
  fs.writeFileSync(take, 'require("node:fs").writeFileSync(process.argv[2], Buffer.from(require("node:sea").getRawAsset("httpsys-router-win32-x64.exe")))\n')
  const taken = await Wn.runNode('exe-router-take', [winPath(take), winPath(router)], { exe: WIN_EXE, env: { HTTPSYS_NODE_MODE: '1' } }, 60000)
  assert.equal(taken.code, 0, taken.output)
  assert.equal(binaryKind(router), 'win32-x64')
})

test('windows (Wine): the exe serves hello through the hub', async () => {
  await wineHello('hub', 'hub')
})

test('windows (Wine): --node node.exe: the user\'s node runs the preload the exe wrote out, with the addon next to it (HTTP.SYS)', async () => {
  const nodeExe = path.join(process.env.HTTPSYS_WINE_CACHE || path.join(os.homedir(), '.cache', 'httpsys-windows'), 'node-20.20.2.exe')
  if (!fs.existsSync(nodeExe)) throw new Skip(`no ${nodeExe} (test/windows/run.sh downloads it)`)
  const { cache } = await wineHello('user-node', 'httpsys', { node: nodeExe })
  const written = fs.readdirSync(cache).flatMap((d) => fs.readdirSync(path.join(cache, d)))
  assert.deepEqual(written.sort(), ['httpsys_native.node', 'register.js'])
})

// ---- the npm package ---------------------------------------------------------------------
// `npm pack` as a release does it (the prepack script: every platform's router package,
// scripts/router-packages.js), then the tarballs installed into a project of their own
// with no registry for ours: npm's overrides point each platform package at its local
// tarball, so npm chooses by os and cpu exactly as from the registry. It packs a copy of
// the checkout, whose package.json prepack rewrites for the length of the pack.

const PLATFORM_PACKAGES = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64']

/** What a binary is for, from its header: ELF (machine), Mach-O 64 (cpu type), PE. */
function binaryKind (file) {
  const b = fs.readFileSync(file)
  if (b.readUInt32BE(0) === 0x7f454c46) return { 0x3e: 'linux-x64', 0xb7: 'linux-arm64' }[b.readUInt16LE(18)] || 'linux-?'
  if (b.readUInt32LE(0) === 0xfeedfacf) return { 0x01000007: 'darwin-x64', 0x0100000c: 'darwin-arm64' }[b.readUInt32LE(4)] || 'darwin-?'
  if (b.toString('latin1', 0, 2) === 'MZ') return { 0x8664: 'win32-x64', 0xaa64: 'win32-arm64' }[b.readUInt16LE(b.readUInt32LE(0x3c) + 4)] || 'win32-?'
  return 'unknown'
}

function npm (args, cwd, timeout = 900000) {
  const r = require('node:child_process').spawnSync('npm', args, { cwd, encoding: 'utf8', timeout, env: { ...process.env, npm_config_update_notifier: 'false' } })
  return { code: r.status, out: `${r.stdout}${r.stderr}` }
}

test('npm pack: one package per platform with its router (os, cpu), named in optionalDependencies; installed from the tarballs, HTTPSYS_ROUTER=native runs the platform\'s router', async () => {
  const here = `${process.platform}-${process.arch}`
  if (!PLATFORM_PACKAGES.includes(here)) throw new Skip(`no router package for ${here}`)
  const copy = tmpdir('pack-src')
  execFileSync('tar', ['-cf', path.join(copy, '..', `${path.basename(copy)}.tar`), '--exclude=./node_modules', '--exclude=./.git', '--exclude=./build',
    '--exclude=./dist', '--exclude=./router/bin', '.'], { cwd: ROOT })
  execFileSync('tar', ['-xf', path.join(copy, '..', `${path.basename(copy)}.tar`), '-C', copy])
  fs.rmSync(path.join(copy, '..', `${path.basename(copy)}.tar`))
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(copy, 'node_modules'))
  const before = fs.readFileSync(path.join(copy, 'package.json'), 'utf8')
  const out = tmpdir('pack-out')

  const t0 = Date.now()
  const packed = npm(['pack', '--pack-destination', out], copy)
  console.log(`# npm pack (the Windows addon, ${PLATFORM_PACKAGES.length} routers) took ${((Date.now() - t0) / 1000).toFixed(0)} s`)
  assert.equal(packed.code, 0, packed.out.slice(-3000))
  assert.equal(fs.readFileSync(path.join(copy, 'package.json'), 'utf8'), before, 'postpack put package.json back as it was')

  const main = path.join(out, `httpsys-cli-${VERSION}.tgz`)
  const manifest = JSON.parse(execFileSync('tar', ['-xzOf', main, 'package/package.json'], { encoding: 'utf8' }))
  assert.deepEqual(manifest.optionalDependencies, Object.fromEntries(PLATFORM_PACKAGES.map((t) => [`httpsys-router-${t}`, VERSION])))
  assert.equal(manifest.scripts.prepare, undefined, 'the checkout\'s prepare script is not in the package (npm 11 would ask users to allow it)')
  const listed = execFileSync('tar', ['-tzf', main], { encoding: 'utf8' }).split('\n')
  assert.deepEqual(listed.filter((f) => /\/httpsys-router(\.exe)?$|^package\/router\//.test(f)), [], 'the main package carries no router binary')

  const overrides = {}
  for (const t of PLATFORM_PACKAGES) {
    const name = `httpsys-router-${t}`
    const tgz = path.join(copy, 'build', 'npm', `${name}-${VERSION}.tgz`)
    const pkg = JSON.parse(execFileSync('tar', ['-xzOf', tgz, 'package/package.json'], { encoding: 'utf8' }))
    assert.deepEqual([pkg.name, pkg.version, pkg.os, pkg.cpu], [name, VERSION, [t.split('-')[0]], [t.split('-')[1]]])
    const dir = tmpdir(`pack-${t}`)
    execFileSync('tar', ['-xzf', tgz, '-C', dir])
    const bin = path.join(dir, 'package', 'bin', t.startsWith('win32') ? 'httpsys-router.exe' : 'httpsys-router')
    assert.equal(binaryKind(bin), t, `${name} carries a router for ${t}`)
    overrides[name] = `file:${tgz}`
  }

  const project = tmpdir('pack-install')
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({
    name: 'pack-test', version: '1.0.0', private: true, dependencies: { 'httpsys-cli': `file:${main}` }, overrides
  }, null, 2))
  // ours from the tarballs only; httpsys-cli's own dependencies from npm's cache, or
  // from the registry when the cache lacks them
  let installed = npm(['install', '--offline', '--no-audit', '--no-fund'], project)
  if (installed.code !== 0 && /ENOTCACHED/.test(installed.out)) {
    console.log('# npm install --offline: a dependency is not in npm\'s cache; again with --prefer-offline')
    installed = npm(['install', '--prefer-offline', '--no-audit', '--no-fund'], project)
  }
  assert.equal(installed.code, 0, installed.out.slice(-3000))
  assert.doesNotMatch(installed.out, /install-scripts/, 'npm asks to allow no install script of ours')
  const nm = path.join(project, 'node_modules')
  assert.deepEqual(fs.readdirSync(nm).filter((d) => d.startsWith('httpsys-router-')), [`httpsys-router-${here}`], 'npm installed only this platform\'s router')
  const routerBin = path.join(nm, `httpsys-router-${here}`, 'bin', 'httpsys-router')

  const cli = path.join(nm, 'httpsys-cli', 'bin', 'httpsys')
  const w = world('pack', { HTTPSYS_ROUTER: 'native' })
  delete w.env.HTTPSYS_ROUTER_PATH
  const port = await freePort()
  const sup = startExe([cli, 'start', HELLO, '-u', `http://127.0.0.1:${port}/`, '--json'], { env: w.env, cwd: project, exe: process.execPath })
  const router = await waitRecord(sup, (r) => r.event === 'router', 'router')
  assert.equal(router.router, 'native', router.msg)
  assert.equal(fs.realpathSync(proc(router.pid).exe), fs.realpathSync(routerBin), 'the router runs from the installed platform package')
  await waitRecord(sup, (r) => r.event === 'ready', 'ready')
  assert.deepEqual(await get(port), { status: 200, body: 'hello world\n' })
  const stop = await runExe([cli, 'stop', 'all'], { env: w.env, cwd: project, exe: process.execPath })
  assert.equal(stop.code, 0, stop.stdout + stop.stderr)
  assert.equal(await within(sup.exited, 20000), 0, sup.output().slice(-2000))
})

// ---- runner -----------------------------------------------------------------------------

async function main () {
  const filter = process.argv.slice(2).join(' ')
  let passed = 0
  let failed = 0
  let skipped = 0
  for (const t of tests) {
    if (filter && !t.name.includes(filter)) continue
    const t0 = Date.now()
    try {
      await t.fn()
      passed++
      console.log(`ok - ${t.name} (${Date.now() - t0} ms)`)
    } catch (err) {
      if (err instanceof Skip && process.env.HTTPSYS_EXE_REQUIRE_WINE !== '1') {
        skipped++
        console.log(`skip - ${t.name}: ${err.message}`)
      } else {
        failed++
        console.log(`not ok - ${t.name}\n${String(err.stack || err).split('\n').map((l) => `  ${l}`).join('\n')}`)
      }
    } finally {
      for (const child of started.splice(0)) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      }
    }
  }
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  if (skipped > 0) console.log(`# ${skipped} skipped`)
  console.log(`${passed} passed, ${failed} failed`)
  process.exitCode = failed > 0 ? 1 : 0
}

main()
