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
//   setAvailable(app, bool)  false: the app cannot serve again without a command
//   stats(app)             { waiting, workers: [{ pid, served, inFlight }] } or null
//   connections()          client connections open (optional; HTTP.SYS does not say)
//   workerEnv(app)         what a worker needs to find its queue (undefined: remove)
//   close()
//   events: 'attach' { queue, pid }, 'detach' { queue, pid, reason }, 'error'

const crypto = require('node:crypto')
const { EventEmitter } = require('node:events')
const localSocket = require('../local-socket')
const { ENV } = require('../worker-interface')

class HubRouter extends EventEmitter {
  /**
   * @param {object} options
   * @param {string} [options.socketPath] default: per user and run (hubSocketPath())
   * @param {import('pino').Logger} options.logger
   * @param {Function} [options.Hub] the router class (default: src/hub; tests swap it)
   * @param {object} [options.limits] the config's limits (src/config/schema.js)
   */
  constructor ({ socketPath = hubSocketPath(), logger, Hub, limits } = {}) {
    super()
    this.socketPath = socketPath
    this.logger = logger
    this.Hub = Hub
    this.limits = limits || null
    this.tokens = new Map() // app name -> its queue's token
    this.hub = null
  }

  get backend () { return 'hub' }

  get tracksWorkers () { return true }

  async start () {
    // required here, not at the top: `httpsys --help` and config checks never load the router
    const Hub = this.Hub || require('../hub').Hub
    // workersMayCreate false: every queue is one of the config's apps, made here
    const hub = new Hub({ socketPath: this.socketPath, logger: this.logger.child({ component: 'hub' }), workersMayCreate: false, ...hubLimits(this.limits) })
    this.hub = hub
    hub.on('attach', (info) => this.emit('attach', info))
    hub.on('detach', (info) => this.emit('detach', info))
    hub.on('error', (err) => this.emit('error', err))
    await hub.start()
  }

  // Each app's queue admits only workers with its token (src/worker-interface.js).
  createQueue (app, { urls = [] } = {}) {
    const token = crypto.randomBytes(24).toString('base64url')
    this.tokens.set(app, token)
    return this.hub.createQueue(app, { urls, token })
  }

  deleteQueue (app) {
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
    // HTTPSYS_BACKEND set on purpose: an HTTPSYS_BACKEND=httpsys inherited from the
    // shell would otherwise send the worker past the hub
    return {
      [ENV.BACKEND]: 'hub',
      [ENV.HUB]: this.socketPath,
      [ENV.QUEUE]: app.name,
      [ENV.QUEUE_TOKEN]: this.tokens.get(app.name),
      [ENV.QUEUE_URLS]: undefined,
      [ENV.MAX_BODY_SIZE]: undefined
    }
  }

  async close () {
    const hub = this.hub
    this.hub = null
    if (hub !== null) await hub.close()
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
    maxConnections: limits.max_connections
  }
}

/** A per-user, per-run path, so two users or two runs never share a hub. */
function hubSocketPath (pid = process.pid) {
  return localSocket.socketPath(`httpsys-${localSocket.userTag()}-${pid}`)
}

module.exports = { HubRouter, hubSocketPath, hubLimits }
