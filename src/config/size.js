'use strict'

// Sizes in the config: a number of bytes, or a string with a unit ("300M", "10MB",
// "512K", "1G"), the spellings pm2 users already type. Units are binary (1K = 1024),
// as RSS and file sizes are counted.

const UNITS = { b: 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }
const PATTERN = /^(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?$/i

/**
 * @param {unknown} value
 * @returns {number|undefined} whole bytes, or undefined when value is not a size
 */
function parseSize (value) {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined
  }
  if (typeof value !== 'string') return undefined
  const match = PATTERN.exec(value.trim())
  if (!match) return undefined
  return Math.round(Number(match[1]) * UNITS[(match[2] || 'b').toLowerCase()])
}

/** 314572800 -> "300M": for messages and `httpsys ls`. */
function formatSize (bytes) {
  if (typeof bytes !== 'number' || !Number.isFinite(bytes)) return '-'
  for (const [unit, n] of [['G', UNITS.g], ['M', UNITS.m], ['K', UNITS.k]]) {
    if (bytes >= n) {
      const v = bytes / n
      return (v >= 100 ? Math.round(v) : Math.round(v * 10) / 10) + unit
    }
  }
  return `${bytes}B`
}

module.exports = { parseSize, formatSize }
