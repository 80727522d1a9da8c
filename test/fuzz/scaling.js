'use strict'

// Time against input size for the shapes where an incremental line parser can go
// quadratic: a long line fed byte by byte (pending-line copies, LF searches, early
// request-line checks), many header lines, many chunks with extensions, a long
// pipeline, a long body in small reads. Each shape is timed at n and 4n bytes (best of
// a few runs); linear time gives a ratio near 4, quadratic near 16. The check fails
// above `maxRatio` (10 by default), which leaves room for a noisy machine. The parser
// is a fuzz target's (fuzz.js): the Go parser by default, timed inside its process.

const b = (s) => Buffer.from(s, 'latin1')
const BIG = { maxHeaderSize: 1 << 24 } // the limits out of the way: time is what is measured

/** [name, (n) => { pieces: Buffer[], options }] */
const SHAPES = [
  ['header line, byte by byte', (n) => ({
    pieces: bytes(b('GET / HTTP/1.1\r\nHost: a\r\nX-Long: ' + 'v'.repeat(n) + '\r\n\r\n')),
    options: BIG
  })],
  ['request-target, byte by byte', (n) => ({
    pieces: bytes(b('GET /' + 'u'.repeat(n) + ' HTTP/1.1\r\nHost: a\r\n\r\n')),
    options: BIG
  })],
  ['chunk extension, byte by byte', (n) => ({
    pieces: bytes(b('POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;e="' + '\\"'.repeat(n >> 1) + '"\r\nx\r\n0\r\n\r\n')),
    options: BIG
  })],
  ['many header lines, one buffer', (n) => ({
    pieces: [b('GET / HTTP/1.1\r\nHost: a\r\n' + 'X-H: v\r\n'.repeat(n >> 3) + '\r\n')],
    options: BIG
  })],
  ['many header lines, 7-byte reads', (n) => ({
    pieces: split(b('GET / HTTP/1.1\r\nHost: a\r\n' + 'X-H: v\r\n'.repeat(n >> 3) + '\r\n'), 7),
    options: BIG
  })],
  ['many chunks with extensions, 5-byte reads', (n) => ({
    pieces: split(b('POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n' + '3;a=b\r\nxyz\r\n'.repeat(n / 13 | 0) + '0\r\n\r\n')),
    options: BIG
  })],
  ['pipeline after a large head, one buffer', (n) => ({
    pieces: [b('GET / HTTP/1.1\r\nHost: a\r\nX: ' + 'p'.repeat(16000) + '\r\n\r\n' + 'GET / HTTP/1.1\r\nHost: a\r\n\r\n'.repeat(n / 27 | 0))],
    options: {}
  })],
  ['Content-Length body, byte by byte', (n) => ({
    pieces: [b(`POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${n}\r\n\r\n`), ...bytes(Buffer.alloc(n, 0x62))],
    options: {}
  })]
]

function bytes (buf) {
  const out = new Array(buf.length)
  for (let i = 0; i < buf.length; i++) out[i] = buf.subarray(i, i + 1)
  return out
}

function split (buf, k = 5) {
  const out = []
  for (let i = 0; i < buf.length; i += k) out.push(buf.subarray(i, i + k))
  return out
}

/** A shape's pieces as one input and its splits. */
function joined ({ pieces, options }) {
  const splits = []
  let at = 0
  for (const piece of pieces) {
    splits.push([at, at + piece.length])
    at += piece.length
  }
  return { input: Buffer.concat(pieces), splits, options }
}

/**
 * @param {object} [o]
 * @param {number} [o.n=65536] the small size, in bytes
 * @param {number} [o.runs=7] the best of these counts (the Go parser takes a fraction
 *   of a millisecond: the best of few runs was noise on a busy machine)
 * @param {number} [o.maxRatio=10]
 * @param {object} [o.target] whose parser (fuzz.js): the Go parser by default
 * @returns {Array<{ shape: string, n: number, ms: number, ms4: number, ratio: number, ok: boolean }>}
 */
function checkScaling ({ n = 65536, runs = 7, maxRatio = 10, target } = {}) {
  // required here: fuzz.js requires the drivers, which require this file
  const t = target || require('./fuzz').defaultTarget()
  const jobs = SHAPES.map(([, make]) => [joined(make(n)), joined(make(4 * n))])
  // the best of `runs`, after a warm-up run (the JIT, the Go runtime's heap)
  const times = t.timeRuns(jobs.flat(), runs)
  const out = []
  for (let k = 0; k < SHAPES.length; k++) {
    let ms = times[2 * k]
    let ms4 = times[2 * k + 1]
    // a ratio over the limit is measured once more before it counts (GC, a busy core)
    if (ms4 / Math.max(ms, 0.05) > maxRatio) {
      const [a, b] = t.timeRuns(jobs[k], runs)
      ms = Math.min(ms, a)
      ms4 = Math.min(ms4, b)
    }
    const ratio = ms4 / Math.max(ms, 0.05)
    out.push({ shape: SHAPES[k][0], n, ms: round(ms), ms4: round(ms4), ratio: round(ratio), ok: ratio <= maxRatio })
  }
  return out
}

const round = (x) => Math.round(x * 100) / 100

module.exports = { checkScaling, SHAPES }
