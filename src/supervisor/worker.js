'use strict'

// One instance of an app (`api#1`): spawns its node process, turns its output into
// records, reports ready/exit, starts it again after a crash (restart-policy.js decides
// when), and runs the stop ladder: IPC shutdown -> wait kill_timeout -> SIGKILL the
// process group. One Worker outlives many processes; `pid` is the current one.

const { spawn } = require('node:child_process')
const { EventEmitter } = require('node:events')
const path = require('node:path')
const { LineSplitter } = require('./line-splitter')
const { createLineSink } = require('./worker-output')
const { restartDelay } = require('./restart-policy')

const REGISTER = path.join(__dirname, '..', 'register.js')
const IS_WINDOWS = process.platform === 'win32'
// after 'exit', how long to wait for the pipes to close before reporting the exit anyway
// (a grandchild that inherited stdout can keep them open for ever)
const CLOSE_GRACE_MS = 250

class Worker extends EventEmitter {
  /**
   * @param {object} app a validated app (src/config)
   * @param {number} inst 0-based instance number
   * @param {object} options
   * @param {string} options.hubPath the hub's socket path (HTTPSYS_HUB)
   * @param {import('pino').Logger} options.logger
   * @param {object} [options.env] extra environment for every process (e.g. HTTPSYS_LOG_LEVEL)
   * @param {string} [options.preload] the --require module (default: src/register.js; tests swap it)
   */
  constructor (app, inst, { hubPath, logger, env = {}, preload = REGISTER }) {
    super()
    this.app = app
    this.inst = inst
    this.hubPath = hubPath
    this.logger = logger
    this.extraEnv = env
    this.preload = preload
    this.child = null
    this.pid = undefined
    this.state = 'idle' // starting | ready | waiting (restart timer) | stopping | stopped
    this.restarts = 0
    this.spawnedAt = 0
    this.restartTimer = null
    this.killTimer = null
    this.exited = null // resolves when the current process has been reported exited
  }

  start () {
    const { app, inst } = this
    const argv = [...app.node_args, '--require', this.preload, app.script, ...app.args]
    this.spawnedAt = Date.now()
    this.state = 'starting'
    let child
    try {
      child = spawn(process.execPath, argv, {
        cwd: app.cwd,
        env: workerEnv(app, inst, this.hubPath, this.extraEnv),
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        // POSIX: lead a process group so stop can kill the app's own children too, and so
        // the terminal's Ctrl+C reaches only the supervisor. Windows: detached would cost
        // libuv's kill-on-close job and pop up a console (research/supervisors.md 3.2, 3.3).
        detached: !IS_WINDOWS,
        windowsHide: true
      })
    } catch (err) {
      // thrown, not emitted: the options themselves are wrong, a retry would fail alike
      this.state = 'stopped'
      this.logger.error({ event: 'spawn-error', app: app.name, inst, err }, `cannot start: ${err.message}`)
      return
    }
    this.child = child
    this.pid = child.pid
    let resolveExited
    this.exited = new Promise((resolve) => { resolveExited = resolve })

    const splitters = []
    for (const stream of ['stdout', 'stderr']) {
      const splitter = new LineSplitter(createLineSink(this.logger, { app: app.name, inst, pid: child.pid, stream }))
      child[stream].on('data', (chunk) => splitter.push(chunk))
      child[stream].on('end', () => splitter.end())
      splitters.push(splitter)
    }

    let done = false
    const finish = (code, signal) => {
      if (done) return
      done = true
      for (const s of splitters) s.end()
      this.onExit(child, code, signal)
      resolveExited()
    }
    child.on('error', (err) => {
      // spawn failed (no pid) or an IPC send failed; only the first matters here
      if (child.pid === undefined) {
        this.logger.error({ event: 'spawn-error', app: app.name, inst, err }, `cannot start: ${err.message}`)
        finish(null, null)
      }
    })
    child.on('exit', (code, signal) => {
      const timer = setTimeout(() => finish(code, signal), CLOSE_GRACE_MS)
      child.once('close', () => {
        clearTimeout(timer)
        finish(code, signal)
      })
    })
    if (child.pid !== undefined) {
      this.logger.info({ event: 'spawn', app: app.name, inst, pid: child.pid }, `started pid ${child.pid}`)
      this.emit('spawn', child.pid)
    }
  }

  /** The hub saw this process attach to its queue. */
  markReady (pid) {
    if (pid !== this.pid || this.state !== 'starting') return
    this.state = 'ready'
    const ms = Date.now() - this.spawnedAt
    this.logger.info({ event: 'ready', app: this.app.name, inst: this.inst, pid, ms }, `ready in ${ms} ms`)
    this.emit('ready', pid)
  }

  /**
   * Graceful stop: ask over IPC, kill the process group after `killTimeout` ms.
   * Calling it again (or after kill()) is harmless.
   * @param {number} [killTimeout=this.app.kill_timeout]
   * @returns {Promise<void>} once the process is gone (at once when there is none)
   */
  stop (killTimeout = this.app.kill_timeout) {
    this.cancelRestart()
    if (this.state === 'stopped' || this.state === 'idle') {
      this.state = 'stopped'
      return Promise.resolve()
    }
    if (this.state === 'stopping') return this.exited
    this.state = 'stopping'
    const child = this.child
    const startedAt = Date.now()
    if (!sendShutdown(child, killTimeout) && !IS_WINDOWS) {
      // no IPC channel (the app closed it): the POSIX signal is the next best ask
      try { child.kill('SIGTERM') } catch {}
    }
    this.killTimer = setTimeout(() => {
      this.logger.warn({ event: 'kill', app: this.app.name, inst: this.inst, pid: child.pid, after: Date.now() - startedAt },
        `did not stop within ${killTimeout} ms; killing it`)
      killTree(child)
    }, killTimeout)
    return this.exited
  }

  /** Force: SIGKILL the process group now (second Ctrl+C). */
  kill () {
    this.cancelRestart()
    if (this.state === 'stopped' || this.state === 'idle') {
      this.state = 'stopped'
      return Promise.resolve()
    }
    this.state = 'stopping'
    killTree(this.child)
    return this.exited
  }

  cancelRestart () {
    if (this.restartTimer) {
      clearTimeout(this.restartTimer)
      this.restartTimer = null
      this.state = 'stopped'
    }
  }

  onExit (child, code, signal) {
    clearTimeout(this.killTimer)
    const { app, inst } = this
    const stopping = this.state === 'stopping'
    const ready = this.state === 'ready'
    const uptimeMs = Date.now() - this.spawnedAt
    // whatever the app left behind in its group (its own children) goes with it
    if (child.pid !== undefined) killTree(child)
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`
    const level = stopping || (code === 0 && !signal) ? 'info' : 'warn'
    this.logger[level]({ event: 'exit', app: app.name, inst, pid: child.pid, code, signal }, how)
    this.child = null
    this.emit('exit', { pid: child.pid, code, signal })
    if (stopping) {
      this.state = 'stopped'
      return
    }
    const delay = restartDelay({ app: app.name, inst, code, signal, uptimeMs, ready, restarts: this.restarts })
    if (delay === null) {
      this.state = 'stopped'
      return
    }
    this.state = 'waiting'
    this.logger.info({ event: 'restart', app: app.name, inst, delay }, `restarting in ${delay} ms`)
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null
      this.restarts++
      this.start()
    }, delay)
  }
}

function workerEnv (app, inst, hubPath, extra) {
  const env = { ...process.env }
  if (app.urls.length > 0) {
    const { parse } = require('../urlprefix')
    env.PORT = String(parse(app.urls[0]).port)
  }
  Object.assign(env, extra, app.env)
  env.HTTPSYS_HUB = hubPath
  env.HTTPSYS_QUEUE = app.name
  env.HTTPSYS_APP = app.name
  env.HTTPSYS_INSTANCE = String(inst)
  env.NODE_APP_INSTANCE = String(inst)
  return env
}

function sendShutdown (child, killTimeout) {
  if (!child.connected) return false
  try {
    child.send({ type: 'httpsys:shutdown', deadline: Date.now() + killTimeout }, () => {})
    return true
  } catch {
    return false
  }
}

function killTree (child) {
  if (IS_WINDOWS) {
    try { child.kill('SIGKILL') } catch {}
    return
  }
  try {
    process.kill(-child.pid, 'SIGKILL')
  } catch (err) {
    // ESRCH: the group is already empty. Anything else (EPERM on a zombie group on
    // macOS): fall back to the process itself.
    if (err.code !== 'ESRCH') {
      try { child.kill('SIGKILL') } catch {}
    }
  }
}

module.exports = { Worker, workerEnv, REGISTER }
