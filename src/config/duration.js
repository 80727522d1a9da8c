'use strict'

// Durations in the config: a number of milliseconds, or a string with a unit
// ("500ms", "10s", "1.5m", "1h"), the spellings pm2 and systemd users already type.

const UNITS = { ms: 1, s: 1000, m: 60000, h: 3600000 }
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

module.exports = { parseDuration }
