'use strict'

// A small seeded PRNG (sfc32, 32-bit state words), so that a seed and an input index
// reproduce one input exactly, on any machine and node version. Math.random() is never
// used by the fuzzer.

/** Mixes a seed and an index into a 32-bit value (splitmix32-style finalizer). */
function mix (a, b) {
  let h = (a ^ Math.imul(b + 0x9e3779b9, 0x85ebca6b)) >>> 0
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0
  return (h ^ (h >>> 16)) >>> 0
}

class Rng {
  /** @param {number} seed any integer; with `stream`, an independent sequence per index */
  constructor (seed, stream = 0) {
    this.a = mix(seed >>> 0, stream)
    this.b = mix(this.a, 0x1234567)
    this.c = mix(this.b, 0x89abcdef)
    this.d = 1
    for (let i = 0; i < 12; i++) this.u32()
  }

  /** A uniform 32-bit unsigned integer. */
  u32 () {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0
    this.d = (this.d + 1) >>> 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) >>> 0
    this.c = ((this.c << 21) | (this.c >>> 11)) >>> 0
    this.c = (this.c + t) >>> 0
    return t
  }

  /** An integer in [0, n). */
  int (n) {
    return n <= 1 ? 0 : this.u32() % n
  }

  /** An integer in [lo, hi]. */
  range (lo, hi) {
    return lo + this.int(hi - lo + 1)
  }

  /** true with probability p. */
  chance (p) {
    return this.u32() < p * 4294967296
  }

  pick (arr) {
    return arr[this.int(arr.length)]
  }

  /** Picks from [[weight, value], ...]. */
  weighted (pairs) {
    let total = 0
    for (const [w] of pairs) total += w
    let r = this.int(total)
    for (const [w, v] of pairs) {
      if (r < w) return v
      r -= w
    }
    return pairs[pairs.length - 1][1]
  }

  /** Small counts: 0 most often, then 1, 2, ... (geometric with parameter p). */
  geometric (p, max = 64) {
    let n = 0
    while (n < max && !this.chance(p)) n++
    return n
  }
}

module.exports = { Rng, mix }
