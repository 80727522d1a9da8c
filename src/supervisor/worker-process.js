'use strict'

// One node process of an instance: spawned with the preload, its output turned into
// records, its readiness, and the graceful stop ladder (docs/supervisor.md 2.5),
// each step a record with the elapsed ms:
//
//   stop:drain     detach from the queue: no new requests, the in-flight ones finish
//                  (IPC httpsys:drain; done on httpsys:drained, or when the hub sees it
//                  detached with nothing in flight; at most half of kill_timeout)
//   stop:shutdown  IPC httpsys:shutdown: the preload runs the app's SIGTERM/SIGINT
//                  listeners, else closes its servers and exits (SIGTERM on POSIX when
//                  the app closed its IPC channel)
//   stop:kill      kill_timeout after the start of the stop: the whole tree, by force
//   stop:done      verified: nothing of the tree is alive (stragglers are killed)
//
// An instance (instance.js) owns one of these at a time, two during a reload.

const { spawn } = require('node:child_process')
const { EventEmitter } = require('node:events')
const { MSG } = require('../worker-interface')
const { workerCommand } = require('../sea/worker-node')
const { isSea } = require('../sea')
const { LineSplitter } = require('./line-splitter')
const { createLineSink } = require('./worker-output')
const tree = require('./process-tree')

const IS_WINDOWS = process.platform === 'win32'
// after 'exit', how long to wait for the pipes to close before reporting the exit anyway
// (a grandchild that inherited stdout can keep them open for ever)
const CLOSE_GRACE_MS = 250
// stderr lines kept to tell why a process that never got ready failed
const STDERR_TAIL = 40
// a preload that knows httpsys:drain detaches at once; one that does not never will
const DRAIN_ACK_MS = 500
const DRAIN_POLL_MS = 20
// app and node pairs already named in a record (reportNode)
const reported = new Set()

class WorkerProcess extends EventEmitter {
  /**
   * @param {object} app a validated app
   * @param {number} inst
   * @param {object} options
   * @param {string[]} options.argv node's arguments (preload, script, args)
   * @param {object} options.env the whole environment
   * @param {import('pino').Logger} options.logger
   * @param {(pid: number) => number} [options.inFlight] requests the hub has in flight on pid
   * @param {boolean} [options.tracksWorkers=true] the router reports detach (the hub); HTTP.SYS
   *   does not, so there a drain ends only on httpsys:drained, the exit, or its deadline
   * @param {import('./process-tree').TreeWatch} [options.treeWatch] keeps the last known tree
   *   of the process, so an exit nobody asked for still finds the app's detached children
   */
  constructor (app, inst, { argv, env, logger, inFlight, tracksWorkers = true, treeWatch = tree.defaultWatch() }) {
    super()
    this.app = app
    this.inst = inst
    this.argv = argv
    this.env = env
    this.logger = logger
    this.inFlight = inFlight || (() => 0)
    this.tracksWorkers = tracksWorkers
    this.treeWatch = treeWatch
    this.lastTree = [] // the tree as last seen, once the process has exited
    this.stderrTail = []
    this.child = null
    this.pid = undefined
    this.state = 'starting' // ready | stopping | exited
    this.spawnedAt = 0
    this.readyAt = null
    this.attached = false
    this.detached = false
    this.exitInfo = null
    this.stopping = null
    this.readyTimers = []
    this.timeout = null // { kind: 'listen'|'ready', ms, cause } once not ready in time
    this.onDrained = null
    this.statsWaiters = []
    this.exited = new Promise((resolve) => { this.resolveExited = resolve })
  }

  get tags () {
    return { app: this.app.name, inst: this.inst, pid: this.pid }
  }

  /** @returns {boolean} false when node could not even be started (logged) */
  spawn () {
    const { app } = this
    this.spawnedAt = Date.now()
    let child
    try {
      // which node (the app's `node`, the PATH's from the single executable, or this one)
      // and so where the preload comes from
      const command = workerCommand(app, this.argv, this.env)
      this.reportNode(command.node)
      child = spawn(command.file, command.args, {
        cwd: app.cwd,
        env: command.env,
        stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
        // POSIX: lead a process group so stop reaches the app's own children, and the
        // terminal's Ctrl+C reaches only the supervisor. Windows: never detached: it
        // would cost libuv's kill-on-close job and pop up a console
        // (docs/supervisor.md 3.3, 3.4).
        detached: !IS_WINDOWS,
        windowsHide: true
      })
    } catch (err) {
      this.logger.error({ event: 'spawn-error', app: app.name, inst: this.inst, err }, `cannot start: ${err.message}`)
      // reported on the next tick, like every other exit: the owner holds this object by then
      process.nextTick(() => this.finish(null, null))
      return false
    }
    this.child = child
    this.pid = child.pid
    this.treeWatch.add(child.pid)

    const splitters = []
    for (const stream of ['stdout', 'stderr']) {
      const sink = createLineSink(this.logger, { app: app.name, inst: this.inst, pid: child.pid, stream })
      // the last stderr lines say why a process that never got ready failed (start-failure.js)
      const keepTail = (line, truncated) => {
        this.stderrTail.push(line)
        if (this.stderrTail.length > STDERR_TAIL) this.stderrTail.shift()
        sink(line, truncated)
      }
      const onLine = stream === 'stdout' ? sink : keepTail
      const splitter = new LineSplitter(onLine)
      child[stream].on('data', (chunk) => splitter.push(chunk))
      child[stream].on('end', () => splitter.end())
      splitters.push(splitter)
    }
    this.splitters = splitters
    child.on('message', (msg) => this.onMessage(msg))
    child.on('error', (err) => {
      // spawn failed (no pid) or an IPC send failed; only the first matters here
      if (child.pid === undefined) {
        this.logger.error({ event: 'spawn-error', app: app.name, inst: this.inst, err }, `cannot start: ${err.message}`)
        this.finish(null, null)
      }
    })
    child.on('exit', (code, signal) => {
      const timer = setTimeout(() => this.finish(code, signal), CLOSE_GRACE_MS)
      child.once('close', () => {
        clearTimeout(timer)
        this.finish(code, signal)
      })
    })
    if (child.pid === undefined) return false
    this.logger.info({ event: 'spawn', ...this.tags }, `started pid ${child.pid}`)
    if (app.type === 'worker' && !app.wait_ready) {
      // no HTTP, so no attach to wait for: started is ready
      process.nextTick(() => { if (this.state === 'starting') this.markReady('started') })
      return true
    }
    // a web app must listen() within listen_timeout; with wait_ready it must also say
    // ready within ready_timeout (without, ready is the listen(): the shorter applies)
    const listenMs = app.type === 'worker' ? 0 : app.wait_ready ? app.listen_timeout : shorter(app.listen_timeout, app.ready_timeout)
    const readyMs = app.wait_ready ? app.ready_timeout : 0
    if (listenMs > 0) this.readyTimers.push(setTimeout(() => { if (!this.attached) this.timedOut('listen', listenMs) }, listenMs))
    if (readyMs > 0) this.readyTimers.push(setTimeout(() => this.timedOut('ready', readyMs), readyMs))
    return true
  }

  /**
   * Not listening (or not ready) in time: the instance stops it, and what it says is what
   * happened (`never listened within 30 s; stopped by httpsys`), not the exit code the
   * stop produced.
   */
  timedOut (kind, ms) {
    if (this.state !== 'starting' || this.timeout !== null) return
    this.timeout = { kind, ms, cause: timeoutCause(kind, ms) }
    const hint = kind === 'listen' ? '; if it serves no HTTP, give it type: "worker" (or --no-http)' : ''
    this.logger.warn({ event: 'ready-timeout', ...this.tags, ms, kind }, `${timeoutText(kind, ms)}; stopping it${hint}`)
    this.emit('ready-timeout', this.timeout)
  }

  clearReadyTimers () {
    for (const t of this.readyTimers.splice(0)) clearTimeout(t)
  }

  /** Says once per app and node which node runs it, and why that one. */
  reportNode (node) {
    const key = `${this.app.name}\0${node.path}`
    if (reported.has(key)) return
    reported.add(key)
    const inside = node.self && isSea()
    // the usual case from the source tree (this node) is said only at debug
    const level = isSea() || this.app.node ? 'info' : 'debug'
    this.logger[level]({ event: 'node', app: this.app.name, node: node.path, version: node.version, self: node.self, why: node.why },
      `runs on node v${node.version}: ${inside ? 'the one inside httpsys' : node.path} (${node.why})`)
  }

  /**
   * This pid attached to the app's queue: the router saw it ('attach'), or the preload
   * said so ('preload'). Both may come; the second changes nothing.
   */
  onAttach (via = 'attach') {
    this.attached = true
    if (!this.app.wait_ready) this.markReady(via)
  }

  /** The hub saw this pid detach (or its connection close). */
  onDetach () {
    this.detached = true
  }

  onMessage (msg) {
    // the app's own word (wait_ready): process.send('ready') is pm2's spelling, so apps
    // written for pm2 keep working
    if (msg === 'ready') {
      if (this.app.wait_ready) this.markReady('message')
      return
    }
    if (!msg || typeof msg.type !== 'string') return
    // the preload: a server of this process is attached (the only word HTTP.SYS gives)
    if (msg.type === MSG.READY) this.onAttach('preload')
    else if (msg.type === MSG.DRAINED && this.onDrained) this.onDrained()
    else if (msg.type === MSG.STATS) {
      for (const resolve of this.statsWaiters.splice(0)) resolve(msg)
    }
  }

  markReady (via) {
    if (this.state !== 'starting') return
    this.clearReadyTimers()
    this.state = 'ready'
    this.readyAt = Date.now()
    // what an app starts before it listens (workers, helpers) is running by now
    this.treeWatch.refresh().catch(() => {})
    const ms = this.readyAt - this.spawnedAt
    this.logger.info({ event: 'ready', ...this.tags, ms, via }, `ready in ${ms} ms`)
    this.emit('ready', { pid: this.pid, ms })
  }

  /**
   * Asks the preload for process.memoryUsage() (Windows has no /proc to read).
   * @returns {Promise<object|null>}
   */
  askStats (timeout = 1000) {
    if (!this.child || !this.child.connected) return Promise.resolve(null)
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), timeout)
      this.statsWaiters.push((msg) => { clearTimeout(timer); resolve(msg) })
      send(this.child, { type: MSG.STATS })
    })
  }

  /**
   * The stop ladder. Idempotent: every call returns the same promise.
   * @param {number} [killTimeout=app.kill_timeout]
   * @returns {Promise<void>} once the process and its tree are gone
   */
  stop (killTimeout = this.app.kill_timeout) {
    if (this.stopping === null) {
      this.stopping = this.exitInfo ? Promise.resolve() : this.ladder(killTimeout)
    }
    return this.stopping
  }

  /** Force: kill the tree now (second Ctrl+C); a stop in progress ends with it. */
  kill () {
    if (this.exitInfo) return Promise.resolve()
    this.state = 'stopping'
    this.clearReadyTimers()
    if (this.pid === undefined) return this.exited
    if (this.stopping !== null) {
      tree.killTree(this.pid)
      return this.stopping
    }
    this.stopping = this.forceLadder()
    return this.stopping
  }

  async forceLadder () {
    const t0 = Date.now()
    // who is in the tree, before the kill cuts the parent links
    const known = await tree.snapshot(this.pid).catch(() => [])
    await tree.killTree(this.pid)
    await this.exited
    const left = tree.survivors(merge(known, this.lastTree))
    if (left.length > 0) tree.killAll(left)
    this.logger.info({ event: 'stop:done', ...this.tags, ms: Date.now() - t0, survivors: left.map((p) => p.pid), forced: true },
      `killed in ${Date.now() - t0} ms`)
  }

  async ladder (killTimeout) {
    this.state = 'stopping'
    this.clearReadyTimers()
    const t0 = Date.now()
    const ms = () => Date.now() - t0
    const deadline = t0 + killTimeout
    const child = this.child
    if (child === null || this.pid === undefined) return this.exited
    let known = []
    const snap = tree.snapshot(this.pid).then((ids) => { known = ids }, () => {})

    if (this.attached && !this.detached && child.connected) {
      this.logger.info({ event: 'stop:drain', ...this.tags, ms: ms() }, 'draining: no new requests, finishing the ones in flight')
      // half of kill_timeout at most: the app's own shutdown must get time too
      const how = await this.drain(t0 + killTimeout / 2, Math.min(DRAIN_ACK_MS, killTimeout / 4))
      this.logger.debug({ event: 'stop:drained', ...this.tags, ms: ms(), how }, `drained (${how}) after ${ms()} ms`)
    }
    if (!this.exitInfo) {
      const via = send(child, { type: MSG.SHUTDOWN, deadline }) ? 'ipc' : IS_WINDOWS ? null : 'SIGTERM'
      if (via === 'SIGTERM') signal(child, 'SIGTERM')
      this.logger.info({ event: 'stop:shutdown', ...this.tags, ms: ms(), via }, `asking it to exit (${via || 'no channel left'}) after ${ms()} ms`)
    }
    await snap
    if (!(await within(this.exited, deadline - Date.now()))) {
      known = merge(known, await tree.snapshot(this.pid).catch(() => []))
      this.logger.warn({ event: 'stop:kill', ...this.tags, ms: ms(), after: ms(), tree: known.length + 1 },
        `did not stop within ${killTimeout} ms; killing it and ${known.length} process(es) it started`)
      await tree.killTree(this.pid)
    }
    await this.exited
    const left = tree.survivors(merge(known, this.lastTree))
    if (left.length > 0) tree.killAll(left)
    const level = left.length > 0 ? 'warn' : 'info'
    this.logger[level]({ event: 'stop:done', ...this.tags, ms: ms(), survivors: left.map((p) => p.pid) },
      left.length > 0 ? `stopped in ${ms()} ms; killed ${left.length} process(es) left behind` : `stopped in ${ms()} ms`)
  }

  /** @returns {Promise<string>} how the drain ended */
  drain (deadline, ackMs) {
    return new Promise((resolve) => {
      let done = false
      const timers = []
      const finish = (how) => {
        if (done) return
        done = true
        this.onDrained = null
        for (const t of timers) clearTimeout(t)
        clearInterval(poll)
        resolve(how)
      }
      this.onDrained = () => finish('drained')
      this.exited.then(() => finish('exited'))
      timers.push(setTimeout(() => finish('timeout'), Math.max(0, deadline - Date.now())))
      // a router that reports detaching tells a preload that ignores httpsys:drain
      if (this.tracksWorkers) timers.push(setTimeout(() => { if (!this.detached) finish('unsupported') }, ackMs))
      const poll = setInterval(() => {
        if (this.detached && this.inFlight(this.pid) === 0) finish('idle')
      }, DRAIN_POLL_MS)
      if (!send(this.child, { type: MSG.DRAIN })) finish('no-channel')
    })
  }

  killLeftBehind () {
    const left = tree.survivors(this.lastTree)
    if (left.length === 0) return
    tree.killAll(left)
    // the group kill has reached its members already (they may not be dead yet): the
    // record names only those that had left the group
    const escaped = left.filter((p) => p.pgid !== this.pid)
    if (escaped.length === 0) return
    this.logger.warn({ event: 'exit:orphans', ...this.tags, survivors: escaped.map((p) => p.pid) },
      `killed ${escaped.length} process(es) it left behind`)
  }

  finish (code, signal) {
    if (this.exitInfo) return
    this.clearReadyTimers()
    for (const s of this.splitters || []) s.end()
    const stopping = this.state === 'stopping'
    this.exitInfo = { code, signal, at: Date.now(), stopping }
    this.state = 'exited'
    // whatever the app left in its group goes with it (POSIX). Not on Windows: there is
    // no group, taskkill /T finds no tree under a pid that has exited, and the pid may
    // already name an unrelated process; libuv's job took the app's own children with it.
    if (this.pid !== undefined && !IS_WINDOWS) tree.killTree(this.pid)
    if (this.pid !== undefined) {
      this.lastTree = this.treeWatch.remove(this.pid)
      // asked to stop: its exit code is the stop's, not a verdict on the app
      const how = stopping
        ? `stopped (${this.timeout ? `${timeoutText(this.timeout.kind, this.timeout.ms)}; ` : ''}${signal ? `killed by ${signal}` : `exit code ${code}`})`
        : signal ? `killed by ${signal}` : `exited with code ${code}`
      const uptimeMs = this.exitInfo.at - this.spawnedAt
      const level = stopping || (code === 0 && !signal) ? 'info' : 'warn'
      this.logger[level]({ event: 'exit', ...this.tags, code, signal, uptimeMs }, how)
      // the stop ladder verifies its own tree; an exit nobody asked for (a crash) leaves
      // the app's detached children behind unless the last look at the tree names them
      if (!stopping) this.killLeftBehind()
    }
    for (const resolve of this.statsWaiters.splice(0)) resolve(null)
    this.emit('exit', { pid: this.pid, code, signal })
    this.resolveExited()
  }
}

/** What a process stopped for not being ready in time failed by, in a user's words. */
function timeoutText (kind, ms) {
  return kind === 'listen' ? `never listened within ${duration(ms)}` : `did not send process.send('ready') within ${duration(ms)}`
}

function timeoutCause (kind, ms) {
  return `${timeoutText(kind, ms)}; stopped by httpsys`
}

/** "30 s", "1.5 s", "300 ms": how a timeout reads in a record. */
function duration (ms) {
  if (ms < 1000) return `${ms} ms`
  const s = ms / 1000
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`
}

/** The shorter of two timeouts where 0 is none. */
function shorter (a, b) {
  if (a === 0) return b
  if (b === 0) return a
  return Math.min(a, b)
}

function send (child, msg) {
  if (!child || !child.connected) return false
  try {
    child.send(msg, () => {})
    return true
  } catch {
    return false
  }
}

function signal (child, name) {
  try {
    child.kill(name)
  } catch {}
}

function within (promise, ms) {
  let timer
  return Promise.race([
    promise.then(() => true),
    new Promise((resolve) => { timer = setTimeout(resolve, Math.max(0, ms), false) })
  ]).finally(() => clearTimeout(timer))
}

function merge (a, b) {
  const seen = new Set(a.map((p) => p.pid))
  return a.concat(b.filter((p) => !seen.has(p.pid)))
}

module.exports = { WorkerProcess, DRAIN_ACK_MS, duration }
