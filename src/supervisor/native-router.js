'use strict'

// The router the supervisor controls on the hub backend (issue 25): the Go router
// (router/) in a process of its own, using every core, controlled over its stdin and
// stdout (router-process.js, docs/router-control.md); workers attach to it over the wire
// (docs/wire-protocol.md). The JS hub (src/hub) it replaced is gone.
//
// A supervisor router (this one, httpsys-router.js) offers:
//   backend                'hub' | 'httpsys'
//   tracksWorkers          whether 'attach'/'detach' events and per-pid stats exist
//   start()                before any queue
//   createQueue(app, { urls })   one queue per app, before its workers start
//   deleteQueue(app)
//   setUrls(app, urls, { redirectHttp })   a config edit: prefixes added first, then dropped
//   unroute(app)           no new request reaches the app (it is leaving the config)
//   setAvailable(app, bool)  false: the app cannot serve again without a command
//   stats(app)             { waiting, workers: [{ pid, served, inFlight }] } or null
//   connections()          client connections open (optional; HTTP.SYS does not say)
//   workerEnv(app)         what a worker needs to find its queue (undefined: remove)
//   close()
//   events: 'attach' { queue, pid }, 'detach' { queue, pid, reason }, 'error'
//
// Not served yet (later steps of issue 25): CONNECT tunnels on a
// standalone app's own port (a standalone app runs this router as its child:
// src/preload/standalone-native.js). TLS: router-tls.js.

const crypto = require('node:crypto')
const { EventEmitter } = require('node:events')
const { codes } = require('../errors')
const { defaultSocketPath, configLimits, configTls, workerAttachEnv } = require('./router-config')
const { RouterProcess } = require('./router-process')
const { findRouter } = require('./router-binary')
const { ProcessUsage } = require('./router-usage')
const { withPortOwner } = require('../port-owner')
const { LIMIT_DEFAULTS } = require('../config/schema')

// Once the switch between the Go router and the JS hub; the hub was removed (issue 25),
// so only unset or native (the same) are accepted, and hub is an error that says so
// rather than being silently ignored.
const ROUTER_ENV = 'HTTPSYS_ROUTER'

/**
 * @returns {true} the native router is the only one
 * @throws ERR_HTTPSYS_CONFIG_INVALID for any other value than native (hub included)
 */
function wantsNativeRouter (env = process.env) {
  const asked = env[ROUTER_ENV]
  if (asked === undefined || asked === '' || asked === 'native') return true
  if (asked === 'hub') {
    throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
      key: ROUTER_ENV,
      reason: 'asks for the JS hub, which was removed (issue 25): the native router is the only router',
      fix: `Unset ${ROUTER_ENV} (or set it to native).`
    })
  }
  throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
    key: ROUTER_ENV,
    reason: `${JSON.stringify(asked)} is not a router (the environment variable ${ROUTER_ENV})`,
    fix: 'Unset it, or set it to native.'
  })
}

// How often the supervisor's copy of the router's counters is refreshed: ls, monit
// and a drain read it synchronously (supervisor.js queueStats, inFlightOf).
const STATS_MS = 250

class NativeRouter extends EventEmitter {
  /**
   * @param {object} options
   * @param {string} [options.socketPath] where workers attach (default: defaultSocketPath())
   * @param {import('pino').Logger} options.logger
   * @param {object} [options.limits] the config's limits (src/config/schema.js)
   * @param {object[]} [options.tls] the config's tls entries (router-tls.js)
   * @param {string} [options.binary] the router binary (default: what router-binary.js finds)
   */
  constructor ({ socketPath = defaultSocketPath(), logger, limits, tls = [], binary } = {}) {
    super()
    this.tls = tls
    this.routerTls = null
    this.tlsSnapshot = null
    this.tlsFailures = 0 // failures seen by the last refresh
    this.tlsLast = null
    this.tlsTimer = null
    this.socketPath = socketPath
    this.logger = logger
    this.limits = limits || null
    this.binary = binary
    this.tokens = new Map() // app name -> its queue's token
    this.queueUrls = new Map() // app name -> its queue's prefixes as bound
    this.configUrls = new Map() // app name -> Map(a url of its config -> the prefix bound for it)
    this.redirectPorts = new Map() // app name -> its redirect_http port
    this.proc = null
    this.snapshot = { connections: 0, queues: new Map() }
    this.usage = new ProcessUsage() // the router process's CPU and memory (ls, monit)
    this.timer = null
    this.closing = false
  }

  get backend () { return 'hub' }

  get tracksWorkers () { return true }

  async start () {
    // certificates are checked (and a bad one named) before anything starts
    // (required here: a standalone process, which only asks wantsNativeRouter and
    // routerLimits, reads no config certificates)
    const { RouterTls } = require('./router-tls')
    const routerTls = new RouterTls({ log: this.logger.child({ component: 'router' }), send: (entries) => this.proc.call('setTls', { entries }) })
    try {
      routerTls.set(configTls(this.tls))
    } catch (err) {
      routerTls.close()
      throw err
    }
    this.routerTls = routerTls
    const proc = new RouterProcess({ binary: this.binary || findRouter(), logger: this.logger.child({ component: 'router' }) })
    this.proc = proc
    proc.on('event', (name, fields) => this.onEvent(name, fields))
    proc.on('exit', (info) => {
      if (this.closing) return
      this.emit('error', new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: `the router process exited (${info.signal || `code ${info.code}`})` }))
    })
    await proc.spawn()
    this.usage.started(proc.child.pid)
    await proc.call('start', { workerSocket: this.socketPath, workersMayCreate: false, limits: routerLimits(this.limits) })
    // what a certificate that asks for a client's without a ca checks it against, as node
    await proc.call('setDefaultCa', { ca: require('../tls-default-ca').defaultCaPem() })
    if (routerTls.size > 0) await routerTls.push()
    this.timer = setInterval(() => this.refresh(), STATS_MS)
    this.timer.unref()
    // (the start log's first record named this router already: supervisor.js chooseRouter)
    this.logger.info({ event: 'router', router: 'native', pid: proc.child.pid },
      `the native router runs as pid ${proc.child.pid}`)
  }

  onEvent (name, fields) {
    if (name === 'attach') {
      // the queue's prefixes as its first worker bound them (an app without urls):
      // the supervisor announces them when the worker is ready
      const q = this.snapshot.queues.get(fields.queue)
      if (q !== undefined && Array.isArray(fields.urls)) q.urls = fields.urls.slice()
      this.emit('attach', { queue: fields.queue, pid: fields.pid, workerId: fields.workerId })
    } else if (name === 'detach') {
      // a drain waits for a detached worker to have nothing in flight (inFlightOf): the
      // counters it reads are taken after the detach
      const info = { queue: fields.queue, pid: fields.pid, workerId: fields.workerId, reason: fields.reason }
      this.refresh().then(() => this.emit('detach', info))
    }
  }

  async refresh () {
    if (this.proc === null || this.closing) return
    try {
      const [s, t] = await Promise.all([this.proc.call('stats'), this.proc.call('tlsStats')])
      this.snapshot = { connections: s.connections, queues: new Map(s.queues.map((q) => [q.name, q])) }
      this.tlsCounted(t)
      if (this.usage.due()) this.usage.add(await this.proc.call('processStats'))
    } catch {}
  }

  /**
   * refresh() for a status read (ls, show, /metrics): the counters as they are now; a router that does not answer within ASK_TIMEOUT_MS
   * leaves the last ones.
   */
  async refreshNow () {
    let timer
    const late = new Promise((resolve) => { timer = setTimeout(resolve, ASK_TIMEOUT_MS) })
    try {
      await Promise.race([this.refresh(), late])
    } finally {
      clearTimeout(timer)
    }
  }

  // A failed handshake never reaches an app; the supervisor's records count them, one
  // record per burst (at most one per TLS_RECORD_MS), so that clients, who control how many
  // there are, cannot flood the log.
  tlsCounted (t) {
    this.tlsSnapshot = { handshakes: t.handshakes, failures: t.failures, byReason: t.byReason }
    this.tlsLast = t.last
    if (t.failures <= this.tlsFailures || this.tlsTimer !== null) return
    const from = this.tlsFailures
    this.tlsTimer = setTimeout(() => {
      this.tlsTimer = null
      const now = this.tlsSnapshot
      const n = now.failures - from
      const last = this.tlsLast || { port: null, reason: null }
      this.tlsFailures = now.failures
      this.logger.info({ event: 'tls-failures', count: n, total: now.failures, byReason: now.byReason, last },
        `${n} TLS handshake${n === 1 ? '' : 's'} failed (last on port ${last.port}: ${last.reason}); no app saw them`)
    }, TLS_RECORD_MS)
    this.tlsTimer.unref()
  }

  // Each app's queue admits only workers with its token (src/worker-interface.js).
  // redirectHttp: the app's redirect_http port (http -> https, router conn/secure.go).
  async createQueue (app, { urls = [], redirectHttp = null, cache = true } = {}) {
    const token = crypto.randomBytes(24).toString('base64url')
    this.tokens.set(app, token)
    let info
    try {
      info = await this.proc.call('createQueue', { name: app, urls, token, cache })
    } catch (err) {
      throw withPortOwner(err)
    }
    this.queueUrls.set(app, info.urls)
    // the config's urls are distinct: the router binds them in order
    this.configUrls.set(app, new Map(urls.map((u, i) => [u, info.urls[i]])))
    this.redirectPorts.set(app, redirectHttp ?? null)
    this.snapshot.queues.set(app, { name: app, urls: info.urls, waiting: 0, inFlight: 0, served: 0, workers: [], cache: null })
    if (redirectHttp !== null && redirectHttp !== undefined) {
      const { prefixes } = await this.proc.call('addRedirect', { name: app, port: redirectHttp, urls: info.urls })
      this.logger.info({ event: 'redirect', app, from: prefixes }, `${prefixes.join(' ')} redirect to https (308)`)
    }
    return info
  }

  /**
   * A config edit (`httpsys reload`): the router binds the new
   * prefixes first (a conflict or a port in use throws and changes nothing), then lets
   * go of the ones the config dropped, in one command (router urls.go).
   * @returns {Promise<{ urls: string[] }>} the queue's prefixes now
   */
  async setUrls (app, urls, { redirectHttp = null } = {}) {
    const mapped = this.configUrls.get(app) || new Map()
    const add = urls.filter((u) => !mapped.has(u))
    const keep = new Map([...mapped].filter(([u]) => urls.includes(u)))
    const kept = new Set(keep.values())
    // an app given urls for the first time lets go of what its listen() registered
    const dropped = mapped.size === 0 && urls.length > 0 ? (await this.proc.call('queueStats', { name: app })).urls : [...mapped.values()]
    const redirect = redirectHttp ?? null
    const res = await this.proc.call('setUrls', {
      name: app,
      add,
      remove: dropped.filter((p) => !kept.has(p)),
      redirectHttp: redirect,
      redirectChanged: redirect !== (this.redirectPorts.get(app) ?? null)
    }).catch((err) => { throw withPortOwner(err) })
    add.forEach((u, i) => keep.set(u, res.added[i]))
    this.configUrls.set(app, keep)
    this.queueUrls.set(app, res.urls)
    this.redirectPorts.set(app, redirect)
    const q = this.snapshot.queues.get(app)
    if (q !== undefined) q.urls = res.urls.slice()
    if (res.redirects && res.redirects.length > 0) {
      this.logger.info({ event: 'redirect', app, from: res.redirects }, `${res.redirects.join(' ')} redirect to https (308)`)
    }
    return { urls: res.urls }
  }

  /** The app leaves the config: its prefixes go first, so no new request reaches it. */
  unroute (app) {
    if (this.proc === null || this.closing) return
    this.proc.call('unroute', { name: app }).catch((err) => {
      this.logger.warn({ err, app }, `the router did not unroute ${app}: ${err.message}`)
    })
  }

  async deleteQueue (app) {
    this.tokens.delete(app)
    this.queueUrls.delete(app)
    this.configUrls.delete(app)
    this.redirectPorts.delete(app)
    await this.proc.call('deleteQueue', { name: app })
    this.snapshot.queues.delete(app)
  }

  /** Whether the app can serve again by itself (false: its requests get 503 at once). */
  setAvailable (app, available) {
    if (this.proc === null || this.closing) return
    this.proc.call('setQueueAvailable', { name: app, available }).catch((err) => {
      this.logger.warn({ err, app }, `the router did not take the availability of ${app}: ${err.message}`)
    })
  }

  /** The last counters of the app's queue (refreshed every STATS_MS), or null. */
  stats (app) {
    return this.snapshot.queues.get(app) || null
  }

  /** Client connections open on the router's ports (metrics, ls). */
  connections () {
    return this.proc === null ? null : this.snapshot.connections
  }

  /**
   * The router's own process, its row in ls and monit (issue 25): { pid, cpu (% of one
   * core over the last minute), cpuMicros (since it started), memory (RSS bytes),
   * uptimeMs, goroutines }, or null.
   */
  async processStats () {
    if (this.proc === null || this.closing) return null
    // a sample refreshNow() just took for the same status read is fresh enough
    if (this.usage.takenWithin(STATS_MS)) return this.usage.view(this.proc)
    // a router that does not answer in time shows its last sample: a busy router never
    // makes ls slow (app-stats.js does the same for a worker)
    let timer
    const late = new Promise((resolve) => { timer = setTimeout(resolve, ASK_TIMEOUT_MS, null) })
    try {
      const fresh = await Promise.race([this.proc.call('processStats'), late])
      if (fresh !== null) this.usage.add(fresh)
    } catch {} finally {
      clearTimeout(timer)
    }
    return this.usage.view(this.proc)
  }

  /** TLS handshakes done and failed since start (refreshed every STATS_MS), or null. */
  tlsStats () {
    return this.tlsSnapshot
  }

  /** `httpsys reload`: re-read the config's certificate files (a failing one keeps the old). */
  reloadTls () {
    return this.routerTls === null ? [] : this.routerTls.reload()
  }

  workerEnv (app) {
    return workerAttachEnv(this, app)
  }

  async close () {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
    if (this.tlsTimer !== null) clearTimeout(this.tlsTimer)
    this.tlsTimer = null
    if (this.routerTls !== null) this.routerTls.close()
    const proc = this.proc
    if (proc === null || this.closing) return
    this.closing = true
    try {
      await proc.call('close')
    } catch {}
    await proc.stop()
  }
}

/**
 * The config's limits as the router's start command takes them
 * (router-config.js configLimits), with no body limit said as 0 (JSON has no Infinity).
 */
function routerLimits (limits) {
  const l = configLimits(limits)
  if (l.maxBodySize === Infinity) l.maxBodySize = 0
  for (const k of Object.keys(l)) if (l[k] === undefined) delete l[k]
  return { ...DEFAULT_LIMITS, ...l }
}

const TLS_RECORD_MS = 10000
const ASK_TIMEOUT_MS = 500

// What the config does not set: one table, the config schema's defaults under the
// router's names, plus the limits the config has no key for. The router's own defaults
// (`httpsys-router -defaults`) are held to these by test/unit/supervisor/native-router.test.js.
const ROUTER_ONLY_LIMITS = { maxHeaderSize: 16384, closeTimeout: 5000, finGrace: 100 }
const DEFAULT_LIMITS = Object.freeze({ ...ROUTER_ONLY_LIMITS, ...configLimits(LIMIT_DEFAULTS) })

module.exports = { NativeRouter, routerLimits, wantsNativeRouter, ROUTER_ENV, DEFAULT_LIMITS }
