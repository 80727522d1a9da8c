'use strict'

// The router the supervisor controls when it runs the hub (every platform): the hub
// lives in this process, workers reach it over a Unix socket (a named pipe on Windows).
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

const crypto = require('node:crypto')
const net = require('node:net')
const { EventEmitter } = require('node:events')
const { codes } = require('../errors')
const localSocket = require('../local-socket')
const { ENV, cacheEnv } = require('../worker-interface')
const { authEnv } = require('../windows-auth')

class HubRouter extends EventEmitter {
  /**
   * @param {object} options
   * @param {string} [options.socketPath] default: per user and run (hubSocketPath())
   * @param {import('pino').Logger} options.logger
   * @param {Function} [options.Hub] the router class (default: src/hub; tests swap it)
   * @param {object} [options.limits] the config's limits (src/config/schema.js)
   * @param {object[]} [options.tls] the config's tls entries: the hub serves them on its
   *   https prefixes before any app attaches, and they win over an app's own certificate
   */
  constructor ({ socketPath = hubSocketPath(), logger, Hub, limits, tls = [] } = {}) {
    super()
    this.tls = tls
    this.tlsFailures = 0 // handshakes that failed since the last record
    this.tlsTimer = null
    this.tlsLast = null
    this.socketPath = socketPath
    this.logger = logger
    this.Hub = Hub
    this.limits = limits || null
    this.tokens = new Map() // app name -> its queue's token
    this.queueUrls = new Map() // app name -> its queue's prefixes as bound
    this.configUrls = new Map() // app name -> Map(a url of its config -> the prefix bound for it)
    this.redirectPorts = new Map() // app name -> its redirect_http port
    this.hub = null
  }

  get backend () { return 'hub' }

  get tracksWorkers () { return true }

  async start () {
    // required here, not at the top: `httpsys --help` and config checks never load the router
    const Hub = this.Hub || require('../hub').Hub
    // workersMayCreate false: every queue is one of the config's apps, made here
    const tls = hubTls(this.tls)
    // certificates are checked (and a bad one named) before anything listens
    const hub = new Hub({ socketPath: this.socketPath, logger: this.logger.child({ component: 'hub' }), workersMayCreate: false, tls, ...hubLimits(this.limits) })
    this.hub = hub
    hub.on('attach', (info) => this.emit('attach', info))
    hub.on('detach', (info) => this.emit('detach', info))
    hub.on('error', (err) => this.emit('error', err))
    hub.on('tlsError', (info) => this.tlsFailed(info))
    await hub.start()
  }

  // A failed handshake never reaches an app; the supervisor's records count them, one
  // record per burst (at most one per TLS_RECORD_MS), never one per client: clients
  // control how many there are.
  tlsFailed (info) {
    this.tlsFailures++
    this.tlsLast = info
    if (this.tlsTimer !== null) return
    this.tlsTimer = setTimeout(() => {
      this.tlsTimer = null
      const n = this.tlsFailures
      this.tlsFailures = 0
      const stats = this.tlsStats()
      const last = this.tlsLast
      this.logger.info({ event: 'tls-failures', count: n, total: stats && stats.failures, byReason: stats && stats.byReason, last },
        `${n} TLS handshake${n === 1 ? '' : 's'} failed (last on port ${last.port}: ${last.reason}); no app saw them`)
    }, TLS_RECORD_MS)
    this.tlsTimer.unref()
  }

  /** TLS handshakes done and failed since start (ls --json, metrics). */
  tlsStats () {
    return this.hub !== null && typeof this.hub.tlsStats === 'function' ? this.hub.tlsStats() : null
  }

  /** `httpsys reload`: re-read the config's certificate files (a failing one keeps the old). */
  reloadTls () {
    return this.hub !== null && typeof this.hub.reloadTls === 'function' ? this.hub.reloadTls() : []
  }

  // Each app's queue admits only workers with its token (src/worker-interface.js).
  // redirectHttp: the app's redirect_http port (http -> https, hub/redirect.js).
  // cache: false when the app's config turns the output cache off.
  async createQueue (app, { urls = [], redirectHttp = null, cache = true } = {}) {
    const token = crypto.randomBytes(24).toString('base64url')
    this.tokens.set(app, token)
    const info = await this.hub.createQueue(app, { urls, token, cache })
    this.queueUrls.set(app, info.urls)
    // the config's urls are distinct: the hub binds them in order
    this.configUrls.set(app, new Map(urls.map((u, i) => [u, info.urls[i]])))
    await this.redirect(app, redirectHttp, info.urls)
    return info
  }

  async redirect (app, port, urls) {
    this.redirectPorts.set(app, port ?? null)
    if (port === null || port === undefined) return
    const added = await this.hub.addRedirect(app, port, urls)
    this.logger.info({ event: 'redirect', app, from: added }, `${added.join(' ')} redirect to https (308)`)
  }

  /**
   * A config edit (`httpsys reload`): the queue takes its new prefixes first (a port in
   * use throws here and changes nothing), then lets go of the ones the config dropped;
   * requests in flight on those finish. An app given urls for the first time also lets
   * go of what its listen() registered. The workers need not change: they take requests
   * from the queue, whatever the prefix.
   * @returns {Promise<{ urls: string[] }>} the queue's prefixes now
   */
  async setUrls (app, urls, { redirectHttp = null } = {}) {
    const { parse } = require('../urlprefix')
    const mapped = this.configUrls.get(app) || new Map()
    const before = this.hub.queueStats(app).urls
    const keep = new Map([...mapped].filter(([u]) => urls.includes(u)))
    const add = urls.filter((u) => !mapped.has(u))
    if (add.length > 0) {
      const after = await this.hub.addUrls(app, add)
      // a fixed port's prefix is its canonical form; port 0 takes the next one bound
      const fixed = new Map(add.map((u) => [u, parse(u, { allowPortZero: true })]).filter(([, p]) => p.port !== 0).map(([u, p]) => [u, p.prefix]))
      const fresh = after.filter((p) => !before.includes(p) && ![...fixed.values()].includes(p))
      for (const u of add) keep.set(u, fixed.has(u) ? fixed.get(u) : fresh.shift())
    }
    const kept = new Set(keep.values())
    const dropped = mapped.size === 0 && urls.length > 0 ? before : [...mapped.values()]
    const drop = dropped.filter((p) => !kept.has(p))
    if (drop.length > 0) this.hub.removeUrls(app, drop)
    const bound = this.hub.queueStats(app).urls
    this.configUrls.set(app, keep)
    this.queueUrls.set(app, bound)
    if (add.length > 0 || drop.length > 0 || (redirectHttp ?? null) !== this.redirectPorts.get(app)) {
      this.hub.removeRedirects(app)
      await this.redirect(app, redirectHttp, bound)
    }
    return { urls: bound }
  }

  /** The app leaves the config: its prefixes go first, so no new request reaches it. */
  unroute (app) {
    if (this.hub !== null) this.hub.unbindQueue(app)
  }

  deleteQueue (app) {
    this.tokens.delete(app)
    this.queueUrls.delete(app)
    this.configUrls.delete(app)
    this.redirectPorts.delete(app)
    return this.hub.deleteQueue(app)
  }

  /** Whether the app can serve again by itself (false: its requests get 503 at once). */
  setAvailable (app, available) {
    if (this.hub !== null) this.hub.setQueueAvailable(app, available)
  }

  stats (app) {
    if (this.hub === null) return null
    try {
      return this.hub.queueStats(app)
    } catch {
      return null
    }
  }

  /** Client connections open on the hub's ports (metrics, ls). */
  connections () {
    return this.hub !== null && this.hub.conns ? this.hub.conns.size : null
  }

  workerEnv (app) {
    return hubWorkerEnv(this, app)
  }

  async close () {
    if (this.tlsTimer !== null) clearTimeout(this.tlsTimer)
    this.tlsTimer = null
    const hub = this.hub
    this.hub = null
    if (hub !== null) await hub.close()
  }
}

/**
 * What a worker needs to attach to a hub's queue (the JS hub, or the native router that
 * speaks the same wire).
 * @param {{ socketPath: string, tokens: Map<string, string>, queueUrls: Map<string, string[]> }} router
 * @param {object} app
 */
function hubWorkerEnv ({ socketPath, tokens, queueUrls }, app) {
  // HTTPSYS_BACKEND set on purpose: an HTTPSYS_BACKEND=httpsys inherited from the
  // shell would otherwise send the worker past the hub
  return {
    [ENV.BACKEND]: 'hub',
    [ENV.HUB]: socketPath,
    [ENV.QUEUE]: app.name,
    [ENV.QUEUE_TOKEN]: tokens.get(app.name),
    // the queue's prefixes as bound (port 0 resolved): the worker's listen() knows
    // its address before it has attached (src/queue/reserve.js); none for an app
    // without urls, whose first listen() decides
    [ENV.QUEUE_URLS]: (queueUrls.get(app.name) || []).join(',') || undefined,
    [ENV.MAX_BODY_SIZE]: undefined,
    [ENV.CACHE]: cacheEnv(app.cache),
    // a development identity, or the worker refuses to attach (src/queue/auth-gate.js)
    [ENV.AUTH]: authEnv(app)
  }
}

/** The config's limits (the same keys HTTP.SYS gets) as the hub's options. */
function hubLimits (limits) {
  if (limits === null) return {}
  return {
    queueLength: limits.queue_length,
    maxBodySize: limits.max_body_size === 0 ? Infinity : limits.max_body_size,
    headersTimeout: limits.header_timeout,
    keepAliveTimeout: limits.idle_timeout,
    bodyTimeout: limits.body_timeout,
    drainTimeout: limits.body_timeout,
    queueTimeout: limits.queue_timeout,
    maxConnections: limits.max_connections,
    cacheSize: limits.cache_size,
    cacheMaxResponse: limits.cache_max_response
  }
}

const TLS_RECORD_MS = 10000

/**
 * The config's tls entries as the hub takes them. Certificates by thumbprint live in a
 * Windows store the hub cannot read, and the hub picks certificates by port and SNI
 * host, not by local address: both are HTTP.SYS bindings (`httpsys cert`), so on the hub
 * they are config errors naming the key.
 * @throws ERR_HTTPSYS_CONFIG_INVALID
 */
function hubTls (entries) {
  return (entries || []).map((entry, i) => {
    if (entry.thumbprint !== undefined && entry.pfx === undefined && entry.cert === undefined) {
      throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
        key: `tls[${i}].thumbprint`,
        reason: 'names a certificate in the Windows certificate store, which the hub (the router on this platform) cannot read',
        fix: 'Give the certificate as files: cert and key (PEM), or pfx with passphrase.'
      })
    }
    if (entry.ip !== undefined && entry.ip !== '0.0.0.0' && entry.ip !== '::' && net.isIP(entry.ip)) {
      throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
        key: `tls[${i}].ip`,
        reason: `binds the certificate to the address ${entry.ip}; the hub chooses certificates by port and SNI host name only`,
        fix: 'Remove ip (the certificate then serves the whole port), or use host for a certificate by name.'
      })
    }
    const rest = { ...entry }
    delete rest.thumbprint
    delete rest.store
    delete rest.ip
    return rest
  })
}

/** A per-user, per-run path, so two users or two runs never share a hub. */
function hubSocketPath (pid = process.pid) {
  return localSocket.socketPath(`httpsys-${localSocket.userTag()}-${pid}`)
}

module.exports = { HubRouter, hubSocketPath, hubLimits, hubTls, hubWorkerEnv }
