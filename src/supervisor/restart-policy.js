'use strict'

// When a worker that was not asked to stop exits, how long until it is started again.
// One function on purpose: backoff and crash-loop detection (the next issue) replace it
// without touching the worker code.

const RESTART_DELAY_MS = 100

/**
 * @param {object} exit
 * @param {string} exit.app
 * @param {number} exit.inst
 * @param {number|null} exit.code
 * @param {string|null} exit.signal
 * @param {number} exit.uptimeMs since spawn
 * @param {boolean} exit.ready whether it had attached its queue
 * @param {number} exit.restarts restarts of this instance so far
 * @returns {number|null} delay in ms, or null to leave it stopped
 */
function restartDelay (exit) {
  return RESTART_DELAY_MS
}

module.exports = { restartDelay, RESTART_DELAY_MS }
