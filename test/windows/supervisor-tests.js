'use strict'

// The supervisor's Windows code paths in Windows node.exe under Wine, with the hub
// router (`--backend hub`: Wine cannot share an HTTP.SYS queue across processes):
// spawn with no shell and windowsHide, a restart after TerminateProcess, the control
// channel over a named pipe from a second node.exe, the IPC shutdown as the only
// graceful stop (the app's own SIGTERM listener runs), the tree kill after kill_timeout,
// and a .cmd shim resolved to its JavaScript entry. Registered by run-tests.js.
//
// The core of it runs on the native Go router (it ran on the JS hub too until src/hub
// was removed) (HTTPSYS_ROUTER=native, issue 25) as its own process, which the
// other tests run on as Windows' default since issue 25 (routerEnv), router/ cross-built
// by run.sh (HTTPSYS_WINE_ROUTER) with workers attaching over its named pipe: served,
// a worker's restart with requests queued in the router, `ls`, and a stop or a killed
// supervisor that leaves no router behind.
//
// Processes are checked twice: by pid in Wine's own process list (wmic) and by command
// line in Linux's (ps). Wine 8's tasklist is a stub; see README.md for what a real
// Windows run must add (taskkill /T is not in Wine 8's taskkill).

const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { parseRecords } = require('../helpers/records')
const W = require('./lib/wine')

const FIX = 'test/windows/fixtures'
const APP = `${FIX}/supervised-app.js`
const MARKS = path.join(W.LOG_DIR, 'marks')
// every node.exe of these tests sees one runtime directory: `httpsys ls` finds the
// supervisor's state file there and its named pipe through it
const ENV = { HTTPSYS_RUNTIME_DIR: path.join(W.LOG_DIR, 'runtime'), HTTPSYS_WINE_MARKS: MARKS }
const STOP_MS = 20000
const APP_LOGS = path.join(W.LOG_DIR, 'app-logs')

/** The cross-built Windows router (run.sh: HTTPSYS_WINE_ROUTER), or null. */
function routerExe () {
  const file = process.env.HTTPSYS_WINE_ROUTER
  return file && fs.existsSync(file) ? file : null
}

/**
 * A supervisor on the native router: HTTPSYS_ROUTER=native, and the binary by its
 * Windows path (Wine's Z: drive is the Linux root).
 */
function nativeEnv () {
  return { HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: `Z:${path.resolve(routerExe()).replace(/\//g, '\\')}` }
}

/**
 * The environment of a supervisor started with no router asked for: the default, the
 * native router (its binary given as above; the JS hub that ran when run.sh could not
 * build it was removed with issue 25).
 */
function routerEnv (router) {
  if (router === 'native') return nativeEnv()
  const { HTTPSYS_ROUTER_PATH } = nativeEnv()
  return { HTTPSYS_ROUTER_PATH }
}

/**
 * @param {Function} test registers a test (name, fn, { keep })
 * @param {object} ctx { start, untrack, json } from run-tests.js
 */
function register (test, { start, untrack, json }) {
  /** `httpsys <args>` in a second node.exe, run to completion (another terminal). */
  function httpsys (name, args, env = {}) {
    return W.runNode(name, ['bin/httpsys', ...args], { env: { ...ENV, ...env } })
  }

  async function startSupervisor (name, script, { args = [], env = {}, port, router = null } = {}) {
    fs.mkdirSync(MARKS, { recursive: true })
    port = port || await W.freePort()
    const proc = start(name, ['bin/httpsys', 'start', script, '-u', `http://+:${port}/`, '--backend', 'hub', ...args],
      { env: { ...ENV, ...routerEnv(router), ...env } })
    // cleanup after a failed test: as a user would, then by force
    proc.stopWith = async () => {
      if (proc.exitCode === null) await httpsys(`${name}-cleanup`, ['stop', 'all'])
      if ((await W.within(proc.exited, STOP_MS)) !== 'timeout') return true
      proc.child.kill('SIGKILL')
      await proc.exited
      return false
    }
    proc.exited.then((code) => { proc.exitCode = code })
    return { proc, port }
  }

  /** The supervisor's NDJSON records (its stdout is a file, so pino writes JSON). */
  function records (proc) {
    return parseRecords(proc.output())
  }

  async function waitRecord (proc, match, what, timeout = STOP_MS) {
    const end = Date.now() + timeout
    for (;;) {
      const found = records(proc).find(match)
      if (found) return found
      if (Date.now() > end || proc.exitCode !== null) {
        throw new Error(`${proc.name}: no ${what} record within ${timeout} ms${proc.exitCode !== null ? ' (it exited)' : ''}:\n${W.tail(proc.output())}`)
      }
      await W.sleep(50)
    }
  }

  /** The exit code of the supervisor once it has exited by itself. */
  async function exitOf (proc) {
    const code = await W.within(proc.exited, STOP_MS)
    assert.notEqual(code, 'timeout', `${proc.name} did not exit:\n${W.tail(proc.output())}`)
    untrack(proc)
    return code
  }

  /** Fails when any of the pids, or a process whose command line holds `text`, is alive. */
  function assertGone (pids, text) {
    const alive = W.windowsProcesses()
    assert.deepEqual(pids.filter((pid) => alive.has(pid)), [], 'pids still alive in Wine')
    assert.deepEqual(W.processesMatching(text), [], `processes still running with ${text} in their command line`)
  }

  const marked = (pid) => fs.existsSync(path.join(MARKS, `sigterm-${pid}`))

  /** The native router's record: its pid (a Windows pid), once it runs. */
  async function routerOf (proc) {
    const rec = await waitRecord(proc, (r) => r.event === 'router', 'router')
    assert.equal(rec.router, 'native')
    assert.ok(W.windowsProcesses().has(rec.pid), `the router (pid ${rec.pid}) is not running`)
    return rec.pid
  }

  test('native router: its Windows-only Go tests pass under Wine (the worker pipe: bytes both ways, owner-only DACL; its process stats)', async () => {
    const dir = path.join(W.ROOT, 'build', 'win-cross', 'router-tests')
    const exes = fs.existsSync(dir) ? fs.readdirSync(dir).filter((f) => f.endsWith('.test.exe')).sort() : []
    if (!routerExe() || exes.length === 0) W.skip('no Windows router: run.sh builds it and its tests with Go')
    assert.deepEqual(exes, ['listen.test.exe', 'procstat.test.exe'])
    for (const exe of exes) {
      // output to a file, and the exit waited for, not the end of its pipes: a Wine
      // process may leave Wine's own daemons holding them
      const log = path.join(W.LOG_DIR, `go-${exe}.log`)
      fs.mkdirSync(W.LOG_DIR, { recursive: true })
      const fd = fs.openSync(log, 'w')
      const child = spawn('wine', [path.join(dir, exe), '-test.v', '-test.timeout', '60s'],
        { stdio: ['ignore', fd, fd], env: { ...process.env, WINEDEBUG: '-all' } })
      fs.closeSync(fd)
      const code = await W.within(new Promise((resolve) => child.once('exit', resolve)), 90000)
      if (code === 'timeout') child.kill('SIGKILL')
      const out = fs.readFileSync(log, 'utf8')
      assert.equal(code, 0, `${exe}:\n${W.tail(out, 40)}`)
      assert.match(out, /^PASS\r?$/m, exe)
      if (exe === 'listen.test.exe') {
        for (const name of ['TestAWorkerPipeCarriesBytesBothWays', 'TestWorkersAttachingTogetherAreAllAccepted', 'TestCloseEndsAWaitingAcceptAndKeepsAttachedWorkers', 'TestThePipeIsOpenToItsUserOnly', 'TestAPortAnotherProgramHoldsIsPortInUse', 'TestAClientResetIsConnReset']) {
          assert.match(out, new RegExp(`^--- PASS: ${name} `, 'm'), `${name} did not pass:\n${out}`)
        }
      }
    }
  })

  for (const router of ['native']) core(router)

  // `auto` (no --backend) on Windows: an app with no urls leaves its port to its own
  // listen(), which HTTP.SYS cannot wait for, so the run falls back to the hub
  // (backend-choice.js): with HTTPSYS_ROUTER=native, the Go router
  test('supervisor (native router): `auto` with an app that has no urls falls back to the hub: the native router serves the port its listen() takes', async () => {
    if (!routerExe()) W.skip('no Windows router: run.sh builds it with Go (HTTPSYS_WINE_ROUTER)')
    fs.mkdirSync(MARKS, { recursive: true })
    const port = await W.freePort()
    const proc = start('sup-auto-native', ['bin/httpsys', 'start', APP, '-n', 'bare'], { env: { ...ENV, ...nativeEnv(), PORT: String(port) } })
    proc.exited.then((code) => { proc.exitCode = code })
    proc.stopWith = async () => {
      if (proc.exitCode === null) await httpsys('sup-auto-native-cleanup', ['stop', 'all'])
      if ((await W.within(proc.exited, STOP_MS)) !== 'timeout') return true
      proc.child.kill('SIGKILL')
      await proc.exited
      return false
    }
    const backend = await waitRecord(proc, (r) => r.event === 'backend', 'backend')
    assert.equal(backend.backend, 'hub')
    assert.match(backend.msg, /no urls/)
    const routerPid = await routerOf(proc)
    const ready = await waitRecord(proc, (r) => r.event === 'ready', 'ready')
    assert.deepEqual(json(await W.request(port, { path: '/bare' })), { pid: ready.pid, url: '/bare', child: null })
    const { code, output } = await httpsys('stop-auto-native', ['stop', 'all'])
    assert.equal(code, 0, output)
    assert.equal(await exitOf(proc), 0)
    assertGone([ready.pid, routerPid], 'httpsys-router.exe')
  })

  /**
   * The tests that run on both routers; on the native one their names say so
   * (`run.sh 'native router'` runs those only).
   */
  function core (router) {
    const native = router === 'native'
    const label = native ? 'supervisor (native router)' : 'supervisor'
    const tag = native ? '-native' : ''
    const sup = {}
    const logDir = native ? path.join(W.LOG_DIR, 'app-logs-native') : APP_LOGS

    test(`${label}: \`httpsys start --backend hub\` in node.exe serves the app; spawn and ready are logged`, async () => {
      if (native && !routerExe()) W.skip('no Windows router: run.sh builds it with Go (HTTPSYS_WINE_ROUTER)')
      Object.assign(sup, await startSupervisor(`sup-start${tag}`, APP, { args: ['--log-dir', logDir], router }))
      const { proc, port } = sup
      const ready = await waitRecord(proc, (r) => r.event === 'ready', 'ready')
      const backend = records(proc).find((r) => r.event === 'backend')
      assert.deepEqual([backend.backend, backend.reason], ['hub', '--backend hub'])
      // the hub in the supervisor, or the Go router as a process of its own
      if (native) sup.routerPid = await routerOf(proc)
      else assert.equal(records(proc).find((r) => r.event === 'router'), undefined)
      const spawn = records(proc).find((r) => r.event === 'spawn')
      assert.equal(spawn.app, 'supervised-app')
      assert.equal(spawn.pid, ready.pid, 'the ready pid is the spawned one')
      const res = await W.curl(['-i', `http://localhost:${port}/from-curl`])
      assert.equal(res.code, 0, res.stderr)
      assert.match(res.stdout, /^HTTP\/1\.1 200 OK/)
      assert.equal(JSON.parse(res.stdout.slice(res.stdout.indexOf('\r\n\r\n') + 4)).pid, ready.pid)
      assert.deepEqual(json(await W.request(port, { path: '/from-node' })), { pid: ready.pid, url: '/from-node', child: null })
      sup.pids = [ready.pid]
      sup.pid = ready.pid
    }, { keep: true })

    test(`${label}: a worker killed from another node.exe is restarted; requests sent meanwhile are answered`, async () => {
      if (sup.proc === undefined) W.skip('the supervisor did not start')
      const { proc, port } = sup
      const old = sup.pid
      const kill = await W.runNode(`kill-worker${tag}`, [`${FIX}/kill-pid.js`, String(old)])
      assert.match(kill.output, new RegExp(`^KILLED ${old}$`, 'm'), kill.output)
      // no worker now: these wait in the router's queue (the hub's, or the Go router's) for the next one
      const during = await Promise.all(Array.from({ length: 8 }, (_, i) => W.request(port, { path: `/during/${i}`, timeout: 15000 })))
      const exit = await waitRecord(proc, (r) => r.event === 'exit' && r.pid === old, 'exit')
      // TerminateProcess: exit code 1 and no signal (libuv's process.kill on Windows)
      assert.deepEqual([exit.code, exit.signal], [1, null])
      const ready = await waitRecord(proc, (r) => r.event === 'ready' && r.pid !== old, 'ready (restarted)')
      const backoff = records(proc).find((r) => r.event === 'backoff')
      assert.deepEqual([backoff.pid, backoff.code, backoff.signal], [old, 1, null])
      assert.deepEqual(during.map((r) => json(r).pid), during.map(() => ready.pid), 'every request is answered by the new worker')
      assert.equal(json(await W.request(port, { path: '/after' })).pid, ready.pid)
      sup.pids.push(ready.pid)
      sup.pid = ready.pid
    }, { keep: true })

    test(`${label}: \`httpsys ls --json\` from a second node.exe reaches it over a named pipe`, async () => {
      if (sup.proc === undefined) W.skip('the supervisor did not start')
      const states = fs.readdirSync(ENV.HTTPSYS_RUNTIME_DIR).filter((f) => /^[0-9a-f]{12}\.json$/.test(f))
      assert.equal(states.length, 1, `state files: ${states}`)
      const state = JSON.parse(fs.readFileSync(path.join(ENV.HTTPSYS_RUNTIME_DIR, states[0]), 'utf8'))
      assert.match(state.endpoint, /^\\\\\.\\pipe\\httpsys-/)
      const { code, output } = await httpsys(`ls-json${tag}`, ['ls', '--json'])
      assert.equal(code, 0, output)
      const list = JSON.parse(output.slice(output.indexOf('[')))
      assert.equal(list.length, 1, output)
      const [s] = list
      assert.equal(s.pid, state.pid)
      assert.equal(s.backend, 'hub')
      assert.match(s.script, /^[A-Z]:\\.*\\test\\windows\\fixtures\\supervised-app\.js$/)
      assert.equal(s.apps.length, 1)
      const [app] = s.apps
      assert.deepEqual([app.name, app.state, app.urls], ['supervised-app', 'ready', [`http://+:${sup.port}/`]])
      assert.equal(app.instances.length, 1)
      const [inst] = app.instances
      assert.deepEqual([inst.pid, inst.state, inst.restarts], [sup.pid, 'ready', 1])
      assert.ok(inst.served >= 9, `served ${inst.served}`)
      // Windows has no /proc: the memory comes from the preload over IPC
      assert.ok(inst.memory > 1e6, `memory ${inst.memory}`)
      sup.supervisorPid = s.pid
      if (native) {
        // the router's own row: its pid, and its memory from the router itself (the
        // working set, as node reports a worker's; no ps to ask on Windows)
        assert.equal(s.router.pid, sup.routerPid)
        assert.ok(s.router.memory > 1e6, `router memory ${s.router.memory}`)
      }
      const table = await httpsys(`ls${tag}`, ['ls'])
      assert.equal(table.code, 0, table.output)
      assert.match(table.output, new RegExp(`^supervised-app +0 +${sup.pid} +ready `, 'm'))
      // spawned with no shell: the worker's parent is the supervisor itself, not a cmd.exe
      assert.equal(W.windowsProcesses().get(sup.pid), s.pid)
    }, { keep: true })

    if (!native) {
      test('supervisor: `httpsys logs <app>` from a second node.exe prints its recent records', async () => {
        const { code, output } = await httpsys('logs', ['logs', 'supervised-app', '--lines', '200'])
        assert.equal(code, 0, output)
        const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
        assert.ok(lines.some((r) => r.stream === 'stdout' && r.msg === `LISTENING ${sup.pid}`), output)
        assert.ok(lines.some((r) => r.event === 'backoff' && r.app === 'supervised-app'), output)
        assert.ok(lines.every((r) => r.app === 'supervised-app'), output)
      }, { keep: true })

      test('supervisor: a second `httpsys start` of the same app finds the first one\'s pipe and refuses', async () => {
        const again = await W.runNode('sup-again', ['bin/httpsys', 'start', APP, '-u', `http://+:${sup.port}/`, '--backend', 'hub'], { env: { ...ENV, ...routerEnv('hub') } })
        assert.equal(again.code, 1, again.output)
        assert.match(again.output, new RegExp(`already running .*supervised-app\\.js.* \\(supervisor pid ${sup.supervisorPid}\\).*\\(ERR_HTTPSYS_ALREADY_RUNNING\\)`))
        assert.doesNotMatch(again.output, /"event":"spawn"/)
        assert.equal(json(await W.request(sup.port, { path: '/still' })).pid, sup.pid)
      }, { keep: true })
    }

    test(`${label}: \`httpsys stop all\` from a second node.exe runs the app's SIGTERM listener (IPC) and leaves no process`, async () => {
      if (sup.proc === undefined) W.skip('the supervisor did not start')
      const { proc } = sup
      const { code, output } = await httpsys(`stop-all${tag}`, ['stop', 'all'])
      assert.equal(code, 0, output)
      assert.match(output, new RegExp(`^stopped the supervisor of .*supervised-app\\.js \\(pid ${sup.supervisorPid}\\)$`, 'm'))
      assert.equal(await exitOf(proc), 0)
      assert.ok(marked(sup.pid), 'the app\'s SIGTERM listener did not run')
      const all = records(proc)
      const steps = all.filter((r) => r.pid === sup.pid && /^stop:|^exit$/.test(r.event)).map((r) => r.event)
      assert.deepEqual(steps, ['stop:drain', 'stop:shutdown', 'exit', 'stop:done'])
      assert.equal(all.find((r) => r.event === 'stop:shutdown').via, 'ipc')
      assert.deepEqual(all.find((r) => r.event === 'exit' && r.pid === sup.pid).code, 0)
      assert.deepEqual(all.find((r) => r.event === 'stop:done').survivors, [])
      assert.equal(all.at(-1).event, 'stopped')
      assertGone([sup.supervisorPid, ...sup.pids], 'supervised-app.js')
      // the router went with it: closed by the supervisor, no orphan
      if (native) assertGone([sup.routerPid], 'httpsys-router.exe')
      assert.deepEqual(fs.readdirSync(ENV.HTTPSYS_RUNTIME_DIR).filter((f) => /^[0-9a-f]{12}\.json$/.test(f)), [], 'the state file is left')
      // --log-dir: the app's own file has its lifecycle and its output, to the last record
      const file = fs.readFileSync(path.join(logDir, 'supervised-app.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
      const events = file.map((r) => r.event || r.stream)
      for (const e of ['spawn', 'ready', 'stdout', 'exit', 'backoff', 'stop:shutdown', 'stop:done']) assert.ok(events.includes(e), `${e} is not in the app's log file`)
      assert.equal(file.at(-1).event, 'stop:done')
    })
  }

  test('supervisor: an app that ignores the shutdown is killed after kill_timeout, with its child process', async () => {
    const tag = `sleeper-tag-${process.pid}-${Date.now()}`
    const { proc, port } = await startSupervisor('sup-hang', APP, {
      args: ['-n', 'hang', '--kill-timeout', '2s'],
      env: { HTTPSYS_WINE_MODE: 'hang', HTTPSYS_WINE_TAG: tag }
    })
    const ready = await waitRecord(proc, (r) => r.event === 'ready', 'ready')
    const line = await waitRecord(proc, (r) => r.stream === 'stdout' && /^CHILD \d+$/.test(r.msg), 'CHILD line')
    const child = Number(line.msg.split(' ')[1])
    assert.equal(json(await W.request(port, { path: '/' })).child, child)
    assert.ok(W.windowsProcesses().has(child), 'the app\'s child is not running')
    assert.equal(W.processesMatching(tag).length, 1)
    const { code, output } = await httpsys('stop-hang', ['stop', 'all'])
    assert.equal(code, 0, output)
    assert.equal(await exitOf(proc), 0)
    assert.ok(marked(ready.pid), 'the app\'s SIGTERM listener did not run')
    const all = records(proc).filter((r) => r.pid === ready.pid)
    const steps = all.filter((r) => /^stop:|^exit$/.test(r.event)).map((r) => r.event)
    assert.deepEqual(steps, ['stop:drain', 'stop:shutdown', 'stop:kill', 'exit', 'stop:done'])
    const kill = all.find((r) => r.event === 'stop:kill')
    assert.ok(kill.ms >= 1900 && kill.ms < 5000, `killed after ${kill.ms} ms (kill_timeout 2 s)`)
    assertGone([ready.pid, child], tag)
  })

  test('supervisor: Ctrl+C stops through the IPC shutdown; a second Ctrl+C kills the tree at once (exit 130)', async () => {
    const tag = `sleeper-tag-${process.pid}-${Date.now()}`
    // a kill_timeout the test never reaches: only the second Ctrl+C can end it in time
    const { proc } = await startSupervisor('sup-ctrl-c', APP, {
      args: ['-n', 'ctrl-c', '--kill-timeout', '60s'],
      env: { HTTPSYS_WINE_MODE: 'hang', HTTPSYS_WINE_TAG: tag }
    })
    const ready = await waitRecord(proc, (r) => r.event === 'ready', 'ready')
    const line = await waitRecord(proc, (r) => r.stream === 'stdout' && /^CHILD \d+$/.test(r.msg), 'CHILD line')
    const child = Number(line.msg.split(' ')[1])
    // Wine delivers a Linux SIGINT to node.exe as the console's CTRL_C_EVENT
    proc.child.kill('SIGINT')
    const signal = await waitRecord(proc, (r) => r.event === 'signal', 'signal')
    assert.equal(signal.signal, 'SIGINT')
    const shutdown = await waitRecord(proc, (r) => r.event === 'stop:shutdown', 'stop:shutdown')
    assert.deepEqual([shutdown.pid, shutdown.via], [ready.pid, 'ipc'])
    await W.eventually(async () => assert.ok(marked(ready.pid), 'the app\'s SIGTERM listener did not run'), 10000)
    const t0 = Date.now()
    proc.child.kill('SIGINT')
    assert.equal(await exitOf(proc), 130)
    assert.ok(Date.now() - t0 < 10000, `the forced stop took ${Date.now() - t0} ms`)
    const all = records(proc)
    assert.ok(all.some((r) => r.event === 'force'), 'no force record')
    // TerminateProcess (taskkill): exit code 1, well before the 60 s kill_timeout
    assert.equal(all.find((r) => r.event === 'exit' && r.pid === ready.pid).code, 1)
    assert.ok(all.find((r) => r.event === 'stop:done' && r.pid === ready.pid).ms < 10000)
    assertGone([ready.pid, child], tag)
  })

  for (const router of ['native']) {
    const native = router === 'native'
    const label = native ? 'supervisor (native router)' : 'supervisor'
    const tag = native ? '-native' : ''
    const took = native ? 'its workers and its router' : 'its workers'
    test(`${label}: killed outright, it takes ${took} along; a new start replaces its stale state`, async () => {
      if (native && !routerExe()) W.skip('no Windows router: run.sh builds it with Go (HTTPSYS_WINE_ROUTER)')
      const first = await startSupervisor(`sup-crash${tag}`, APP, { args: ['-n', 'crash'], router })
      const ready = await waitRecord(first.proc, (r) => r.event === 'ready', 'ready')
      const routerPid = native ? await routerOf(first.proc) : null
      const [state] = fs.readdirSync(ENV.HTTPSYS_RUNTIME_DIR).filter((f) => /^[0-9a-f]{12}\.json$/.test(f))
        .map((f) => JSON.parse(fs.readFileSync(path.join(ENV.HTTPSYS_RUNTIME_DIR, f), 'utf8')))
      const kill = await W.runNode(`kill-supervisor${tag}`, [`${FIX}/kill-pid.js`, String(state.pid)])
      assert.match(kill.output, /^KILLED /m, kill.output)
      // (the Linux exit status of a Wine process terminated from outside is 0 or 1)
      await exitOf(first.proc)
      // libuv's job object (kill on close) and the preload's IPC disconnect handler; the
      // router's stdin ends with the supervisor, and it exits at once
      await W.eventually(async () => assertGone([state.pid, ready.pid], 'supervised-app.js'), 10000)
      if (native) await W.eventually(async () => assertGone([routerPid], 'httpsys-router.exe'), 10000)
      // the port and the pipe name are free again: a new supervisor takes the same port
      const second = await startSupervisor(`sup-crash-again${tag}`, APP, { args: ['-n', 'crash'], port: first.port, router })
      const again = await waitRecord(second.proc, (r) => r.event === 'ready', 'ready')
      const secondRouter = native ? await routerOf(second.proc) : null
      assert.equal(json(await W.request(first.port, { path: '/' })).pid, again.pid)
      const ls = await httpsys(`ls-after-crash${tag}`, ['ls', '--json'])
      assert.equal(ls.code, 0, ls.output)
      const list = JSON.parse(ls.output.slice(ls.output.indexOf('[')))
      assert.deepEqual(list.map((s) => s.apps[0].instances[0].pid), [again.pid])
      const stop = await httpsys(`stop-crash${tag}`, ['stop', 'all'])
      assert.equal(stop.code, 0, stop.output)
      assert.equal(await exitOf(second.proc), 0)
      assert.deepEqual(fs.readdirSync(ENV.HTTPSYS_RUNTIME_DIR).filter((f) => /^[0-9a-f]{12}\.json$/.test(f)), [])
      if (native) assertGone([secondRouter], 'httpsys-router.exe')
    })
  }

  // What a real Windows host shows the same way (test/windows/README.md, the tree kill): the job
  // object (native/src/job.cc) holds the supervisor and everything it starts, detached
  // or not, and the kernel ends them all when its last handle, the supervisor's, closes.
  test('supervisor: killed outright, it takes along a process its app detached on purpose (the job object)', async () => {
    const { proc, port } = await startSupervisor('sup-job', `${FIX}/escape-app.js`, { args: ['-n', 'jobbed'] })
    await waitRecord(proc, (r) => r.event === 'ready', 'ready')
    const noJob = records(proc).find((r) => r.event === 'job' && r.level >= 40)
    assert.ok(!noJob, `no job object: ${JSON.stringify(noJob)}`)
    const got = json(await W.request(port, { path: '/' }))
    assert.ok(W.windowsProcesses().has(got.escaped), 'the detached process did not start')
    const [state] = fs.readdirSync(ENV.HTTPSYS_RUNTIME_DIR).filter((f) => /^[0-9a-f]{12}\.json$/.test(f))
      .map((f) => JSON.parse(fs.readFileSync(path.join(ENV.HTTPSYS_RUNTIME_DIR, f), 'utf8')))
    const kill = await W.runNode('kill-job-supervisor', [`${FIX}/kill-pid.js`, String(state.pid)])
    assert.match(kill.output, /^KILLED /m, kill.output)
    await exitOf(proc)
    await W.eventually(async () => assertGone([state.pid, got.pid, got.escaped], 'escaper'), 10000)
  })

  test('supervisor: a .cmd shim (node_modules/.bin) runs its JavaScript entry with no shell', async () => {
    const project = path.join(W.LOG_DIR, 'shim-project')
    const entry = writeShimProject(project)
    const { proc, port } = await startSupervisor('sup-shim', path.join(project, 'node_modules', '.bin', 'wine-shim-app.cmd'))
    const ready = await waitRecord(proc, (r) => r.event === 'ready', 'ready')
    const got = json(await W.request(port, { path: '/shim' }))
    assert.equal(got.pid, ready.pid)
    // the file node ran: the package's bin entry, not the batch file
    assert.match(got.filename, /^[A-Z]:\\.*\\node_modules\\wine-shim-app\\bin\\app\.js$/)
    assert.equal(got.filename.slice(2).replace(/\\/g, '/'), entry)
    const { code, output } = await httpsys('stop-shim', ['stop', 'all'])
    assert.equal(code, 0, output)
    assert.equal(await exitOf(proc), 0)
    assertGone([ready.pid], 'wine-shim-app')
  })
}

/**
 * A project with a package whose bin npm linked as cmd-shim does on Windows.
 * @returns {string} the bin entry's path
 */
function writeShimProject (dir) {
  const pkg = path.join(dir, 'node_modules', 'wine-shim-app')
  fs.mkdirSync(path.join(pkg, 'bin'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true })
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'wine-shim-app', bin: { 'wine-shim-app': 'bin/app.js' } }))
  const entry = path.join(pkg, 'bin', 'app.js')
  fs.writeFileSync(entry, [
    '#!/usr/bin/env node',
    '\'use strict\'',
    'const http = require(\'node:http\')',
    'http.createServer((req, res) => res.end(JSON.stringify({ pid: process.pid, filename: __filename })))',
    '  .listen(Number(process.env.PORT))',
    ''
  ].join('\n'))
  // what cmd-shim writes for a bin (npm 7+), CRLF line ends included
  const cmd = [
    '@ECHO off',
    'GOTO start',
    ':find_dp0',
    'SET dp0=%~dp0',
    'EXIT /b',
    ':start',
    'SETLOCAL',
    'CALL :find_dp0',
    '',
    'IF EXIST "%dp0%\\node.exe" (',
    '  SET "_prog=%dp0%\\node.exe"',
    ') ELSE (',
    '  SET "_prog=node"',
    '  SET PATHEXT=%PATHEXT:;.JS;=;%',
    ')',
    '',
    'endLocal & goto #_undefined_# 2>NUL || title %COMSPEC% & "%_prog%"  "%dp0%\\..\\wine-shim-app\\bin\\app.js" %*',
    ''
  ].join('\r\n')
  fs.writeFileSync(path.join(dir, 'node_modules', '.bin', 'wine-shim-app.cmd'), cmd)
  return entry
}

module.exports = { register }
