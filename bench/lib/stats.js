'use strict'

// The arithmetic of the matrix: medians over rounds, ratios between targets, and the
// order targets run in each round.

/** The median of the numbers in xs (null, undefined and NaN are left out), or null. */
function median (xs) {
  const s = xs.filter((x) => typeof x === 'number' && !Number.isNaN(x)).sort((a, b) => a - b)
  if (s.length === 0) return null
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/** a / b, or null when either is missing or b is not positive. */
function ratio (a, b) {
  if (typeof a !== 'number' || typeof b !== 'number' || !(b > 0) || Number.isNaN(a)) return null
  return a / b
}

/**
 * The median of the per-round ratios of one figure, target over base. Each round's pair
 * ran minutes apart at most, so a ratio within a round cancels what the machine was doing
 * then; the median of those is steadier than a ratio of medians on a shared machine.
 */
function pairedRatio (rounds, field, target, base) {
  return median(rounds.map((r) => (r[target] && r[base] ? ratio(r[target][field], r[base][field]) : null)))
}

/**
 * The order of the targets in round r: rounds go in pairs, the second of a pair the
 * first reversed, so over each pair every target has the same mean position (none is
 * always measured first on a cold machine, or right after a heavy one); each pair is
 * rotated by one more, so the first target changes too.
 */
function roundOrder (targets, r) {
  const n = targets.length
  const k = n === 0 ? 0 : Math.floor(r / 2) % n
  const rotated = [...targets.slice(k), ...targets.slice(0, k)]
  return r % 2 ? rotated.reverse() : rotated
}

const FIGURES = ['rps', 'p50', 'p99', 'cpuUsPerRequest', 'rssMB']

/**
 * One figure set per target: the median over the rounds of each figure, errors summed,
 * and per role (router, workers, supervisor) the median CPU per request and RSS.
 */
function summarise (measurements) {
  const out = {}
  for (const f of FIGURES) out[f] = median(measurements.map((m) => m[f]))
  out.errors = measurements.reduce((n, m) => n + (m.errors || 0), 0)
  out.rounds = measurements.length
  const roles = new Set(measurements.flatMap((m) => Object.keys(m.roles || {})))
  if (roles.size > 0) {
    out.roles = {}
    for (const role of roles) {
      const of = (f) => median(measurements.map((m) => m.roles && m.roles[role] && m.roles[role][f]))
      out.roles[role] = { cpuUsPerRequest: of('cpuUsPerRequest'), rssMB: of('rssMB') }
    }
  }
  return out
}

module.exports = { median, ratio, pairedRatio, roundOrder, summarise }
