'use strict'

// The router the supervisor controls on Windows with the httpsys backend: HTTP.SYS
// itself. The supervisor is the controller (docs/architecture.md 1): it creates one named
// request queue per app and registers the app's prefixes on it; workers open the queue
// by name (HTTP_CREATE_REQUEST_QUEUE_FLAG_OPEN_EXISTING) and never need a URL
// reservation of their own. Requests wait in the kernel queue while a worker restarts.
//
// Same surface as native-router.js. HTTP.SYS says nothing when a process opens or leaves
// a queue, so there are no 'attach'/'detach' events and no per-pid stats: readiness
// comes from the preload's MSG.READY message instead (worker-interface.js).
//
// Queue names are global to the machine: two supervisors running an app called "web"
// must not collide, so a queue is named after the run (httpsys-<pid>-<app>).

const { EventEmitter } = require('node:events')
const { codes } = require('../errors')
const { readPem } = require('../tls-material')
const { ENV, cacheEnv, readWorkerEnv } = require('../worker-interface')
const { authEnv } = require('../windows-auth')

class HttpsysRouter extends EventEmitter {
  /**
   * @param {object} options
   * @param {import('pino').Logger} options.logger
   * @param {object} [options.native] the backend (default: src/httpsys;
   *   tests pass createBackend() over a fake addon)
   * @param {number|string} [options.runId=process.pid] part of every queue name
   * @param {object} [options.limits] the config's limits (src/config/schema.js)
   * @param {boolean} [options.setup] under `httpsys start --setup` (default: ENV.SETUP in
   *   this process's environment, which src/cli/start.js sets): workers bind their app's
   *   own certificate where a port has none
   * @param {object[]} [options.tls] the config's tls entries: those with requestCert go to
   *   the workers (HTTPSYS_CLIENT_CERTS), which check the certificates HTTP.SYS hands over
   * @throws ERR_HTTPSYS_TLS_CERT when such an entry's ca cannot be read
   */
  constructor ({ logger, native, runId = process.pid, limits, setup = readWorkerEnv().setup, tls = [] } = {}) {
    super()
    this.logger = logger
    this.native = native || null
    this.runId = runId
    this.limits = limits || null
    this.setup = setup
    this.clientCerts = clientCertEntries(tls || [])
    this.queues = new Map() // app name -> the controller's queue
    this.configUrls = new Map() // app name -> the prefixes its config gives, as registered
    this.active = new Map() // app name -> the state its queue was last given
    this.wine = null
  }

  get backend () { return 'httpsys' }

  get tracksWorkers () { return false }

  async start () {
    if (this.native === null) this.native = require('../httpsys')
    const { wine, features } = this.native.platform()
    this.wine = wine || null
    this.logger.debug({ event: 'httpsys', wine, features }, wine ? `HTTP.SYS under Wine ${wine}` : 'HTTP.SYS')
    if (this.wine) {
      // Wine ignores queue names (docs/wine.md 2.5): a worker opening the controller's queue
      // would get an empty one. There each worker registers its app's prefixes on a
      // queue of its own instead, so one instance per app, and no queueing while a
      // worker restarts. Never on Windows.
      this.logger.warn({ event: 'httpsys', wine }, 'HTTP.SYS under Wine shares no queue between processes: each worker registers its own prefixes (one instance per app)')
    }
  }

  queueName (app) {
    return `httpsys-${this.runId}-${app}`
  }

  /**
   * @param {object} [options]
   * @param {string[]} [options.urls]
   * @param {object|null} [options.auth] the app's Windows authentication: HTTP.SYS's on
   *   each of the queue's URL groups before any worker runs
   * @throws ERR_HTTPSYS_URL_CONFLICT, ERR_HTTPSYS_ACCESS_DENIED (with the urlacl command),
   *   ERR_HTTPSYS_PORT_IN_USE, ERR_HTTPSYS_BAD_PREFIX, ERR_HTTPSYS_QUEUE_EXISTS, ERR_HTTPSYS_NATIVE_CALL
   */
  async createQueue (app, { urls = [], auth = null } = {}) {
    const name = this.queueName(app)
    if (this.queues.has(app)) throw new codes.ERR_HTTPSYS_QUEUE_EXISTS({ queue: name, app })
    let queue
    try {
      queue = this.wine
        ? { name, urls: urls.slice(), close () {} }
        : this.native.createQueue(name, { urls, app, auth, ...queueLimits(this.limits) })
    } catch (err) {
      throw withApp(err, app)
    }
    // created active (properties.js queueSetup sets HttpEnabledStateActive with the rest)
    this.active.set(app, true)
    this.queues.set(app, queue)
    this.configUrls.set(app, urls.slice())
    this.logger.debug({ event: 'queue', app, queue: name, urls: queue.urls }, `request queue ${name} holds ${queue.urls.join(' ')}`)
    return { name, urls: queue.urls }
  }

  async deleteQueue (app) {
    const queue = this.queues.get(app)
    if (queue === undefined) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: this.queueName(app) })
    this.queues.delete(app)
    this.active.delete(app)
    this.configUrls.delete(app)
    queue.close()
  }

  /**
   * A config edit (`httpsys reload`): the queue's URL group takes the new prefixes
   * first (one that fails undoes the ones added and throws: nothing changed), then
   * drops the old ones; HTTP.SYS finishes the requests it already queued. Under Wine
   * each worker registers its app's prefixes itself, so the reload's new processes do.
   * @returns {Promise<{ urls: string[] }>}
   */
  async setUrls (app, urls) {
    const queue = this.queues.get(app)
    if (queue === undefined) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: this.queueName(app) })
    const old = this.configUrls.get(app) || []
    if (this.wine) {
      queue.urls = urls.slice()
    } else {
      const added = []
      try {
        for (const url of urls.filter((u) => !old.includes(u))) {
          queue.addUrl(url)
          added.push(url)
        }
      } catch (err) {
        for (const url of added) queue.removeUrl(url)
        throw withApp(err, app)
      }
      for (const url of old.filter((u) => !urls.includes(u))) queue.removeUrl(url)
    }
    this.configUrls.set(app, urls.slice())
    return { urls: queue.urls }
  }

  /** The app leaves the config: its prefixes go first, so no new request reaches it. */
  unroute (app) {
    const queue = this.queues.get(app)
    if (queue === undefined || this.wine) return
    for (const url of this.configUrls.get(app) || []) queue.removeUrl(url)
    this.configUrls.set(app, [])
  }

  /**
   * Whether the app can serve again by itself. While it cannot (errored, exited for
   * good, stopped by command) its queue is turned off and HTTP.SYS answers its requests
   * 503 at once, as for a stopped IIS application pool; an instance starting again
   * turns it back on. Where HTTP.SYS cannot (Wine) the requests wait as before.
   */
  setAvailable (app, available) {
    const queue = this.queues.get(app)
    if (queue === undefined || typeof queue.setActive !== 'function' || this.active.get(app) === available) return
    const code = queue.setActive(available)
    if (code === 0) {
      this.active.set(app, available)
      return
    }
    // the queue keeps its state: off, its requests wait for nobody; on, they get 503
    this.logger.warn({ event: 'queue-state', app, queue: queue.name, code, available },
      `could not turn request queue ${queue.name} ${available ? 'on' : 'off'} (Win32 ${code}): ` +
      (available ? 'HTTP.SYS goes on answering its requests 503' : 'its requests wait in the queue until queue_timeout instead of getting 503 at once'))
  }

  /**
   * A config edit changed the app's auth: HTTP.SYS's authentication on its URL groups
   * follows before the new workers start (under Wine there is none to change).
   * @throws ERR_HTTPSYS_NATIVE_CALL when HTTP.SYS refuses it (the old setting stays)
   */
  setAuth (app, auth) {
    const queue = this.queues.get(app)
    if (queue === undefined || this.wine || typeof queue.setAuth !== 'function') return
    const code = queue.setAuth(auth)
    if (code !== 0) throw new codes.ERR_HTTPSYS_NATIVE_CALL({ syscall: 'HttpSetUrlGroupProperty(HttpServerAuthenticationProperty)', win32: code, queue: queue.name })
  }

  stats () {
    return null
  }

  /**
   * An instance of the app started or ended (a start, restart, reload or crash): what
   * HTTP.SYS cached of its responses goes, so a new build never answers with the old
   * one's (the hub does the same when a worker attaches or leaves).
   */
  instancesChanged (app) {
    const queue = this.queues.get(app)
    if (queue === undefined || typeof queue.flushCache !== 'function') return
    const code = queue.flushCache()
    if (code !== 0 && code !== 120) this.logger.debug({ app, queue: queue.name, code }, `could not empty the response cache of ${queue.name} (Win32 ${code})`)
  }

  workerEnv (app) {
    const queue = this.queues.get(app.name)
    return {
      [ENV.BACKEND]: 'httpsys',
      [ENV.QUEUE]: this.queueName(app.name),
      // what the controller registered: the worker's attach() registers none of these again
      [ENV.QUEUE_URLS]: (queue ? queue.urls : app.urls).join(','),
      [ENV.MAX_BODY_SIZE]: this.limits !== null && this.limits.max_body_size > 0 ? String(this.limits.max_body_size) : undefined,
      [ENV.HUB]: undefined,
      [ENV.QUEUE_TOKEN]: undefined,
      // the worker gives each response its time to live, HTTP.SYS caches it (HTTP_CACHE_POLICY)
      [ENV.CACHE]: cacheEnv(app.cache),
      // --setup: an https worker binds the certificate its app passes where its port has none
      [ENV.SETUP]: this.setup ? '1' : undefined,
      // a stopping worker lets the responses in the kernel finish until just before its kill
      [ENV.KILL_TIMEOUT]: app.kill_timeout > 0 ? String(app.kill_timeout) : undefined,
      [ENV.CLIENT_CERTS]: this.clientCerts.length > 0 ? JSON.stringify(this.clientCerts) : undefined,
      // the identity HTTP.SYS authenticated, the 401s, promote_server_vars (src/queue/auth-gate.js)
      [ENV.AUTH]: authEnv(app)
    }
  }

  async close () {
    const queues = [...this.queues.values()]
    this.queues.clear()
    for (const queue of queues) {
      try {
        queue.close()
      } catch (err) {
        this.logger.warn({ err, queue: queue.name }, `closing request queue ${queue.name} failed: ${err.message}`)
      }
    }
  }
}

function withApp (err, app) {
  if (err && typeof err === 'object' && err.app === undefined) err.app = app
  return err
}

/**
 * The config's limits as HTTP.SYS's queue and URL group properties: seconds for the
 * timers (HTTP_TIMEOUT_LIMIT_INFO), the queue length, the connection limit. The body
 * size limit is enforced by each worker (HTTP.SYS has none): see ENV.MAX_BODY_SIZE.
 */
function queueLimits (limits) {
  if (limits === null) return {}
  const s = (ms) => Math.ceil(ms / 1000)
  return {
    queueLength: limits.queue_length,
    // 0 (no limit) leaves the machine's setting, which has none by default
    maxConnections: limits.max_connections > 0 ? limits.max_connections : undefined,
    timeouts: {
      headerWait: s(limits.header_timeout),
      idleConnection: s(limits.idle_timeout),
      entityBody: s(limits.body_timeout),
      drainEntityBody: s(limits.body_timeout),
      requestQueue: s(limits.queue_timeout)
    }
  }
}

/**
 * The config's tls entries that ask clients for a certificate, as the workers take them
 * (HTTPSYS_CLIENT_CERTS): their ca read to PEM text here, once, so a worker needs no
 * access to the config's files.
 */
function clientCertEntries (entries) {
  const out = []
  for (const e of entries) {
    if (e.requestCert !== true) continue
    const one = { port: e.port, rejectUnauthorized: e.rejectUnauthorized !== false }
    if (e.host !== undefined) one.host = e.host
    if (e.ca !== undefined) one.ca = [].concat(readPem(e.ca, 'CA', { port: e.port, host: e.host }))
    out.push(one)
  }
  return out
}

module.exports = { HttpsysRouter, queueLimits }
