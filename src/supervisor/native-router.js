'use strict'

// The router the supervisor controls when HTTPSYS_ROUTER=native (experimental, issue
// 25): the Go router (router/) in a process of its own, using every core, controlled
// over its stdin and stdout (router-process.js, docs/router-control.md). The same
// interface as hub-router.js (see its header); workers attach to it exactly as to the
// hub, over the same wire (docs/wire-protocol.md).
//
// Not served yet (later steps of issue 25): TLS and HTTP/2, the output cache,
// redirect_http, CONNECT tunnels on a standalone app's own port (a standalone app runs
// this router as its child: src/preload/standalone-native.js).

const crypto = require('node:crypto')
const { EventEmitter } = require('node:events')
const { codes } = require('../errors')
const { hubSocketPath, hubLimits, hubWorkerEnv } = require('./hub-router')
const { RouterProcess } = require('./router-process')
const { findPortOwner } = require('../hub/port-owner')

// The switch: HTTPSYS_ROUTER=native runs the hub's apps on this router instead.
const ROUTER_ENV = 'HTTPSYS_ROUTER'

/** @returns {boolean} whether the environment asks for the native router */
function wantsNativeRouter (env = process.env) {
  return env[ROUTER_ENV] === 'native'
}

// How often the supervisor's copy of the router's counters is refreshed: ls, monit
// and a drain read it synchronously (supervisor.js queueStats, inFlightOf).
const STATS_MS = 250

class NativeRouter extends EventEmitter {
  /**
   * @param {object} options
   * @param {string} [options.socketPath] where workers attach (default: hubSocketPath())
   * @param {import('pino').Logger} options.logger
   * @param {object} [options.limits] the config's limits (src/config/schema.js)
   * @param {object[]} [options.tls] the config's tls entries (none is served yet)
   * @param {string} [options.binary] the router binary (default: router/bin/httpsys-router)
   */
  constructor ({ socketPath = hubSocketPath(), logger, limits, tls = [], binary } = {}) {
    super()
    if (tls.length > 0) {
      throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
        key: 'tls',
        reason: 'the native router (HTTPSYS_ROUTER=native) does not serve TLS yet',
        fix: 'Unset HTTPSYS_ROUTER to run on the hub.'
      })
    }
    this.socketPath = socketPath
    this.logger = logger
    this.limits = limits || null
    this.binary = binary
    this.tokens = new Map() // app name -> its queue's token
    this.queueUrls = new Map() // app name -> its queue's prefixes as bound
    this.proc = null
    this.snapshot = { connections: 0, queues: new Map() }
    this.timer = null
    this.closing = false
  }

  get backend () { return 'hub' }

  get tracksWorkers () { return true }

  async start () {
    const proc = new RouterProcess({ binary: this.binary, logger: this.logger.child({ component: 'router' }) })
    this.proc = proc
    proc.on('event', (name, fields) => this.onEvent(name, fields))
    proc.on('exit', (info) => {
      if (this.closing) return
      this.emit('error', new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: `the router process exited (${info.signal || `code ${info.code}`})` }))
    })
    await proc.spawn()
    await proc.call('start', { workerSocket: this.socketPath, workersMayCreate: false, limits: routerLimits(this.limits) })
    this.timer = setInterval(() => this.refresh(), STATS_MS)
    this.timer.unref()
    this.logger.info({ event: 'router', router: 'native', pid: proc.child.pid },
      `router: the native router (${ROUTER_ENV}=native, experimental; pid ${proc.child.pid})`)
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
      const s = await this.proc.call('stats')
      this.snapshot = { connections: s.connections, queues: new Map(s.queues.map((q) => [q.name, q])) }
    } catch {}
  }

  // Each app's queue admits only workers with its token (src/worker-interface.js).
  async createQueue (app, { urls = [], redirectHttp = null, cache = true } = {}) {
    if (redirectHttp !== null && redirectHttp !== undefined) {
      throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
        key: 'redirect_http',
        app,
        reason: 'the native router (HTTPSYS_ROUTER=native) does not redirect to https yet',
        fix: 'Unset HTTPSYS_ROUTER to run on the hub.'
      })
    }
    const token = crypto.randomBytes(24).toString('base64url')
    this.tokens.set(app, token)
    let info
    try {
      info = await this.proc.call('createQueue', { name: app, urls, token, cache })
    } catch (err) {
      // who holds the port: only this process can look (/proc), so it is named here
      if (err.code === 'ERR_HTTPSYS_PORT_IN_USE' && err.owner === undefined) {
        const owner = findPortOwner(err.port)
        if (owner !== undefined) throw new codes.ERR_HTTPSYS_PORT_IN_USE({ port: err.port, host: err.host, owner })
      }
      throw err
    }
    this.queueUrls.set(app, info.urls)
    this.snapshot.queues.set(app, { name: app, urls: info.urls, waiting: 0, inFlight: 0, served: 0, workers: [], cache: null })
    return info
  }

  async deleteQueue (app) {
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

  /** TLS handshakes: none yet (the native router serves no TLS so far). */
  tlsStats () {
    return null
  }

  reloadTls () {
    return []
  }

  workerEnv (app) {
    return hubWorkerEnv(this, app)
  }

  async close () {
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
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
 * The config's limits as the router's start command takes them: the hub's options
 * (hub-router.js hubLimits), with no body limit said as 0 (JSON has no Infinity).
 */
function routerLimits (limits) {
  const l = hubLimits(limits)
  if (l.maxBodySize === Infinity) l.maxBodySize = 0
  delete l.cacheSize
  delete l.cacheMaxResponse
  for (const k of Object.keys(l)) if (l[k] === undefined) delete l[k]
  return { ...DEFAULT_LIMITS, ...l }
}

// The JS hub's defaults (src/hub/hub.js), for what the config does not set.
const DEFAULT_LIMITS = {
  maxHeaderSize: 16384,
  maxBodySize: 100 * 1024 * 1024,
  queueLength: 1000,
  queueTimeout: 120000,
  keepAliveTimeout: 5000,
  headersTimeout: 60000,
  bodyTimeout: 120000,
  drainTimeout: 120000,
  maxConnections: 0,
  closeTimeout: 5000,
  finGrace: 100
}

module.exports = { NativeRouter, routerLimits, wantsNativeRouter, ROUTER_ENV }
