'use strict'

// What happens after an instance exits without being asked to: whether it is started
// again (`restart`, `stop_exit_codes`, as systemd's Restart=), after how long
// (exponential backoff with a floor, a cap and jitter), and when a crash loop gives up
// (docs/supervisor.md 2.1, 2.2). Pure functions and one small class, so every rule
// is tested without processes.
//
// Two pm2 bugs this avoids on purpose: an exit is unstable when it happens before ready
// or within min_uptime after ready (pm2 only counts exits faster than min_uptime after
// spawn, so an app that crashes 1.1 s after start loops for ever), and the window
// slides (pm2 stops counting once min_uptime * max_restarts has passed since creation).

// one of this policy's rules, defined with the config: validation checks restart_window
// against it, and the config does not depend on the supervisor
const { backoffDelay } = require('../config/backoff')

/**
 * @param {object} app a validated app: restart, stop_exit_codes
 * @param {{ code: number|null, signal: string|null }} exit
 * @returns {boolean}
 */
function shouldRestart (app, { code, signal }) {
  if (app.restart === 'never') return false
  if (signal === null && code !== null && app.stop_exit_codes.includes(code)) return false
  if (app.restart === 'on-failure') return signal !== null || code !== 0
  return true
}

/**
 * @param {object} run
 * @param {number|null} run.readyAt when the process became ready (null: never)
 * @param {number} run.exitAt
 * @param {number} minUptime ms
 * @returns {boolean} whether this exit counts towards a crash loop
 */
function isUnstable ({ readyAt, exitAt }, minUptime) {
  return readyAt === null || exitAt - readyAt < minUptime
}

/** The unstable exits of one instance within a sliding window. */
class CrashLoop {
  /**
   * @param {object} options
   * @param {number} options.max unstable exits that make a crash loop (0: never)
   * @param {number} options.window ms
   */
  constructor ({ max, window }) {
    this.max = max
    this.window = window
    this.exits = []
  }

  /**
   * Records an unstable exit.
   * @param {number} [now=Date.now()]
   * @returns {boolean} true when this exit makes it a crash loop
   */
  record (now = Date.now()) {
    this.exits.push(now)
    while (this.exits.length > 0 && this.exits[0] <= now - this.window) this.exits.shift()
    return this.max > 0 && this.exits.length >= this.max
  }

  get count () {
    return this.exits.length
  }

  reset () {
    this.exits = []
  }
}

module.exports = { shouldRestart, backoffDelay, isUnstable, CrashLoop }
