'use strict'

// `httpsys start -d`: the supervisor in the background. The command returns once every
// app is ready, printing where each is served; the supervisor outlives the command (its
// own session: the shell and its terminal can go); ls, logs and stop reach it from
// another shell, and logs reads its log file once it has stopped. A start that fails
// says why and exits 1.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { cli, freePort, get, alive, waitUntil, APPS } = require('../fixtures/apps/harness')

let dir
let daemonPid = null
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-daemon-')) })
afterEach(async () => {
  // every supervisor of this test's runtime directory, also one whose pid the test never
  // learnt (it failed first): a background supervisor now outlives its errored apps
  if (fs.existsSync(env().HTTPSYS_RUNTIME_DIR)) await cli(['stop', 'all', '--all-supervisors'], { env: env(), cwd: dir })
  if (daemonPid !== null && alive(daemonPid)) process.kill(daemonPid, 'SIGKILL')
  daemonPid = null
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })

async function eventually (check, timeout) {
  const end = Date.now() + timeout
  while (Date.now() < end) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return check()
}

test('start -d returns once every app is ready; ls, logs and stop work from another shell; logs reads the file after', async () => {
  const port = await freePort()
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = { apps: [
    { name: 'api', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/api/'], instances: 2 },
    { name: 'web', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/'] }
  ] }\n`)
  const started = await cli(['start', '-d'], { env: env(), cwd: dir })
  expect(started.code).toBe(0)
  expect(started.stdout).toMatch(/api \| ready {2}http:\/\/127\.0\.0\.1:\d+\/api\/ {2}2 instances/)
  expect(started.stdout).toMatch(/web \| ready {2}http:\/\/127\.0\.0\.1:\d+\/ {2}1 instance/)
  const m = /httpsys runs in the background \(pid (\d+)\)/.exec(started.stdout)
  expect(m).not.toBeNull()
  daemonPid = Number(m[1])
  // the command has exited; the supervisor lives on, in a session of its own
  expect(alive(daemonPid)).toBe(true)
  if (process.platform === 'linux') {
    const sid = Number(execFileSync('ps', ['-o', 'sid=', '-p', String(daemonPid)], { encoding: 'utf8' }).trim())
    expect(sid).toBe(daemonPid)
  }
  expect((await get(port, '/api/x')).status).toBe(200)

  const ls = JSON.parse((await cli(['ls', '--json'], { env: env(), cwd: dir })).stdout)
  expect(ls[0].apps.map((a) => [a.name, a.state])).toEqual([['api', 'ready'], ['web', 'ready']])
  const logs = await cli(['logs', 'web', '-n', '200', '--json'], { env: env(), cwd: dir })
  expect(logs.stdout).toMatch(/"event":"app-ready","app":"web"/)

  const stop = await cli(['stop'], { env: env(), cwd: dir })
  expect(stop.code).toBe(0)
  expect(await waitUntil(() => !alive(daemonPid), 10000)).toBe(true)
  const after = await cli(['logs', '-n', '500', '--json'], { env: env(), cwd: dir })
  expect(after.code).toBe(0)
  expect(after.stderr).toMatch(/is not running: its last records, from its log files/)
  expect(after.stdout).toMatch(/"event":"stopped"/)
})

test('start -d of an app that cannot start says why and exits 1; the supervisor stays, answering 503, until `restart` brings the fixed app back', async () => {
  const port = await freePort()
  const write = (script) => fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = { apps: [
    { name: 'bad', script: ${JSON.stringify(APPS)} + '/${script}', urls: ['http://127.0.0.1:${port}/'], max_restarts: 2, restart_window: '1m', backoff: { initial: '50ms' } }
  ] }\n`)
  write('crash-start.js')
  const started = await cli(['start', '-d'], { env: env(), cwd: dir })
  expect(started.code).toBe(1)
  expect(started.stdout).toMatch(/bad#0 \| .*boom/)
  const m = /httpsys could not start every app \(errored: bad\); it stays in the background \(pid (\d+)\), answering 503 for it: fix it, then `httpsys restart bad` \(or `httpsys stop all`\)/.exec(started.stdout)
  expect(m).not.toBeNull()
  daemonPid = Number(m[1])
  // the port stays open: the app's requests get 503 at once, as IIS answers for a stopped pool
  const down = await get(port, '/x')
  expect(down.status).toBe(503)
  expect(alive(daemonPid)).toBe(true)
  const ls = JSON.parse((await cli(['ls', '--json'], { env: env(), cwd: dir })).stdout)
  expect(ls[0].apps.map((a) => [a.name, a.state])).toEqual([['bad', 'errored']])

  write('pid-server.js')
  const restarted = await cli(['restart', 'bad'], { env: env(), cwd: dir })
  expect(restarted.code).toBe(0)
  expect(restarted.stdout).toMatch(/^bad \[httpsys\.config\.js\]: restarted; applied: script\n$/)
  expect(await eventually(async () => (await get(port, '/x')).status === 200, 5000)).toBe(true)
})

test('start -d of an app that never listens shows what it waits for, then the cause: stopped by httpsys at listen_timeout', async () => {
  const port = await freePort()
  fs.writeFileSync(path.join(dir, 'mute.js'), 'setInterval(() => {}, 1000)\n')
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = { apps: [
    { name: 'mute', script: './mute.js', urls: ['http://127.0.0.1:${port}/'], listen_timeout: '6s', max_restarts: 2, backoff: { initial: '50ms' } }
  ] }\n`)
  const t0 = Date.now()
  const started = await cli(['start', '-d'], { env: env(), cwd: dir })
  expect(Date.now() - t0).toBeLessThan(12000)
  expect(started.code).toBe(1)
  expect(started.stdout).toMatch(/^waiting for mute: 5 s; not listening yet; httpsys stops it at 6 s \(listen_timeout\)$/m)
  expect(started.stdout).toMatch(/mute#0 \| never listened within 6 s; stopping it; if it serves no HTTP, give it type: "worker"/)
  const m = /httpsys did not get mute ready: it was stopped and is started again in the background \(pid (\d+)\) until it errors/.exec(started.stdout)
  expect(m).not.toBeNull()
  daemonPid = Number(m[1])
  let records = []
  await eventually(async () => {
    const logs = await cli(['logs', 'mute', '-n', '100', '--json'], { env: env(), cwd: dir })
    records = logs.stdout.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l))
    return records.some((r) => r.event === 'errored')
  }, 10000)
  expect(records.find((r) => r.event === 'errored')).toMatchObject({ cause: 'never listened within 6 s; stopped by httpsys' })
  expect(records.filter((r) => r.event === 'exit').map((r) => r.msg)).toEqual(Array(2).fill('stopped (never listened within 6 s; exit code 0)'))
  expect(records.some((r) => /exited with code 0/.test(r.msg))).toBe(false)
})

test('start -d whose supervisor cannot start at all (its port is taken) prints the coded cause, not only the log path', async () => {
  const net = require('node:net')
  const blocker = net.createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => blocker.once('listening', resolve))
  try {
    const port = blocker.address().port
    fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = { apps: [
      { name: 'web', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/'] }
    ] }\n`)
    const started = await cli(['start', '-d'], { env: env(), cwd: dir })
    expect(started.code).toBe(1)
    expect(started.stdout).toMatch(new RegExp(`httpsys: Port ${port} on 127\\.0\\.0\\.1 is already in use by pid ${process.pid} \\(.*\\)\\. .*\\(ERR_HTTPSYS_PORT_IN_USE\\)`))
    expect(started.stdout).toMatch(/httpsys could not start every app and exited \(code 1\)/)
  } finally {
    blocker.close()
  }
})

test('a supervisor started from a script: after it stopped, logs in its folder (or -c <script>) reads its files, its app log_dir too', async () => {
  const port = await freePort()
  const script = path.join(dir, 'app.js')
  fs.writeFileSync(script, `require('http').createServer((q, s) => s.end('x')).listen(${port}, () => console.log('script app up'))\n`)
  const started = await cli(['start', 'app.js', '-d', '--log-dir', 'logs'], { env: env(), cwd: dir })
  expect(started.code).toBe(0)
  daemonPid = Number(/\(pid (\d+)\)/.exec(started.stdout)[1])
  expect((await cli(['stop'], { env: env(), cwd: dir })).code).toBe(0)
  expect(await waitUntil(() => !alive(daemonPid), 10000)).toBe(true)
  const here = await cli(['logs', '-n', '500', '--json'], { env: env(), cwd: dir })
  expect(here.code).toBe(0)
  expect(here.stderr).toMatch(/is not running: its last records, from its log files/)
  expect(here.stdout).toMatch(/script app up/)
  expect(here.stdout).toMatch(/"event":"stopped"/)
  const elsewhere = await cli(['logs', 'app', '-c', script, '--json'], { env: env(), cwd: os.tmpdir() })
  expect(elsewhere.code).toBe(0)
  expect(elsewhere.stdout).toMatch(/script app up/)
  expect(fs.readdirSync(path.join(dir, 'logs'))).toContain('app.log')
})
