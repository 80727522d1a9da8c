'use strict'

// One instance of an app (`api#1`). It outlives many node processes (worker-process.js):
// it starts one, starts it again after a crash (restart-policy.js: backoff, crash-loop
// detection), replaces it without a gap on reload (the new one must be ready before the
// old one is drained and stopped), and stops it. `pid` is the current process.
//
// States: starting -> ready; waiting (backoff timer); stopping -> stopped (asked to);
// exited (ended by itself and the restart policy says leave it); errored (crash loop).

const { EventEmitter } = require('node:events')
const path = require('node:path')
const { ENV } = require('../worker-interface')
const { WorkerProcess } = require('./worker-process')
const { shouldRestart, backoffDelay, isUnstable, CrashLoop } = require('./restart-policy')
const { startFailureCause } = require('./start-failure')

// attempts an app that has never been ready gets before it is errored with its cause
const FIRST_START_ATTEMPTS = 3

const REGISTER = path.join(__dirname, '..', 'register.js')

class Instance extends EventEmitter {
  /**
   * @param {object} app a validated app (src/config)
   * @param {number} inst 0-based instance number
   * @param {object} options
   * @param {object} options.routerEnv how a worker finds its queue (the router's workerEnv(app):
   *   HTTPSYS_HUB, HTTPSYS_QUEUE, ...; an undefined value removes the variable)
   * @param {boolean} [options.tracksWorkers=true] the router reports attach/detach (the hub); else
   *   only the preload's messages tell (HTTP.SYS)
   * @param {import('pino').Logger} options.logger
   * @param {object} [options.env] extra environment for every process (e.g. HTTPSYS_LOG_LEVEL)
   * @param {string} [options.preload] the --require module (default: src/register.js; tests swap it)
   * @param {(pid: number) => number} [options.inFlight] the hub's in-flight count of a pid (drain)
   * @param {boolean} [options.watching] a crash loop waits for a file change instead of giving up
   * @param {(instance: Instance) => boolean} [options.staysUp] whether the supervisor stays up once
   *   this instance is errored (what the errored record tells the user to do)
   */
  constructor (app, inst, { routerEnv = {}, tracksWorkers = true, logger, env = {}, preload = REGISTER, inFlight, watching = false, staysUp = () => true }) {
    super()
    this.app = app
    this.inst = inst
    this.routerEnv = routerEnv
    this.tracksWorkers = tracksWorkers
    this.logger = logger
    this.extraEnv = env
    this.preload = preload
    this.inFlight = inFlight
    this.watching = watching
    this.staysUp = staysUp
    this.proc = null
    this.candidate = null // the replacement during a reload
    this.leaving = null // the process a reload replaced, while it stops
    this.state = 'idle'
    this.restarts = 0
    this.attempt = 0 // backoff exponent: automatic restarts since the last stable run
    this.spawns = 0
    // restart_window 0: no window, every unstable exit since the last stable run counts
    this.crashLoop = new CrashLoop({ max: app.max_restarts, window: app.restart_window || Infinity })
    this.everReady = false
    this.startFailures = 0
    this.restartTimer = null
    this.stableTimer = null
    this.lastExit = null
  }

  /**
   * What an errored instance's record tells the user to do: wait (watch mode), restart
   * it by command while the supervisor stays up (other apps run, or it runs in the
   * background or as a service: docs/supervisor.md 2.2), or start httpsys again when it
   * runs in the foreground with nothing else (it exits 1 then).
   */
  fixAdvice () {
    if (this.watching) return 'waiting for a file change'
    if (this.staysUp(this)) return `fix it, then \`httpsys restart ${this.app.name}\``
    return 'nothing else runs here, so httpsys exits (code 1): fix it, then start httpsys again'
  }

  /**
   * A config edit: the next process starts with these settings (the running one keeps
   * its own until a reload or restart replaces it), and the crash-loop limits are the
   * new ones, counted afresh.
   */
  setApp (app, { routerEnv = this.routerEnv, watching = this.watching } = {}) {
    this.app = app
    this.routerEnv = routerEnv
    this.watching = watching
    this.crashLoop = new CrashLoop({ max: app.max_restarts, window: app.restart_window || Infinity })
  }

  get pid () {
    return this.proc && !this.proc.exitInfo ? this.proc.pid : undefined
  }

  /** Every live process of this instance (two during a reload). */
  processes () {
    return [this.proc, this.candidate].filter((p) => p && !p.exitInfo)
  }

  findProcess (pid) {
    const found = this.processes().find((p) => p.pid === pid)
    if (found !== undefined) return found
    // a reload's old process, draining: the router's word of its detach is for it
    const leaving = this.leaving
    return leaving !== null && leaving.pid === pid && !leaving.exitInfo ? leaving : undefined
  }

  start () {
    if (this.pid !== undefined) return
    this.cancelTimers()
    this.setState('starting')
    this.proc = this.spawnProcess()
  }

  /** The router saw pid attach to this app's queue (ready, unless the app says so itself). */
  markReady (pid) {
    this.findProcess(pid)?.onAttach()
  }

  onDetach (pid) {
    this.findProcess(pid)?.onDetach()
  }

  /**
   * Graceful stop of every process of this instance. Harmless to call again.
   * @param {number} [killTimeout=app.kill_timeout]
   */
  async stop (killTimeout = this.app.kill_timeout) {
    this.cancelTimers()
    const procs = this.processes()
    if (procs.length === 0) {
      this.setState('stopped')
      return
    }
    this.setState('stopping')
    await Promise.all(procs.map((p) => p.stop(killTimeout)))
    this.setState('stopped')
  }

  /** Force: kill every process tree of this instance now. */
  async kill () {
    this.cancelTimers()
    const procs = this.processes()
    if (procs.length > 0) this.setState('stopping')
    await Promise.all(procs.map((p) => p.kill()))
    this.setState('stopped')
  }

  /** Hard restart: stop, then start with fresh crash-loop and backoff counters. */
  async restart () {
    await this.stop()
    this.resetCounters()
    this.start()
  }

  /**
   * Replace the process without a gap: start the new one, wait until it is ready, then
   * drain and stop the old one. When the new one fails (exits, or is not ready within
   * ready_timeout), it is stopped and the old one keeps serving.
   * @returns {Promise<{ ok: boolean, pid?: number, reason?: string, fresh?: boolean }>} fresh:
   *   nothing was serving, so the new process was started without waiting for an old one
   */
  async reload () {
    if (this.state === 'stopping' || this.state === 'stopped') return { ok: false, reason: 'stopped' }
    const old = this.proc && !this.proc.exitInfo ? this.proc : null
    if (old === null || old.state !== 'ready' || this.candidate !== null) {
      // nothing is serving (crashed, backing off, errored, still starting): a fresh start
      this.cancelTimers()
      this.resetCounters()
      if (old !== null) {
        old.retired = true // stopped on purpose: its exit is not a crash to restart
        await old.stop()
      }
      if (this.state === 'stopping' || this.state === 'stopped') return { ok: false, reason: 'stopped' }
      this.setState('starting')
      this.proc = this.spawnProcess()
      const result = await waitReady(this.proc)
      return { ...result, pid: this.proc.pid, fresh: true }
    }
    const next = this.spawnProcess()
    this.candidate = next
    const result = await waitReady(next)
    if (this.candidate !== next || this.state === 'stopping' || this.state === 'stopped') {
      await next.stop() // the instance was stopped meanwhile: stop() took care of both
      return { ok: false, reason: 'stopped' }
    }
    this.candidate = null
    if (!result.ok) {
      this.logger.error({ event: 'reload:failed', app: this.app.name, inst: this.inst, pid: next.pid, reason: result.reason, keep: old.pid },
        `the new process ${result.reason}; keeping pid ${old.pid}`)
      await next.stop()
      // the old one died meanwhile: what would have happened without the reload
      if (old.exitInfo && this.proc === old) this.afterCrash(old)
      return result
    }
    this.proc = next
    this.resetCounters()
    this.onProcessReady(next)
    this.leaving = old
    try {
      await old.stop()
    } finally {
      if (this.leaving === old) this.leaving = null
    }
    return { ok: true, pid: next.pid }
  }

  resetCounters () {
    this.attempt = 0
    this.startFailures = 0
    this.crashLoop.reset()
  }

  cancelTimers () {
    clearTimeout(this.restartTimer)
    clearTimeout(this.stableTimer)
    this.restartTimer = null
    this.stableTimer = null
  }

  setState (state) {
    if (this.state === state) return
    this.state = state
    this.emit('state', state)
  }

  spawnProcess () {
    const { app, inst } = this
    const proc = new WorkerProcess(app, inst, {
      argv: [...app.node_args, '--require', this.preload, app.script, ...app.args],
      env: workerEnv(app, inst, this.routerEnv, this.extraEnv),
      logger: this.logger,
      inFlight: this.inFlight,
      tracksWorkers: this.tracksWorkers
    })
    if (this.spawns++ > 0) this.restarts++
    proc.on('ready', () => { if (proc === this.proc) this.onProcessReady(proc) })
    proc.on('ready-timeout', () => {
      if (proc !== this.proc) return // a reload candidate: reload() decides
      proc.failed = 'ready-timeout'
      proc.stop()
    })
    proc.on('exit', (info) => this.onProcessExit(proc, info))
    if (proc.spawn()) this.emit('spawn', proc.pid)
    return proc
  }

  onProcessReady (proc) {
    this.everReady = true
    this.startFailures = 0
    this.setState('ready')
    clearTimeout(this.stableTimer)
    // the backoff starts over only after a run that stayed up (docs/supervisor.md 2.1)
    this.stableTimer = setTimeout(() => {
      if (proc === this.proc && proc.state === 'ready') this.attempt = 0
    }, this.app.backoff.reset_after)
    this.stableTimer.unref()
    this.emit('ready', proc.pid)
  }

  onProcessExit (proc, { pid, code, signal }) {
    this.emit('exit', { pid, code, signal })
    // a reload's old process, a failed candidate, or one replaced on purpose
    if (proc !== this.proc || proc.retired) return
    clearTimeout(this.stableTimer)
    this.lastExit = { code, signal, at: proc.exitInfo.at }
    if (this.state === 'stopping' || this.state === 'stopped') {
      this.setState('stopped')
      return
    }
    // a reload is replacing it already: reload() decides once its new process is ready or not
    if (this.candidate !== null) return
    this.afterCrash(proc)
  }

  /** An exit nobody asked for: restart after the backoff, or give up (exited, errored). */
  afterCrash (proc) {
    const { app, inst } = this
    const { pid } = proc
    const { code, signal } = proc.exitInfo
    // a process stopped for not being ready failed, whatever code it exited with
    if (app.restart === 'never' || (!proc.failed && !shouldRestart(app, { code, signal }))) {
      this.logger.info({ event: 'done', app: app.name, inst, pid, code, signal, restart: app.restart },
        `not restarted (restart: ${app.restart}${app.stop_exit_codes.includes(code) ? `, ${code} is in stop_exit_codes` : ''})`)
      this.setState('exited')
      return
    }
    const unstable = isUnstable({ readyAt: proc.readyAt, exitAt: proc.exitInfo.at }, app.min_uptime)
    // a run that stayed up ends a crash loop: the unstable exits before it were another story
    if (!unstable) this.crashLoop.reset()
    // An app that has never been ready is a first-run mistake far more often than a flake
    // (a module not installed, a typo, a port taken): after a few attempts, one line with
    // the cause, instead of the same stack trace max_restarts times over minutes.
    // (max_restarts 0, "never give up", keeps trying: an app waiting for its database)
    const firstStartLimit = app.max_restarts === 0 ? Infinity : Math.min(FIRST_START_ATTEMPTS, app.max_restarts)
    if (!this.everReady && !proc.readyAt && ++this.startFailures >= firstStartLimit) {
      const cause = failureCause(proc, app)
      const fix = this.fixAdvice()
      this.logger.error({ event: 'errored', app: app.name, inst, pid, code, signal, firstStart: true, attempts: this.startFailures, cause },
        `did not start (${this.startFailures} attempts): ${cause}; not restarting, ${fix}`)
      this.setState('errored')
      this.emit('errored')
      return
    }
    if (unstable && this.crashLoop.record(proc.exitInfo.at)) {
      const fix = this.fixAdvice()
      this.logger.error({
        event: 'errored', app: app.name, inst, pid, code, signal, unstableExits: this.crashLoop.count, windowMs: app.restart_window
      }, `crash loop: ${this.crashLoop.count} unstable exits ${app.restart_window ? `within ${app.restart_window} ms` : 'in a row'} (exit before ready or within min_uptime ${app.min_uptime} ms of it); not restarting, ${fix}`)
      this.setState('errored')
      this.emit('errored')
      return
    }
    const delay = backoffDelay(app.backoff, this.attempt++)
    // stopped for not being ready: that is the cause, not the exit code its stop produced
    const reason = proc.timeout ? proc.timeout.cause : undefined
    const how = reason || (signal ? `killed by ${signal}` : `exited with code ${code}`)
    this.logger.info({ event: 'backoff', app: app.name, inst, pid, code, signal, delay, attempt: this.attempt, unstable, reason },
      `${how}; restarting in ${delay} ms`)
    this.setState('waiting')
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null
      this.setState('starting')
      this.proc = this.spawnProcess()
    }, delay)
  }

  /** What `httpsys ls` shows of this instance. */
  info () {
    const p = this.proc && !this.proc.exitInfo ? this.proc : null
    return {
      app: this.app.name,
      inst: this.inst,
      pid: p ? p.pid : null,
      state: this.state,
      uptimeMs: p && p.readyAt ? Date.now() - p.readyAt : 0,
      restarts: this.restarts,
      lastExit: this.lastExit
    }
  }
}

/** Resolves once proc is ready, or why it will not be. */
function waitReady (proc) {
  if (proc.state === 'ready') return Promise.resolve({ ok: true })
  return new Promise((resolve) => {
    const done = (result) => {
      proc.off('ready', onReady)
      proc.off('exit', onExit)
      proc.off('ready-timeout', onTimeout)
      resolve(result)
    }
    const onReady = () => done({ ok: true })
    const onExit = ({ code, signal }) => done({ ok: false, reason: signal ? `was killed by ${signal} before it was ready` : `exited with code ${code} before it was ready` })
    const onTimeout = ({ cause }) => done({ ok: false, reason: cause })
    proc.on('ready', onReady)
    proc.on('exit', onExit)
    proc.on('ready-timeout', onTimeout)
    if (proc.exitInfo) onExit(proc.exitInfo)
  })
}

/**
 * Why a process that never got ready failed, in one line: httpsys's own timeout when it
 * stopped the process (with the app's last word on stderr, which often says why), else
 * what the app printed (start-failure.js).
 */
function failureCause (proc, app) {
  const { code, signal } = proc.exitInfo
  if (!proc.timeout) return startFailureCause(proc.stderrTail, { cwd: app.cwd, code, signal })
  const said = proc.stderrTail.some((l) => l.trim() !== '') ? startFailureCause(proc.stderrTail, { cwd: app.cwd, code, signal }) : null
  return said ? `${proc.timeout.cause} (its last error output: ${said})` : proc.timeout.cause
}

function workerEnv (app, inst, routerEnv, extra) {
  const env = { ...process.env }
  if (app.urls.length > 0) {
    const { parse } = require('../urlprefix')
    env.PORT = String(parse(app.urls[0]).port)
  }
  Object.assign(env, extra, app.env)
  if (app.type !== 'worker') {
    env[ENV.QUEUE] = app.name
    delete env[ENV.NO_HTTP]
  } else {
    // serves no HTTP: the preload only answers the supervisor's IPC (shutdown, drain, stats)
    delete env[ENV.QUEUE]
    env[ENV.NO_HTTP] = '1'
  }
  for (const [key, value] of Object.entries(routerEnv)) {
    if (value === undefined) delete env[key]
    else env[key] = value
  }
  // the preload reports readiness only to its parent, not to the app's own cluster primary
  env[ENV.SUPERVISOR_PID] = String(process.pid)
  env[ENV.APP] = app.name
  env[ENV.INSTANCE] = String(inst)
  env.NODE_APP_INSTANCE = String(inst)
  return env
}

module.exports = { Instance, workerEnv, waitReady, REGISTER }
