'use strict'

// Durations in the config: a number of milliseconds, or a string with a unit
// ("500ms", "10s", "1.5m", "1h"), the spellings pm2 and systemd users already type.

const UNITS = { ms: 1, s: 1000, m: 60000, h: 3600000 }
// node's timers hold a signed 32-bit count of ms; a longer one fires after 1 ms (with a
// TimeoutOverflowWarning), so a "700h" kill_timeout would kill at once, for ever
const MAX_DURATION_MS = 2147483647
const PATTERN = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/

/**
 * @param {unknown} value
 * @returns {number|undefined} whole milliseconds, or undefined when value is not a duration
 */
function parseDuration (value) {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined
  }
  if (typeof value !== 'string') return undefined
  const match = PATTERN.exec(value.trim())
  if (!match) return undefined
  return Math.round(Number(match[1]) * UNITS[match[2] || 'ms'])
}

/** "24.8 days": how MAX_DURATION_MS reads to a user. */
const MAX_DURATION_TEXT = `${Math.floor(MAX_DURATION_MS / 8640000) / 10} days`

module.exports = { parseDuration, MAX_DURATION_MS, MAX_DURATION_TEXT }
