'use strict'

// Seeded mutations of latin1 strings (one char per byte): the fuzzer's inputs are a
// corpus entry or a structured request, then zero or more of these.

const { SEEDS, structuredInput } = require('./corpus')

// Bytes that change how a line, a list or a number is read.
const INTERESTING_BYTES = [
  '\r', '\n', '\x00', ' ', '\t', ':', ',', ';', '=', '"', '\\', '/', '*', '?', '#', '%', '@',
  '\x7f', '\x80', '\xa0', '\xff', '\x0b', '\x0c', '\x1b', '0', '9', 'a', 'f', 'F', 'g', '-', '+', '.'
]
const INTERESTING_STRINGS = [
  '\r\n', '\r\n\r\n', '\n\n', '\r\n ', '\r\n\t', ' \r\n', ': ', ', ', ' ,', ';a=b', ';a="b"',
  'chunked', 'Chunked', 'close', 'keep-alive', 'upgrade', '100-continue',
  'Host: a\r\n', 'Content-Length: 0\r\n', 'Content-Length: 5\r\n', 'Transfer-Encoding: chunked\r\n',
  'Connection: close\r\n', 'Connection: upgrade\r\nUpgrade: x\r\n', 'Expect: 100-continue\r\n',
  '0\r\n\r\n', '\r\n0\r\n\r\n', 'GET / HTTP/1.1\r\nHost: a\r\n\r\n', 'HTTP/1.0', 'HTTP/1.1', 'HTTP/2.0',
  'http://', '//', '*', '%00', '\xc3\xa9'
]
const INTERESTING_NUMBERS = [
  '0', '1', '00', '-1', '+1', '2147483647', '2147483648', '4294967296', '9007199254740991',
  '9007199254740992', '9007199254740993', '18446744073709551615', '18446744073709551616',
  '99999999999999999999999', '0x10', '1e3', '1.5', ' 1', '1 ', '1,1', '1, 2', ''
]
const INTERESTING_HEX = ['0', '00', 'f', 'F', 'ffffffff', '1fffffffffffff', '20000000000000', 'ffffffffffffffff', '10000000000000000', 'g', '-1', '0x1']

/** A fresh base input: a corpus seed or a structured pipeline. */
function baseInput (rng) {
  return rng.chance(0.35) ? rng.pick(SEEDS)[1] : structuredInput(rng)
}

function lineSpans (s) {
  const spans = []
  let a = 0
  for (let i = 0; i < s.length; i++) {
    if (s.charCodeAt(i) === 10) {
      spans.push([a, i + 1])
      a = i + 1
    }
  }
  if (a < s.length) spans.push([a, s.length])
  return spans
}

// each mutation takes (rng, s) and returns the new string
const MUTATIONS = {
  flipBit (rng, s) {
    if (s.length === 0) return s
    const i = rng.int(s.length)
    return s.slice(0, i) + String.fromCharCode(s.charCodeAt(i) ^ (1 << rng.int(8))) + s.slice(i + 1)
  },
  setByte (rng, s) {
    if (s.length === 0) return s
    const i = rng.int(s.length)
    const c = rng.chance(0.7) ? rng.pick(INTERESTING_BYTES) : String.fromCharCode(rng.int(256))
    return s.slice(0, i) + c + s.slice(i + 1)
  },
  insertByte (rng, s) {
    const i = rng.int(s.length + 1)
    const c = rng.chance(0.7) ? rng.pick(INTERESTING_BYTES) : String.fromCharCode(rng.int(256))
    return s.slice(0, i) + c.repeat(rng.chance(0.9) ? 1 : rng.range(2, 8)) + s.slice(i)
  },
  insertString (rng, s) {
    const i = rng.int(s.length + 1)
    return s.slice(0, i) + rng.pick(INTERESTING_STRINGS) + s.slice(i)
  },
  deleteRange (rng, s) {
    if (s.length === 0) return s
    const i = rng.int(s.length)
    const n = rng.chance(0.7) ? rng.range(1, 2) : rng.range(1, 32)
    return s.slice(0, i) + s.slice(i + n)
  },
  duplicateRange (rng, s) {
    if (s.length === 0) return s
    const i = rng.int(s.length)
    const n = rng.range(1, 40)
    return s.slice(0, i + n) + s.slice(i, i + n) + s.slice(i + n)
  },
  duplicateLine (rng, s) {
    const spans = lineSpans(s)
    if (spans.length === 0) return s
    const [a, b] = rng.pick(spans)
    return s.slice(0, b) + s.slice(a, b) + s.slice(b)
  },
  deleteLine (rng, s) {
    const spans = lineSpans(s)
    if (spans.length === 0) return s
    const [a, b] = rng.pick(spans)
    return s.slice(0, a) + s.slice(b)
  },
  swapLines (rng, s) {
    const spans = lineSpans(s)
    if (spans.length < 2) return s
    let i = rng.int(spans.length)
    let j = rng.int(spans.length)
    if (i === j) return s
    if (i > j) [i, j] = [j, i]
    const [a1, b1] = spans[i]
    const [a2, b2] = spans[j]
    return s.slice(0, a1) + s.slice(a2, b2) + s.slice(b1, a2) + s.slice(a1, b1) + s.slice(b2)
  },
  lineEnding (rng, s) {
    // one CRLF becomes LF, CR, LFCR or CRCRLF, or a bare LF gains its CR
    const ends = []
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) === 10) ends.push(i)
    if (ends.length === 0) return s
    const i = rng.pick(ends)
    const crlf = i > 0 && s.charCodeAt(i - 1) === 13
    const from = crlf ? i - 1 : i
    return s.slice(0, from) + rng.pick(['\n', '\r', '\n\r', '\r\r\n', '\r\n', '\r\n\r\n', '']) + s.slice(i + 1)
  },
  number (rng, s) {
    const runs = []
    const re = /[0-9A-Fa-f]+/g
    let m
    while ((m = re.exec(s)) !== null) runs.push([m.index, m.index + m[0].length])
    if (runs.length === 0) return s
    const [a, b] = rng.pick(runs)
    return s.slice(0, a) + rng.pick(rng.chance(0.5) ? INTERESTING_NUMBERS : INTERESTING_HEX) + s.slice(b)
  },
  changeCase (rng, s) {
    if (s.length === 0) return s
    const i = rng.int(s.length)
    const n = rng.range(1, 16)
    const part = s.slice(i, i + n)
    return s.slice(0, i) + (rng.chance(0.5) ? part.toUpperCase() : part.toLowerCase()) + s.slice(i + n)
  },
  truncate (rng, s) {
    return s.slice(0, rng.int(s.length + 1))
  },
  splice (rng, s) {
    const other = baseInput(rng)
    return s.slice(0, rng.int(s.length + 1)) + other.slice(rng.int(other.length + 1))
  },
  append (rng, s) {
    return s + baseInput(rng)
  },
  hugeRun (rng, s) {
    // a run that crosses (or just misses) the 16 KiB header and extension limits
    const i = rng.int(s.length + 1)
    const n = rng.weighted([[3, rng.range(16300, 16500)], [1, rng.range(1, 20000)], [1, 40000]])
    return s.slice(0, i) + rng.pick(['a', ' ', 'x', '0', ',', '\r\n', 'X: y\r\n', ';e']).repeat(n).slice(0, n) + s.slice(i)
  }
}

const WEIGHTED = [
  [10, 'flipBit'], [16, 'setByte'], [16, 'insertByte'], [10, 'insertString'], [10, 'deleteRange'],
  [4, 'duplicateRange'], [6, 'duplicateLine'], [4, 'deleteLine'], [3, 'swapLines'], [8, 'lineEnding'],
  [8, 'number'], [3, 'changeCase'], [3, 'truncate'], [4, 'splice'], [3, 'append'], [1, 'hugeRun']
]

/**
 * One fuzz input for `rng`: a base input and 0..n mutations (0 a quarter of the time,
 * so valid requests are checked too). Returns { input: Buffer, base, mutations }.
 */
function generate (rng) {
  let s = baseInput(rng)
  const mutations = []
  const n = rng.chance(0.25) ? 0 : 1 + rng.geometric(0.45, 10)
  for (let k = 0; k < n; k++) {
    const name = rng.weighted(WEIGHTED)
    s = MUTATIONS[name](rng, s)
    mutations.push(name)
  }
  if (s.length > 200000) s = s.slice(0, 200000)
  return { input: Buffer.from(s, 'latin1'), mutations }
}

module.exports = { generate, MUTATIONS }
