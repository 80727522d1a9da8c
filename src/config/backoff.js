'use strict'

// The restart backoff an app's `backoff` key describes. It lives with the config, not
// the supervisor: validation computes the shortest crash loop a backoff allows
// (schema.js restartWindow()), and the config must not depend on the supervisor.

/**
 * The wait before restart number `attempt` (0-based, reset after a stable run):
 * initial * factor^attempt capped at max, then up to `jitter` of it taken off at random
 * so instances that crashed together do not restart together, never below initial.
 * @param {{ initial: number, max: number, factor: number, jitter: number }} backoff
 * @param {number} attempt
 * @param {() => number} [random=Math.random]
 * @returns {number} ms
 */
function backoffDelay (backoff, attempt, random = Math.random) {
  const { initial, max, factor, jitter } = backoff
  const base = Math.min(max, initial * Math.pow(factor, Math.max(0, attempt)))
  return Math.round(Math.max(initial, base * (1 - jitter * random())))
}

module.exports = { backoffDelay }
