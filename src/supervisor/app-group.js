'use strict'

// The instances of one app: starting them, the rolling reload (one instance at a time:
// the new process must be ready before the old one is drained, so capacity never drops
// below N, and a new process that fails leaves the old ones serving), hard restart,
// stop, and watch mode. Reloads never overlap: a reload asked for while one runs (a
// file saved again, `httpsys reload` typed twice) becomes exactly one follow-up. A config
// edit (`httpsys reload`, `scale`) gives the group its new settings (setApp) and its new
// number of instances (addInstances, removeInstances).

const { EventEmitter } = require('node:events')
const { Instance } = require('./instance')
const { AppWatcher } = require('./watcher')

class AppGroup extends EventEmitter {
  /**
   * @param {object} app a validated app
   * @param {object} options passed to each Instance (routerEnv, tracksWorkers, logger, env, preload, inFlight)
   * @param {string[]} [options.logDirs] directories watch mode ignores
   */
  constructor (app, options) {
    super()
    this.app = app
    this.options = options
    this.logger = options.logger
    this.logDirs = options.logDirs || []
    this.watching = app.watch.length > 0
    this.instances = []
    this.addInstances(app.instances)
    this.reloading = null
    this.followUp = null
    this.followUpReason = null
    this.stopped = false
    this.watcher = null
  }

  get name () {
    return this.app.name
  }

  /** Starts every instance, and the watcher in watch mode. */
  async start () {
    this.stopped = false
    for (const instance of this.instances) instance.start()
    await this.startWatcher()
  }

  async startWatcher () {
    if (this.watching && this.watcher === null) {
      this.watcher = new AppWatcher(this.app, {
        logDirs: this.logDirs,
        logger: this.logger,
        onChange: (files) => this.onFilesChanged(files)
      })
      await this.watcher.start()
    }
  }

  onFilesChanged (files) {
    if (this.stopped) return
    const shown = files.slice(0, 5).join(', ') + (files.length > 5 ? ` and ${files.length - 5} more` : '')
    this.logger.info({ event: 'watch', app: this.name, files: files.slice(0, 20), count: files.length }, `changed: ${shown}; reloading`)
    this.reload('watch')
  }

  /**
   * The app's new settings (a config edit): each instance's next process is started with
   * them; the ones running keep theirs until a reload or restart replaces them. A change
   * of watch settings restarts the watcher.
   * @param {object} app the validated app (same name)
   * @param {object} [routerEnv] the router's workerEnv(app), when its queue changed
   */
  async setApp (app, routerEnv = this.options.routerEnv) {
    const rewatch = JSON.stringify([this.app.watch, this.app.ignore_watch, this.app.watch_delay]) !==
      JSON.stringify([app.watch, app.ignore_watch, app.watch_delay])
    this.app = app
    this.options = { ...this.options, routerEnv }
    this.watching = app.watch.length > 0
    for (const instance of this.instances) instance.setApp(app, { routerEnv, watching: this.watching })
    if (rewatch) {
      await this.closeWatcher()
      if (!this.stopped) await this.startWatcher()
    }
  }

  /**
   * Adds instances up to `count` (`scale`, a config's instances raised), not started.
   * @returns {Instance[]} the new ones
   */
  addInstances (count) {
    const added = []
    for (let inst = this.instances.length; inst < count; inst++) {
      const instance = new Instance(this.app, inst, { ...this.options, watching: this.watching })
      this.instances.push(instance)
      added.push(instance)
    }
    return added
  }

  /**
   * Takes the instances past `count` out (the highest numbers first) and stops them
   * gracefully: each is drained, so the requests it holds finish.
   * @returns {Promise<Instance[]>} the ones removed, once stopped
   */
  async removeInstances (count) {
    const removed = this.instances.splice(Math.max(1, count))
    await Promise.all(removed.map((i) => i.stop()))
    return removed
  }

  /**
   * Rolling reload of every instance (or of `only`, a config edit's instances that were
   * running before it). While one runs, further calls share a single follow-up reload.
   * @param {string} [reason='command']
   * @param {Instance[]} [only]
   * @returns {Promise<{ ok: boolean, ms: number, instances: object[], reason?: string }>}
   */
  reload (reason = 'command', only) {
    if (this.reloading === null) {
      this.reloading = this.rollingReload(reason, only).finally(() => { this.reloading = null })
      return this.reloading
    }
    this.followUpReason = reason
    if (this.followUp === null) {
      this.logger.info({ event: 'reload:queued', app: this.name, reason }, 'a reload is running; one more will follow it')
      this.followUp = this.reloading.then(() => {
        this.followUp = null
        return this.reload(this.followUpReason)
      })
    }
    return this.followUp
  }

  async rollingReload (reason, only = this.instances) {
    const t0 = Date.now()
    const instances = only.filter((i) => this.instances.includes(i))
    if (this.stopped) {
      // worded to follow "a new process" (`httpsys reload` reports it so)
      const why = `was not started: ${this.name} is stopped (\`httpsys restart ${this.name}\` starts it)`
      this.logger.warn({ event: 'reload:failed', app: this.name, reason, ms: 0, stopped: true }, `not reloading: ${this.name} is stopped`)
      return { ok: false, ms: 0, instances: [], reason: why }
    }
    this.logger.info({ event: 'reload:start', app: this.name, reason, instances: instances.length }, `reloading ${instances.length} instance(s) (${reason})`)
    const results = []
    for (const instance of instances) {
      if (this.stopped) break
      // taken out by a scale down meanwhile
      if (!this.instances.includes(instance)) continue
      const result = await instance.reload()
      results.push({ inst: instance.inst, ...result })
      // a new process that fails next to a serving old one ends the reload: the old
      // ones keep serving; with nothing serving there is nothing to protect
      if (!result.ok && !result.fresh) break
    }
    const ms = Date.now() - t0
    const failed = results.filter((r) => !r.ok)
    const ok = failed.length === 0 && results.length === instances.length
    if (ok) {
      this.logger.info({ event: 'reload:done', app: this.name, reason, ms, pids: results.map((r) => r.pid) }, `reloaded in ${ms} ms`)
    } else {
      this.logger.error({ event: 'reload:failed', app: this.name, reason, ms, failed }, `reload failed after ${ms} ms: ` +
        (failed.length ? failed.map((r) => `#${r.inst} ${r.reason}`).join('; ') : 'stopped'))
    }
    return { ok, ms, instances: results, reason: ok ? undefined : (failed[0] && failed[0].reason) || 'stopped' }
  }

  /** One instance (max_memory_restart), unless a whole-app reload is already running. */
  async reloadInstance (instance, reason) {
    if (this.reloading !== null || this.stopped) return
    this.logger.info({ event: 'reload:start', app: this.name, inst: instance.inst, reason, instances: 1 }, `reloading #${instance.inst} (${reason})`)
    const t0 = Date.now()
    this.reloading = instance.reload().finally(() => { this.reloading = null })
    const result = await this.reloading
    const ms = Date.now() - t0
    if (result.ok) this.logger.info({ event: 'reload:done', app: this.name, inst: instance.inst, reason, ms, pids: [result.pid] }, `reloaded #${instance.inst} in ${ms} ms`)
  }

  /** Hard restart: every instance stopped, then started again with fresh counters. */
  async restart () {
    this.stopped = false
    this.logger.info({ event: 'restart', app: this.name }, 'restarting')
    await Promise.all(this.instances.map((i) => i.restart()))
    await this.start()
  }

  /** Graceful stop of every instance; the watcher stops too (a stopped app stays stopped). */
  async stop (killTimeout) {
    this.stopped = true
    await this.closeWatcher()
    await Promise.all(this.instances.map((i) => i.stop(killTimeout)))
  }

  async kill () {
    this.stopped = true
    await Promise.all([this.closeWatcher(), ...this.instances.map((i) => i.kill())])
  }

  async closeWatcher () {
    if (this.watcher) {
      const watcher = this.watcher
      this.watcher = null
      await watcher.close()
    }
  }

  /** The app's state in one word, from its instances. */
  state () {
    const states = this.instances.map((i) => i.state)
    if (this.reloading !== null) return 'reloading'
    if (states.every((s) => s === 'ready')) return 'ready'
    if (states.every((s) => s === 'errored')) return 'errored'
    if (states.every((s) => s === 'stopped' || s === 'idle')) return 'stopped'
    if (states.some((s) => s === 'errored')) return 'degraded'
    if (states.every((s) => s === 'exited' || s === 'stopped')) return 'exited'
    return 'starting'
  }
}

module.exports = { AppGroup }
