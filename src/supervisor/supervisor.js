'use strict'

// The supervisor of `httpsys start`: owns the hub (the router, in this process), creates
// one queue per app before any app runs (a port in use fails the start, not a worker),
// runs `instances` Workers per app, and stops everything in order: workers first (they
// finish in-flight requests), then the hub.

const { EventEmitter } = require('node:events')
const os = require('node:os')
const path = require('node:path')
const { Worker } = require('./worker')

const kStopping = Symbol('httpsys.supervisor.stopping')
// the hub bounds its own close (closeTimeout, 5 s); this only guards against a hang
const HUB_CLOSE_TIMEOUT_MS = 7000

class Supervisor extends EventEmitter {
  /**
   * @param {object} config a validated config (src/config)
   * @param {object} options
   * @param {import('pino').Logger} options.logger
   * @param {string} [options.logLevel] passed to workers as HTTPSYS_LOG_LEVEL
   * @param {string} [options.socketPath] the hub's socket (default: per user and run)
   * @param {Function} [options.Hub] the router class (default: src/hub; tests swap it)
   * @param {string} [options.preload] the workers' --require module (default: src/register.js)
   */
  constructor (config, { logger, logLevel, socketPath = hubSocketPath(), Hub, preload }) {
    super()
    this.config = config
    this.logger = logger
    this.socketPath = socketPath
    this.hub = null
    this.workers = []
    this.logLevel = logLevel
    this.Hub = Hub
    this.preload = preload
    this[kStopping] = null
  }

  /** Start the hub, create every queue, then spawn the workers. Rejects before spawning anything. */
  async start () {
    // required here, not at the top: `httpsys --help` and config checks never load the router
    const Hub = this.Hub || require('../hub').Hub
    const hub = new Hub({ socketPath: this.socketPath, logger: this.logger.child({ component: 'hub' }) })
    this.hub = hub
    try {
      await hub.start()
      for (const app of this.config.apps) {
        await hub.createQueue(app.name, { urls: app.urls })
      }
    } catch (err) {
      this.hub = null
      await closeQuietly(hub)
      throw err
    }
    hub.on('attach', ({ pid }) => this.findWorker(pid)?.markReady(pid))
    hub.on('detach', ({ queue, pid, reason }) => {
      this.logger.debug({ event: 'detach', queue, pid, reason }, `pid ${pid} detached from queue ${queue}`)
    })
    hub.on('error', (err) => {
      this.logger.fatal({ err }, `the hub failed: ${err.message}`)
      this.emit('error', err)
    })

    const env = this.logLevel ? { HTTPSYS_LOG_LEVEL: this.logLevel } : {}
    for (const app of this.config.apps) {
      const where = app.urls.length ? app.urls.join(' ') : 'the prefix its listen() asks for'
      this.logger.info({ event: 'app', app: app.name, urls: app.urls, instances: app.instances },
        `${app.instances} instance${app.instances === 1 ? '' : 's'} on ${where}`)
      for (let inst = 0; inst < app.instances; inst++) {
        const worker = new Worker(app, inst, { hubPath: this.socketPath, logger: this.logger, env, preload: this.preload })
        for (const event of ['spawn', 'ready', 'exit']) {
          worker.on(event, (info) => this.emit(event, { app: app.name, inst, ...(typeof info === 'object' ? info : { pid: info }) }))
        }
        this.workers.push(worker)
        worker.start()
      }
    }
    return this
  }

  findWorker (pid) {
    return this.workers.find((w) => w.pid === pid)
  }

  /** [{ app, inst, pid, state }] of every instance. */
  list () {
    return this.workers.map((w) => ({ app: w.app.name, inst: w.inst, pid: w.pid, state: w.state }))
  }

  /**
   * Graceful stop of every worker (IPC shutdown, SIGKILL after kill_timeout), then the hub.
   * Idempotent: every call returns the same promise.
   */
  stop () {
    if (!this[kStopping]) {
      this[kStopping] = this.shutdown((w) => w.stop())
    }
    return this[kStopping]
  }

  /** Force: SIGKILL every worker's process group now, then close the hub. */
  kill () {
    this.logger.warn({ event: 'force' }, 'forcing: killing every app now')
    if (!this[kStopping]) {
      this[kStopping] = this.shutdown((w) => w.kill())
    } else {
      for (const w of this.workers) w.kill()
    }
    return this[kStopping]
  }

  async shutdown (stopWorker) {
    const startedAt = Date.now()
    this.logger.info({ event: 'stop' }, 'stopping')
    await Promise.all(this.workers.map(stopWorker))
    if (this.hub) {
      const hub = this.hub
      this.hub = null
      const closed = await withTimeout(closeQuietly(hub, this.logger), HUB_CLOSE_TIMEOUT_MS)
      if (!closed) this.logger.warn({ event: 'hub-close-timeout' }, `the hub did not close within ${HUB_CLOSE_TIMEOUT_MS} ms`)
    }
    const ms = Date.now() - startedAt
    this.logger.info({ event: 'stopped', ms }, `stopped in ${ms} ms`)
    this.emit('stopped')
  }
}

/** A per-user, per-run path, so two users or two runs never share a hub. */
function hubSocketPath (pid = process.pid) {
  const user = typeof process.getuid === 'function'
    ? process.getuid()
    : os.userInfo().username.replace(/[^A-Za-z0-9_-]/g, '_')
  const name = `httpsys-${user}-${pid}`
  return process.platform === 'win32' ? `\\\\.\\pipe\\${name}` : path.join(os.tmpdir(), `${name}.sock`)
}

async function closeQuietly (hub, logger) {
  try {
    await hub.close()
  } catch (err) {
    if (logger) logger.warn({ err }, `closing the hub failed: ${err.message}`)
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

module.exports = { Supervisor, hubSocketPath }
