'use strict'

// `httpsys service` as a real service of Wine's service control manager (services.exe):
// the install through the addon (CreateServiceW and ChangeServiceConfig2W), `sc start`
// starting node.exe with `httpsys service run` (StartServiceCtrlDispatcherW on its own
// thread), the supervisor serving from inside the service, `sc stop` turned into the
// stop ladder (STOP_PENDING, the app's own SIGTERM listener, STOPPED with exit code 0),
// a failing supervisor reported as a service-specific error, and uninstall stopping and
// deleting the service. Registered by run-tests.js.
//
// What Wine does not do (README.md lists the checks a real Windows run makes): it runs
// every service as the same user whatever the account, keeps no recovery actions (the
// call succeeds, a query finds none) and refuses FAILURE_ACTIONS_FLAG and SERVICE_SID_INFO
// with ERROR_INVALID_LEVEL, stores no URL reservation, reports no dependencies, and
// gives services another ProgramData than shells.

const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const W = require('./lib/wine')

const FIX = 'test/windows/fixtures'
const DIR = path.join(W.LOG_DIR, 'service')
const MARKS = path.join(DIR, 'marks')
const NAME = 'httpsys-wine-test'
const FAILING = 'httpsys-wine-fail'
const WAIT_MS = 30000

/** Z:\... for a Linux path (Wine maps / to Z:) */
const winPath = (p) => 'Z:' + path.resolve(p).replace(/\//g, '\\')

/** The Linux path of a Windows one of this prefix (C:\ is drive_c, Z:\ is /). */
function linuxPath (p) {
  const m = /^([A-Za-z]):\\(.*)$/.exec(p)
  if (!m) return p
  const rest = m[2].replace(/\\/g, '/')
  return m[1].toUpperCase() === 'Z' ? `/${rest}` : path.join(process.env.WINEPREFIX, `drive_${m[1].toLowerCase()}`, rest)
}

/** `wine sc <args>`, as an administrator would type it; resolves with { code, output }. */
function sc (args) {
  fs.mkdirSync(DIR, { recursive: true })
  const log = path.join(DIR, `sc-${args.join('-')}.log`)
  const fd = fs.openSync(log, 'w')
  // output to a file: a wine program may start services.exe, which must not hold our pipe
  const child = spawn('wine', ['sc', ...args], { stdio: ['ignore', fd, fd], env: { ...process.env, WINEDEBUG: '-all' } })
  fs.closeSync(fd)
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output: fs.readFileSync(log, 'utf8') })))
}

function writeConfig (file, app) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const config = { backend: 'hub', apps: [{ kill_timeout: '5s', ...app }] }
  fs.writeFileSync(file, `module.exports = ${JSON.stringify(config, null, 2)}\n`)
}

/**
 * @param {Function} test registers a test (name, fn, { keep })
 * @param {object} ctx { json } from run-tests.js
 */
function register (test, { json }) {
  const httpsys = (name, args) => W.runNode(name, ['bin/httpsys', ...args])
  const probe = (name, args) => W.runNode(name, [`${FIX}/service-probe.js`, ...args])

  async function status (name) {
    const { code, output } = await httpsys(`service-status-${name}`, ['service', 'status', '--name', name, '--json'])
    assert.equal(code, 0, output)
    return JSON.parse(output.slice(output.indexOf('{')))
  }

  async function waitState (name, state) {
    const end = Date.now() + WAIT_MS
    for (;;) {
      const s = await status(name)
      if (s.state === state) return s
      if (Date.now() > end) throw new Error(`${name} is ${s.state}, not ${state}, after ${WAIT_MS} ms`)
      await W.sleep(300)
    }
  }

  // The service's records. Wine's services.exe gives services ProgramData=C:\users\Public,
  // where a process started from a shell has C:\ProgramData (on Windows both are
  // C:\ProgramData), so the log `service status` names may be in the other place.
  const records = (s) => {
    const file = [linuxPath(s.log), path.join(process.env.WINEPREFIX, 'drive_c', 'users', 'Public', 'httpsys', s.name, 'service.log')]
      .find((f) => fs.existsSync(f))
    if (!file) return []
    return fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
  }

  const svc = {}

  test('service: `httpsys service run` outside the service control manager exits 1 (ERR_HTTPSYS_SERVICE_NOT_SCM)', async () => {
    const config = path.join(DIR, 'never', 'httpsys.config.js')
    writeConfig(config, { name: 'never', script: winPath(`${FIX}/supervised-app.js`), urls: ['http://+:1/'] })
    const { code, output } = await httpsys('service-run-outside', ['service', 'run', '--name', 'never', '-c', winPath(config)])
    assert.equal(code, 1, output)
    assert.match(output, /^httpsys: `httpsys service run` is what the Windows service control manager starts.*\(ERR_HTTPSYS_SERVICE_NOT_SCM\)$/m)
  })

  test('service: install creates an auto-start service as NT SERVICE\\<name> that runs `httpsys service run`', async () => {
    // a service left by an interrupted run would make the install fail
    for (const name of [NAME, FAILING]) await probe(`service-cleanup-${name}`, ['remove', name])
    fs.rmSync(MARKS, { recursive: true, force: true })
    fs.mkdirSync(MARKS, { recursive: true })
    svc.port = await W.freePort()
    svc.config = path.join(DIR, 'app', 'httpsys.config.js')
    writeConfig(svc.config, {
      name: 'svc-app',
      script: winPath(`${FIX}/supervised-app.js`),
      urls: [`http://+:${svc.port}/`],
      env: { HTTPSYS_WINE_MARKS: winPath(MARKS) }
    })
    const { code, output } = await httpsys('service-install', ['service', 'install', '-c', winPath(svc.config), '--name', NAME, '--json'])
    assert.equal(code, 0, output)
    const r = JSON.parse(output.slice(output.indexOf('{')))
    assert.equal(r.account, `NT SERVICE\\${NAME}`)
    assert.match(r.binPath, new RegExp(`^"[A-Z]:\\\\.*\\.exe" "Z:\\\\.*\\\\bin\\\\httpsys" service run --name ${NAME} -c "${winPath(svc.config).replace(/\\/g, '\\\\')}"$`))
    // the stop time follows kill_timeout: 5 s + 12 s
    assert.equal(r.stopTimeoutMs, 17000)
    // what Wine's services.exe refuses (ERROR_INVALID_LEVEL); Windows takes them
    assert.deepEqual(r.unsupported, ['recovery after a stop with an error code', 'the service SID type'])
    const s = await status(NAME)
    assert.equal(s.installed, true)
    assert.equal(s.ours, true)
    assert.equal(s.state, 'stopped')
    assert.equal(s.startType, 'auto')
    assert.equal(s.account, `NT SERVICE\\${NAME}`)
    assert.equal(s.binPath, r.binPath)
    assert.equal(s.configFile, winPath(svc.config))
    assert.match(s.description, /Installed by `httpsys service install`/)
    assert.equal(s.preshutdownTimeout, 17000)
    // Wine accepts the recovery actions and keeps none
    assert.equal(s.failureActions, null)
    svc.status = s
    // a second install under the same name is refused, with the fix
    const again = await httpsys('service-install-again', ['service', 'install', '-c', winPath(svc.config), '--name', NAME])
    assert.equal(again.code, 1, again.output)
    assert.match(again.output, new RegExp(`httpsys service uninstall --name ${NAME}.*\\(ERR_HTTPSYS_SERVICE_EXISTS\\)`))
  }, { keep: true })

  test('service: `sc start` starts node.exe as the service; the supervisor in it serves the app', async () => {
    const started = await sc(['start', NAME])
    assert.equal(started.code, 0, started.output)
    const s = await waitState(NAME, 'running')
    assert.ok(s.pid > 0)
    const answer = json(await W.eventually(() => W.request(svc.port, { path: '/from-service' })))
    assert.equal(answer.url, '/from-service')
    svc.worker = answer.pid
    // the worker is the supervisor's child, and the supervisor is the service's process
    assert.equal(W.windowsProcesses().get(answer.pid), s.pid)
    const events = records(s).map((r) => r.event)
    for (const event of ['service:start', 'spawn', 'ready']) assert.ok(events.includes(event), `no ${event} record in ${s.log}: ${events}`)
    svc.pid = s.pid
  }, { keep: true })

  test('service: `sc stop` is a graceful stop: the app\'s SIGTERM listener runs, STOPPED with exit code 0', async () => {
    const stopped = await sc(['stop', NAME])
    assert.equal(stopped.code, 0, stopped.output)
    const s = await waitState(NAME, 'stopped')
    assert.deepEqual(s.exitCode, { win32: 0 })
    assert.ok(fs.existsSync(path.join(MARKS, `sigterm-${svc.worker}`)), 'the app\'s SIGTERM listener did not run')
    const rs = records(s)
    const why = rs.find((r) => r.event === 'service:stop')
    assert.equal(why && why.why, 'the service control manager asked to stop')
    for (const event of ['stop:shutdown', 'stop:done']) assert.ok(rs.some((r) => r.event === event), `no ${event} record`)
    assert.equal(rs.filter((r) => r.event === 'service:stopped').at(-1).code, 0)
    await W.eventually(async () => {
      const alive = W.windowsProcesses()
      assert.ok(!alive.has(svc.worker) && !alive.has(svc.pid), 'the worker or the service process is still alive')
    }, 10000)
  }, { keep: true })

  // issue 28: as a service, a supervisor whose every app errored stays up (as IIS keeps a
  // stopped pool's site answering 503), so `httpsys restart <app>` can bring it back
  test('service: a supervisor whose apps all fail stays running, answering 503 for the errored app', async () => {
    const config = path.join(DIR, 'failing', 'httpsys.config.js')
    const port = await W.freePort()
    writeConfig(config, { name: 'crasher', script: winPath(`${FIX}/kill-pid.js`), urls: [`http://+:${port}/`], restart: 'never' })
    const { code, output } = await httpsys('service-install-failing', ['service', 'install', '-c', winPath(config), '--name', FAILING, '--user', 'LocalSystem'])
    assert.equal(code, 0, output)
    assert.match(output, new RegExp(`created the Windows service ${FAILING}: starts at boot, as LocalSystem`))
    const started = await sc(['start', FAILING])
    assert.equal(started.code, 0, started.output)
    const s = await waitState(FAILING, 'running')
    await W.eventually(() => assert.ok(records(s).some((r) => r.event === 'idle'), 'no idle record yet'))
    assert.equal((await status(FAILING)).state, 'running')
    const res = await W.eventually(() => W.request(port, { path: '/' }))
    assert.equal(res.status, 503)
    const stopped = await sc(['stop', FAILING])
    assert.equal(stopped.code, 0, stopped.output)
    await waitState(FAILING, 'stopped')
  }, { keep: true })

  test('service: uninstall stops a running service first, then deletes it', async () => {
    const started = await sc(['start', NAME])
    assert.equal(started.code, 0, started.output)
    await waitState(NAME, 'running')
    await W.eventually(() => W.request(svc.port, { path: '/before-uninstall' }))
    const { code, output } = await httpsys('service-uninstall', ['service', 'uninstall', '--name', NAME])
    assert.equal(code, 0, output)
    assert.match(output, new RegExp(`^stopped the Windows service ${NAME}\\r?\\ndeleted the Windows service ${NAME}`, 'm'))
    assert.equal((await status(NAME)).installed, false)
    const failing = await httpsys('service-uninstall-failing', ['service', 'uninstall', '--name', FAILING])
    assert.match(failing.output, new RegExp(`^deleted the Windows service ${FAILING}`, 'm'))
    const again = await httpsys('service-uninstall-again', ['service', 'uninstall', '--name', NAME])
    assert.match(again.output, new RegExp(`^${NAME} is not installed: nothing to remove`, 'm'))
    const { output: query } = await probe('service-query-gone', ['query', NAME])
    assert.match(query, /^SERVICE \{"code":1060,"syscall":"OpenServiceW"\}/m)
  })
}

module.exports = { register }
