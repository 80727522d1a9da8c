'use strict'

// "Did you mean ...?" for unknown config keys. Keys are compared loosely (case, `_` and
// `-` ignored) so `killTimeout` finds `kill_timeout`, then by edit distance so
// `instance` finds `instances`.

/**
 * Edit distance with adjacent swaps (optimal string alignment), a few rows at a time
 * (keys are short; no need for more).
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
function distance (a, b) {
  if (a === b) return 0
  if (a.length === 0) return b.length
  if (b.length === 0) return a.length
  // three rows: a swap of two neighbours ("wacth") is one edit, as people type them
  let before = new Array(b.length + 1)
  let prev = new Array(b.length + 1)
  let next = new Array(b.length + 1)
  for (let j = 0; j <= b.length; j++) prev[j] = j
  for (let i = 1; i <= a.length; i++) {
    next[0] = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      next[j] = Math.min(prev[j] + 1, next[j - 1] + 1, prev[j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        next[j] = Math.min(next[j], before[j - 2] + 1)
      }
    }
    const t = before
    before = prev
    prev = next
    next = t
  }
  return prev[b.length]
}

const loose = (s) => s.toLowerCase().replace(/[-_]/g, '')

/**
 * The closest known key, or undefined when nothing is close enough to be a typo.
 * @param {string} key what the user wrote
 * @param {string[]} known the valid keys
 * @param {Record<string, string>} [aliases] spellings other tools use -> our key
 * @returns {string|undefined}
 */
function didYouMean (key, known, aliases = {}) {
  if (Object.hasOwn(aliases, key)) return aliases[key]
  const k = loose(key)
  let best
  let bestDistance = Infinity
  for (const candidate of known) {
    const d = distance(k, loose(candidate))
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  // a third of the longer word, at least 1 and at most 3 edits: close enough to be a typo
  const limit = Math.min(3, Math.max(1, Math.floor(Math.max(k.length, best ? best.length : 0) / 3)))
  return bestDistance <= limit ? best : undefined
}

module.exports = { distance, didYouMean }
