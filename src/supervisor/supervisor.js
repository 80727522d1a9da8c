'use strict'

// The supervisor of `httpsys start`: picks the router (backend-choice.js: the hub in
// this process, or HTTP.SYS), creates one queue per app before any app runs (a port in
// use fails the start, not a worker), runs each app's instances (app-group.js), answers
// the control channel (`httpsys ls`, `reload`, ... from another terminal), samples
// memory, writes log files, and stops everything in order: workers first (they finish
// in-flight requests), then the router.

const path = require('node:path')
const { EventEmitter } = require('node:events')
const pino = require('pino')
const { codes } = require('../errors')
const localSocket = require('../local-socket')
const { ENV } = require('../worker-interface')
const { AppGroup } = require('./app-group')
const { LogDispatcher } = require('./log-dispatcher')
const { LogFile } = require('./log-file')
const { MemoryMonitor } = require('./memory')
const { collectApps, publicView } = require('./app-stats')
const { chooseBackend } = require('./backend-choice')
const { defaultSocketPath: tmpSocketPath } = require('./router-config')
const { NativeRouter, wantsNativeRouter } = require('./native-router')
const { ensureRuntimeDir, removeDeadWorkerSockets, runtimeDir } = require('./control-path')
const { HttpsysRouter } = require('./httpsys-router')
const { containProcessTree } = require('./job')
const { checkRouter: checkAuthRouter } = require('../windows-auth')
const { reconfigure, scale } = require('./reconfigure')

const kStopping = Symbol('httpsys.supervisor.stopping')
// the hub bounds its own close (closeTimeout, 5 s); this only guards against a hang
const ROUTER_CLOSE_TIMEOUT_MS = 7000
const TERMINAL = new Set(['errored', 'exited'])

class Supervisor extends EventEmitter {
  /**
   * @param {object} config a validated config (src/config); config.backend picks the router
   * @param {object} options
   * @param {import('pino').Logger} options.logger
   * @param {string} [options.logLevel] passed to workers as HTTPSYS_LOG_LEVEL
   * @param {string} [options.socketPath] the hub's socket (default: per run, in the user's private runtime directory)
   * @param {Function} [options.Router] the native router's class, constructed as
   *   NativeRouter is (default: native-router.js; tests swap it)
   * @param {object} [options.native] the HTTP.SYS controller (default: src/httpsys; tests swap it)
   * @param {object} [options.backendChoice] options of chooseBackend() (platform, loadNative; tests)
   * @param {string} [options.preload] the workers' --require module (default: src/register.js)
   * @param {boolean} [options.control=false] answer `httpsys ls|reload|...` on the control channel
   * @param {string} [options.controlDir] the control channel's directory (default: per user)
   * @param {object} [options.memory] MemoryMonitor options (intervalMs, sustained, sample)
   * @param {() => Promise<object>} [options.reread] reads the config again, validated, for
   *   `httpsys reload` and `restart` (default: its config file, when it has one; none: they
   *   replace the processes and change nothing else)
   * @param {boolean} [options.untilStopped=false] run until stopped by a command or a
   *   signal: in the background and as a service, an app that ends errored keeps the
   *   supervisor (and its port, answering 503) up for `httpsys restart` (docs/supervisor.md 2.2)
   */
  constructor (config, { logger, logLevel, socketPath, Router, native, backendChoice, preload, control = false, controlDir, memory = {}, reread, untilStopped = false }) {
    super()
    this.config = config
    // every record passes here (log files, `httpsys logs`) on its way out
    this.logs = new LogDispatcher(logger[pino.symbols.streamSym])
    this.logger = pino({ level: logger.level, base: null }, this.logs)
    this.socketPath = socketPath || workerSocketPath(process.pid, controlDir)
    this.routerOptions = { Router, native, backendChoice }
    this.backend = null // { backend, reason } once started
    this.routerKind = null // 'native' or 'httpsys', once started
    this.router = null // the request router (native-router.js, httpsys-router.js)
    this.groups = []
    this.starting = false // start() runs: a router failure then rejects it (routerFailure)
    this.routerFailure = null
    this.logLevel = logLevel
    this.preload = preload
    this.controlEnabled = control
    this.controlDir = controlDir
    this.control = null
    this.metrics = null
    this.memory = new MemoryMonitor({ groups: () => this.groups, logger: this.logger, ...memory })
    this.startedAt = Date.now()
    this.reread = reread || rereadFile(config)
    this.untilStopped = untilStopped
    this.changing = Promise.resolve() // config edits (reload, restart, scale) one at a time
    this.allReady = false
    this.idle = false // untilStopped, and every app ended by itself: said once
    this[kStopping] = null
  }

  /** Every instance of every app. */
  get instances () {
    return this.groups.flatMap((g) => g.instances)
  }

  /**
   * Pick the router, create every queue, then spawn the workers. Rejects before
   * spawning anything (ERR_HTTPSYS_NATIVE_UNAVAILABLE when httpsys was asked for and
   * cannot load, a port in use, ...).
   */
  async start () {
    containProcessTree({ logger: this.logger, ...(this.routerOptions.backendChoice || {}) })
    this.chooseRouter()
    this.openLogFiles()
    await this.startControl()
    await this.startMetrics()
    this.starting = true
    try {
      const router = await this.startRouter()
      await this.spawnApps(router)
    } finally {
      this.starting = false
    }
    // the router failed while the apps were spawned (nobody listens for 'error' before
    // start() returns): what started is stopped, and start() rejects with why
    if (this.routerFailure) {
      await this.stop()
      throw this.routerFailure
    }
    this.watchMemory()
    return this
  }

  chooseRouter () {
    const choice = chooseBackend(this.config, this.routerOptions.backendChoice)
    this.backend = choice
    const record = { event: 'backend', backend: choice.backend, reason: choice.reason, detail: choice.detail, fix: choice.fix }
    // (the hub backend is the native router: ls and show say which, routerKind)
    this.routerKind = choice.backend !== 'hub' ? 'httpsys' : 'native'
    const name = { httpsys: 'HTTP.SYS', native: 'the native router' }[this.routerKind]
    const text = `router: ${name} (${choice.reason})`
    if (choice.fallback) this.logger.warn(record, `${text}; to run on HTTP.SYS: ${choice.fix}`)
    else this.logger.info(record, text)
    // Windows authentication: HTTP.SYS's; on the hub a development identity, or nothing starts
    for (const w of checkAuthRouter(this.config.apps, choice)) this.logger.warn({ event: 'auth' }, w)
  }

  openLogFiles () {
    for (const app of this.config.apps) this.openLogFile(app)
  }

  /** The app's log file, when its config has a log_dir (at start, and for a config edit: reconfigure.js). */
  openLogFile (app) {
    if (app.log_dir) this.logs.addFile(app.name, new LogFile(app.log_dir, app.name, { maxSize: app.log_max_size, daily: app.log_daily, keep: app.log_keep }))
  }

  async startControl () {
    if (!this.controlEnabled) return
    const { ControlServer } = require('./control-server')
    this.control = new ControlServer({ handler: this.controlHandler(), config: this.config, logger: this.logger, dir: this.controlDir })
    await this.control.start()
  }

  /** The Prometheus and readiness endpoint, when the config asks for one. */
  async startMetrics () {
    if (!this.config.metrics) return
    const { MetricsServer } = require('./metrics-server')
    const metrics = new MetricsServer({ supervisor: this, listen: this.config.metrics.listen, logger: this.logger })
    try {
      await metrics.start()
    } catch (err) {
      if (this.control) await this.control.close()
      this.logs.close()
      throw err
    }
    this.metrics = metrics
  }

  /**
   * The router, with one queue per app. On failure it releases what start() opened:
   * start() rejects, so nobody calls stop().
   * @returns {Promise<object>} the router
   */
  async startRouter () {
    let router = null
    try {
      router = this.createRouter(this.backend.backend)
      this.router = router
      router.on('attach', ({ pid }) => this.findInstance(pid)?.markReady(pid))
      router.on('detach', ({ queue, pid, reason }) => {
        this.findInstance(pid)?.onDetach(pid)
        this.logger.debug({ event: 'detach', queue, pid, reason }, `pid ${pid} detached from queue ${queue}`)
      })
      router.on('error', (err) => {
        this.logger.fatal({ err }, `the router failed: ${err.message}`)
        if (this.starting) this.routerFailure = this.routerFailure || err
        else this.emit('error', err)
      })
      await router.start()
      for (const app of this.config.apps) {
        if (app.type !== 'worker') await router.createQueue(app.name, { urls: app.urls, redirectHttp: app.redirect_http, cache: app.cache !== false, auth: app.auth })
      }
    } catch (err) {
      this.router = null
      if (router !== null) await closeQuietly(router)
      if (this.control) await this.control.close()
      if (this.metrics) await this.metrics.close()
      this.logs.close()
      throw err
    }
    return router
  }

  createRouter (backend) {
    const { Router, native } = this.routerOptions
    const limits = this.config.limits
    if (backend === 'httpsys') {
      // requestCert entries go to the workers, which check the certificates (and refuse to
      // serve a port whose binding does not ask for them: src/httpsys/client-certs.js)
      return new HttpsysRouter({ logger: this.logger, native, limits, tls: this.config.tls })
    }
    // what earlier supervisors that crashed left next to ours
    if (path.dirname(this.socketPath) === path.resolve(this.controlDir || runtimeDir())) {
      try {
        const removed = removeDeadWorkerSockets(path.dirname(this.socketPath))
        if (removed.length > 0) this.logger.debug({ event: 'cleanup', files: removed }, `removed ${removed.length} stale worker socket(s)`)
      } catch {}
    }
    // the Go router in its own process (issue 25); an injected Router is a test's.
    // HTTPSYS_ROUTER=hub (the removed JS hub) is a config error, thrown here
    if (Router) return new Router({ socketPath: this.socketPath, logger: this.logger, limits, tls: this.config.tls })
    wantsNativeRouter()
    return new NativeRouter({ socketPath: this.socketPath, logger: this.logger, limits, tls: this.config.tls })
  }

  /**
   * One group per app, each told by the router where its queue is, then all started.
   * @param {object} router startRouter()'s: a stop() meanwhile clears this.router
   */
  async spawnApps (router) {
    for (const app of this.config.apps) this.groups.push(this.createGroup(app, router))
    await Promise.all(this.groups.map((g) => g.start()))
  }

  createGroup (app, router) {
    const where = app.type === 'worker' ? 'no HTTP (type: worker)' : app.urls.length ? app.urls.join(' ') : 'the prefix its listen() asks for'
    this.logger.info({ event: 'app', app: app.name, urls: app.urls, instances: app.instances },
      `${app.instances} instance${app.instances === 1 ? '' : 's'}${app.type === 'worker' ? ', ' : ' on '}${where}${app.watch.length ? ' (watching for changes)' : ''}`)
    const group = new AppGroup(app, {
      routerEnv: this.routerEnvOf(app, router),
      tracksWorkers: router.tracksWorkers,
      logger: this.logger,
      env: this.logLevel ? { [ENV.LOG_LEVEL]: this.logLevel } : {},
      preload: this.preload,
      inFlight: (pid) => this.inFlightOf(app.name, pid),
      // whether anything keeps this supervisor up once that instance is errored: else
      // `httpsys restart` cannot reach it, and the errored record must say to start again
      staysUp: (instance) => this.untilStopped || this.instances.some((i) => i !== instance && !TERMINAL.has(i.state)) ||
        this.groups.some((g) => g.watching),
      logDirs: [...new Set(this.config.apps.map((a) => a.log_dir).filter(Boolean))]
    })
    group.configured = app.instances // what the config says (`scale` changes the running count only)
    for (const instance of group.instances) this.watchInstance(group, instance)
    return group
  }

  /** What a worker of the app needs to find its queue. */
  routerEnvOf (app, router = this.router) {
    // a worker app talks to no router: none of the router's variables reach it
    return app.type === 'worker' ? Object.fromEntries(Object.keys(router.workerEnv(app)).map((k) => [k, undefined])) : router.workerEnv(app)
  }

  /** An instance's events, for the supervisor's own and for the router. */
  watchInstance (group, instance) {
    const inst = instance.inst
    for (const event of ['spawn', 'ready', 'exit']) {
      instance.on(event, (info) => this.emit(event, { app: group.name, inst, ...(typeof info === 'object' ? info : { pid: info }) }))
    }
    instance.on('state', () => {
      this.checkAvailable(group)
      this.checkSettled()
    })
    instance.on('ready', () => this.announceReady(group))
    // the router's output cache holds no response of an instance that is gone
    for (const event of ['ready', 'exit']) {
      instance.on(event, () => {
        const router = this.router
        if (router !== null && router !== undefined && typeof router.instancesChanged === 'function') router.instancesChanged(group.name)
      })
    }
  }

  /**
   * The first time every instance of an app is ready: one line saying where it is
   * served (`api  ready  http://localhost:8080/api/  2 instances`); once every app has
   * been: one summary line. `httpsys start -d` waits for these.
   */
  announceReady (group) {
    if (group.announced || !group.instances.every((i) => i.state === 'ready')) return
    group.announced = true
    const urls = this.servedUrls(group)
    const n = group.instances.length
    this.logger.info({ event: 'app-ready', app: group.name, urls, instances: n },
      `ready  ${group.app.type === 'worker' ? '(no HTTP)' : urls.map(clickable).join(' ') || '(no URL)'}  ${n} instance${n === 1 ? '' : 's'}`)
    if (!this.allReady && this.groups.length === this.config.apps.length && this.groups.every((g) => g.announced)) {
      this.allReady = true
      const n = this.groups.length
      this.logger.info({ event: 'all-ready', apps: n, ms: Date.now() - this.startedAt },
        `${n === 1 ? 'the app is' : `all ${n} apps are`} ready (${Date.now() - this.startedAt} ms)`)
    }
  }

  /** The prefixes an app is served on: its urls, or what its first listen() bound. */
  servedUrls (group) {
    if (group.app.urls.length > 0) return group.app.urls.slice()
    const stats = this.queueStats(group.name)
    return stats && Array.isArray(stats.urls) ? stats.urls.slice() : []
  }

  /**
   * Tells the router whether the app can serve again by itself: not while every
   * instance ended by itself for good (errored, or exited and not restarted), when its
   * requests would only wait for the queue timeout; yes once one starts again. (An app
   * stopped by command passes through 'stopped' on a restart, so its requests wait.)
   */
  checkAvailable (group) {
    if (group.app.type === 'worker') return
    const down = group.instances.every((i) => TERMINAL.has(i.state))
    if (down) this.setAvailable(group, false)
    else if (!group.instances.every((i) => i.state === 'stopped')) this.setAvailable(group, true)
  }

  setAvailable (group, available) {
    const router = this.router
    if (router === null || typeof router.setAvailable !== 'function' || group.down === !available) return
    group.down = !available
    try {
      router.setAvailable(group.name, available)
    } catch {}
    // (not when the foreground is about to exit for it: the port closes then)
    if (!available && (this.untilStopped || this.settledCode() === null)) {
      this.logger.warn({ event: 'unavailable', app: group.name },
        `app ${group.name} cannot serve until \`httpsys restart ${group.name}\` (or a reload) starts it again: its requests get 503`)
    }
  }

  watchMemory () {
    if (this.config.apps.some((a) => a.max_memory_restart > 0)) this.memory.start()
  }

  findInstance (pid) {
    return this.instances.find((i) => i.findProcess(pid) !== undefined)
  }

  findGroup (name) {
    return this.groups.find((g) => g.name === name)
  }

  /** The groups a command names ('all', or one app); unknown names are an error. */
  select (name) {
    if (name === undefined || name === 'all') return this.groups
    const group = this.findGroup(name)
    if (!group) throw new codes.ERR_HTTPSYS_APP_NOT_FOUND({ app: name, known: this.groups.map((g) => g.name) })
    return [group]
  }

  /** [{ app, inst, pid, state }] of every instance. */
  list () {
    return this.instances.map((i) => ({ app: i.app.name, inst: i.inst, pid: i.pid, state: i.state }))
  }

  /**
   * What `httpsys ls` shows: every app and instance with CPU, memory, requests/s, p99
   * and queue depth (src/supervisor/app-stats.js). With `raw`, each instance keeps the
   * worker's own counters (monit, the metrics endpoint).
   */
  async status ({ raw = false } = {}) {
    const router = this.router
    // the native router's counters come over its control channel: fresh for this read
    if (router && typeof router.refreshNow === 'function') await router.refreshNow()
    // the router's own process where it is one (the native router, issue 25): its row in ls
    const [apps, routerProcess] = await Promise.all([collectApps(this), router && typeof router.processStats === 'function' ? router.processStats() : null])
    return {
      pid: process.pid,
      startedAt: new Date(this.startedAt).toISOString(),
      backend: this.backend && this.backend.backend,
      routerKind: this.routerKind,
      connections: this.router && typeof this.router.connections === 'function' ? this.router.connections() : null,
      // TLS handshakes the router did and refused (the hub; HTTP.SYS does not say)
      tls: this.router && typeof this.router.tlsStats === 'function' ? this.router.tlsStats() : null,
      router: routerProcess,
      apps: raw ? apps : publicView(apps)
    }
  }

  queueStats (name) {
    return this.router ? this.router.stats(name) : null
  }

  inFlightOf (queue, pid) {
    const stats = this.queueStats(queue)
    if (!stats) return 0
    let n = 0
    for (const w of stats.workers) if (w.pid === pid) n += w.inFlight
    return n
  }

  /**
   * `httpsys show <app>`: the app as resolved, where it is served, its instances with
   * their last exits, and its recent records. Environment values are the caller's to
   * mask (src/cli/show.js), as `config check` does.
   */
  async show (name) {
    const [group] = this.select(name)
    if (group === undefined || name === 'all') throw new codes.ERR_HTTPSYS_APP_NOT_FOUND({ app: name, known: this.groups.map((g) => g.name) })
    const { apps } = await this.status()
    const status = apps.find((a) => a.name === group.name)
    return {
      name: group.name,
      state: group.state(),
      urls: this.servedUrls(group),
      backend: this.backend && this.backend.backend,
      routerKind: this.routerKind,
      config: group.app,
      instances: status.instances,
      waiting: status.waiting,
      cache: status.cache,
      records: this.logs.recent({ app: group.name, lines: 15 })
    }
  }

  /**
   * Rolling reload of one app or all; resolves with each app's outcome, then one entry
   * per config certificate file that failed to load again ({ tls, ok: false, code,
   * message }: the certificate loaded before keeps serving).
   */
  reload (name) {
    return reconfigure(this, name, 'reload')
  }

  /** Hard restart of one app or all, after reading the config again (as reload does). */
  restart (name) {
    return reconfigure(this, name, 'restart')
  }

  /** `httpsys scale <app> <n>`: instances added (started) or removed (drained) now. */
  scale (name, count) {
    return this.oneAtATime(() => scale(this, name, count))
  }

  oneAtATime (fn) {
    const run = this.changing.then(fn)
    this.changing = run.catch(() => {})
    return run
  }

  /**
   * The apps the groups now run become the config's (a config edit, `scale`); the run's
   * own settings stay as they started. The control channel's state file lists them, so
   * `httpsys reload <app>` finds a new app.
   */
  setApps () {
    const source = this.config.source
    const config = { ...this.config, apps: this.groups.map((g) => g.app) }
    Object.defineProperty(config, 'source', { value: source })
    this.config = config
    if (this.control !== null && typeof this.control.setApps === 'function') this.control.setApps(config.apps)
  }

  /** One app: stop it and keep the rest. All: stop the supervisor (answered at once). */
  async stopApps (name) {
    if (name === undefined || name === 'all') {
      setImmediate(() => this.stop())
      return { stopping: true, pid: process.pid }
    }
    const groups = this.select(name)
    await Promise.all(groups.map((g) => g.stop()))
    // stopped by command: nothing serves it until `httpsys restart`, so no request waits
    for (const g of groups) this.setAvailable(g, false)
    return groups.map((g) => ({ app: g.name, ok: true, state: g.state() }))
  }

  controlHandler () {
    return {
      ls: () => this.status(),
      reload: (name) => this.reload(name),
      restart: (name) => this.restart(name),
      scale: (name, count) => this.scale(name, count),
      stop: (name) => this.stopApps(name),
      show: (name) => this.show(name),
      checkApp: (name) => this.select(name),
      logs: (options) => this.logs.recent(options),
      subscribe: (fn) => this.logs.subscribe(fn)
    }
  }

  /**
   * Every instance ended by itself (errored, or exited and not restarted): nothing will
   * ever serve again, so say so and let the foreground exit (non-zero when errored).
   * An errored app in watch mode waits for a change instead.
   */
  checkSettled () {
    const code = this.settledCode()
    if (code === null) {
      this.idle = false
      return
    }
    const errored = [...new Set(this.instances.filter((i) => i.state === 'errored').map((i) => i.app.name))]
    if (this.untilStopped) {
      // in the background or as a service the supervisor stays: `httpsys restart` brings
      // an app back, and meanwhile the router answers 503 for it (as IIS does for a
      // stopped application pool) rather than a closed port
      if (this.idle) return
      this.idle = true
      this.logger.warn({ event: 'idle', errored },
        `${errored.length ? `every app is errored or done (errored: ${errored.join(', ')})` : 'every app has exited'}; httpsys stays up ` +
        '(`httpsys restart <app>` starts one again, `httpsys stop all` stops httpsys)')
      return
    }
    this.logger[code ? 'error' : 'info']({ event: 'settled', code, errored },
      errored.length ? `every app is errored or done (errored: ${errored.join(', ')}); stopping` : 'every app has exited; stopping')
    this.emit('settled', { code })
  }

  /**
   * null while something runs or can run again by itself; else the exit code the
   * foreground ends with: 1 when an app is errored or exited with a failure, else 0.
   */
  settledCode () {
    if (this[kStopping] || this.groups.length !== this.config.apps.length) return null
    const instances = this.instances
    // a stopped app (`httpsys stop api`) may be restarted by command: not settled
    if (!instances.every((i) => TERMINAL.has(i.state))) return null
    if (this.groups.some((g) => g.watching && g.instances.some((i) => i.state === 'errored'))) return null
    const errored = instances.some((i) => i.state === 'errored')
    const failedExit = instances.some((i) => i.state === 'exited' && i.lastExit && (i.lastExit.code !== 0 || i.lastExit.signal))
    return errored || failedExit ? 1 : 0
  }

  /**
   * Graceful stop of every worker (drain, IPC shutdown, kill after kill_timeout), then
   * the router. Idempotent: every call returns the same promise.
   */
  stop () {
    if (!this[kStopping]) {
      this[kStopping] = this.shutdown((g) => g.stop())
    }
    return this[kStopping]
  }

  /** Force: kill every worker's process tree now, then close the router. */
  kill () {
    this.logger.warn({ event: 'force' }, 'forcing: killing every app now')
    if (!this[kStopping]) {
      this[kStopping] = this.shutdown((g) => g.kill())
    } else {
      for (const g of this.groups) g.kill()
    }
    return this[kStopping]
  }

  async shutdown (stopGroup) {
    const startedAt = Date.now()
    this.logger.info({ event: 'stop' }, 'stopping')
    this.memory.stop()
    await Promise.all(this.groups.map(stopGroup))
    if (this.router) {
      const router = this.router
      this.router = null
      const closed = await withTimeout(closeQuietly(router, this.logger), ROUTER_CLOSE_TIMEOUT_MS)
      if (!closed) this.logger.warn({ event: 'router-close-timeout' }, `the router did not close within ${ROUTER_CLOSE_TIMEOUT_MS} ms`)
    }
    if (this.control) await this.control.close()
    if (this.metrics) await this.metrics.close()
    const ms = Date.now() - startedAt
    this.logger.info({ event: 'stopped', ms }, `stopped in ${ms} ms`)
    this.logs.close()
    this.emit('stopped')
  }
}

/**
 * Where the router listens for workers: in the user's private (0700) runtime directory, so
 * no other user can attach to a queue or plant a socket at a name they can predict.
 * Windows: a named pipe (router-config.js defaultSocketPath). A runtime directory that cannot be
 * used, or whose path is too long for a socket, falls back to the temp directory.
 * @param {number} [pid=process.pid]
 * @param {string} [dir] the runtime directory (default: control-path.js runtimeDir())
 */
function workerSocketPath (pid = process.pid, dir) {
  if (process.platform === 'win32') return tmpSocketPath(pid)
  try {
    const file = localSocket.socketPath(`hub-${pid}`, { dir: ensureRuntimeDir(dir) })
    if (localSocket.fitsSocketPath(file)) return file
  } catch {}
  return tmpSocketPath(pid)
}

/** Reads a config file again as `httpsys start -c <file>` did (no flags to replay). */
function rereadFile (config) {
  const file = config.source && config.source.configFile
  if (!file) return null
  return () => require('../config').resolveStartConfig({ config: file }, { cwd: path.dirname(file) })
}

/** A prefix as a link a terminal can open: the wildcard hosts become localhost. */
function clickable (prefix) {
  return prefix.replace(/^(https?:\/\/)(\+|\*)(:)/, '$1localhost$3')
}

async function closeQuietly (router, logger) {
  try {
    await router.close()
  } catch (err) {
    if (logger) logger.warn({ err }, `closing the router failed: ${err.message}`)
  }
  return true
}

function withTimeout (promise, ms) {
  let timer
  return Promise.race([
    promise,
    new Promise((resolve) => { timer = setTimeout(resolve, ms, false) })
  ]).finally(() => clearTimeout(timer))
}

module.exports = { Supervisor, workerSocketPath }
