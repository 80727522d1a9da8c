'use strict'

// A bounded run of the hub parser's fuzzer (test/fuzz/, see its README.md): fixed seeds,
// a few thousand mutated requests, each parsed under five chunking/pausing plans with the
// parser's contract checked on every call, a differential run against node's llhttp on
// a smaller sample, a time-vs-size check, and regression tests for the parser bugs the
// fuzzer found. `npm run fuzz` is the long run.
// A failure message carries the seed and input index: `npm run fuzz -- --seed S --only I`.

const { RequestParser } = require('../../../src/hub/http-parser')
const { minimize } = require('../../fuzz/fuzz')
const differential = require('../../fuzz/differential')
const { SEEDS } = require('../../fuzz/corpus')
const { CATEGORIES, chunkLineOk } = require('../../fuzz/categories')
const { KNOWN_BUGS } = require('../../fuzz/known-bugs')
const { runHub, Splits, fuzzHub: fuzz, checkHub, checkScaling } = require('../../fuzz/hub-driver')

const b = (s) => Buffer.from(s, 'latin1')
// the per-input time limit is for the long run; here the machine is shared with other
// test files, and super-linear time is what the scaling test is for
const budgetMs = 2000

describe('hub http-parser fuzzing', () => {
  test.each([[1], [2]])('seed %i: 1500 inputs, every chunking gives the same verdicts, no contract broken', (seed) => {
    const s = fuzz({ seed, iterations: 1500, differentialEvery: 0, budgetMs })
    expect(s.inputs).toBe(1500)
    expect(s.accepted).toBeGreaterThan(200) // the corpus is not all garbage
    expect(Object.keys(s.endings).length).toBeGreaterThan(3)
  })

  const llhttp = differential.available ? test : test.skip
  llhttp('seed 3: 1200 inputs agree with llhttp or fall in an accepted category', () => {
    const s = fuzz({ seed: 3, iterations: 1200, differentialEvery: 1, budgetMs })
    expect(s.differential.compared).toBeGreaterThan(800)
    expect(s.differential.unexplained).toEqual({})
    for (const id of Object.keys(s.differential.categories)) expect(CATEGORIES.map((c) => c.id)).toContain(id)
  })

  llhttp('every corpus seed, unmutated, agrees with llhttp or falls in an accepted category', () => {
    for (const [name, text] of SEEDS) {
      const input = b(text)
      const r = checkHub(input, 1, {})
      const d = differential.compare(input, r.events, r.boundaries)
      if (d.kind !== null && d.category === null) throw new Error(`corpus seed ${name}: ${d.detail}`)
    }
  })

  test('valid corpus requests are accepted whole', () => {
    for (const name of ['get', 'get-browser', 'post-cl', 'chunked-ext', 'chunked-trailers', 'pipeline', 'near-limit-head']) {
      const [, text] = SEEDS.find((s) => s[0] === name)
      const { events } = runHub(b(text), { splits: Splits.whole(text.length) })
      expect(events.filter((e) => e[0] === 'error')).toEqual([])
      expect(events[events.length - 1]).toEqual(['finish', null])
    }
  })

  test('time grows linearly with the input (long lines byte by byte, many lines, pipelines)', () => {
    // a ratio of 12 leaves room for a machine busy with other test files; quadratic is ~16
    const results = checkScaling({ n: 16384, maxRatio: 12 })
    const slow = results.filter((r) => !r.ok)
    expect(slow).toEqual([])
  })

  // issue 23: the app and the output cache see the Host's port, so one that is not digits
  // must be 400 (HTTP.SYS's rule), in Host and in an absolute-form target alike
  test('the Host port rule: the corpus\'s Host and target whose port is not digits are 400, and the driver fails a parser that accepts them', () => {
    for (const [name, reason] of [['host-port-not-digits', 'invalid port in Host header'], ['target-port-not-digits', 'invalid port in the request-target']]) {
      const [, text] = SEEDS.find((s) => s[0] === name)
      const { events } = runHub(b(text), { splits: Splits.whole(text.length) })
      expect(events).toEqual([['error', 400, reason], ['finish', null]])
    }
    // a parser without the rule (simulated: every Host and target as a server that owns its port gets them)
    const execute = RequestParser.prototype.execute
    const spy = jest.spyOn(RequestParser.prototype, 'execute').mockImplementation(function (buf) {
      this.strictHost = false
      return execute.call(this, buf)
    })
    try {
      const [, text] = SEEDS.find((s) => s[0] === 'host-port-not-digits')
      expect(() => runHub(b(text), { splits: Splits.whole(text.length) })).toThrow(/a Host whose port is not digits accepted/)
    } finally {
      spy.mockRestore()
    }
  })

  test('the chunk-line grammar used to judge disagreements is RFC 9112 7.1.1', () => {
    const valid = ['1', '1;a', '1;a=b', '1 ;a = b', '1;a="x\\"y"', '1;a;b=c', 'ff\t;\ta\t=\t""', '1;a="\xe9"']
    const invalid = ['1 ', '1;', '1;a=', '1;;a', '1;a=b""', '1;a="x', '1;a b', ';a', '1;a ', '1;a="\x01"', 'g']
    expect(valid.filter((l) => !chunkLineOk(l))).toEqual([])
    expect(invalid.filter((l) => chunkLineOk(l))).toEqual([])
  })

  test('the minimizer keeps what makes an input fail', () => {
    const input = b('GET / HTTP/1.1\r\nHost: a\r\nX: a\x00b\r\n\r\n')
    const small = minimize(input, (c) => c.includes(0) && c.includes(58))
    expect(small.length).toBeLessThanOrEqual(2)
  })

  test('a chunking-dependent parser is caught, with the seed and input to replay it', () => {
    // an incremental-state bug, simulated: a ':' arriving alone in its read becomes ';'
    const execute = RequestParser.prototype.execute
    const spy = jest.spyOn(RequestParser.prototype, 'execute').mockImplementation(function (buf) {
      return execute.call(this, buf.length === 1 && buf[0] === 0x3a ? b(';') : buf)
    })
    try {
      expect(() => fuzz({ seed: 1, iterations: 200, differentialEvery: 0, minimize: false }))
        .toThrow(/chunking: plan (?:byte-by-byte|random-cuts|small-pieces|pauses)[\s\S]*seed 1, input \d+[\s\S]*--seed 1 --only \d+/)
    } finally {
      spy.mockRestore()
    }
  })

  llhttp('a head that differs from llhttp\'s is not explained away', () => {
    const input = b('GET /a HTTP/1.1\r\nHost: a\r\n\r\n')
    const r = checkHub(input, 1, {})
    expect(differential.compare(input, r.events, r.boundaries).kind).toBeNull()
    const events = JSON.parse(JSON.stringify(r.events))
    events[0][1].url = '/b'
    const d = differential.compare(input, events, r.boundaries)
    expect(d).toMatchObject({ kind: 'mismatch', category: null })
  })
})

// The bugs the fuzzer found, fixed; each test fails on the parser before its fix.
describe('parser bugs found by fuzzing', () => {
  const statusOf = (pieces, options) => {
    const out = []
    const p = new RequestParser(options, { onHead () {}, onBody () {}, onComplete () {}, onError: (e) => out.push(e.status) })
    for (const piece of pieces) p.execute(b(piece))
    return out
  }

  test('known-bugs.js lists only documented bugs with a repro', () => {
    for (const bug of KNOWN_BUGS) {
      expect(bug.summary.length).toBeGreaterThan(40)
      expect(bug.repro.pieces.length).toBeGreaterThan(0)
    }
  })

  test('a long read into a cut line keeps no more than about maxHeaderSize (it copied 32 MiB for a 16 MiB read)', () => {
    const statuses = []
    const p = new RequestParser({}, { onHead () {}, onBody () {}, onComplete () {}, onError: (e) => statuses.push(e.status) })
    p.execute(b('GET / HTTP/1.1\r\nHost: a\r\nX: '))
    const big = Buffer.alloc(16 << 20, 0x61)
    const before = process.memoryUsage().arrayBuffers
    p.execute(big)
    const kept = process.memoryUsage().arrayBuffers - before
    expect(statuses).toEqual([431])
    expect(p.execute(b('x'))).toBe(0) // p is alive (and failed) until here
    expect(kept).toBeLessThan(1 << 20)
  })

  test('a malformed over-long line gets the same status however it is cut (it was 400 in one buffer, 431 or 413 cut)', () => {
    const pieces = ['GET / HTTP/1.1\r\nHost: a\r\nX: ', '\x00' + 'a'.repeat(64) + '\r\n\r\n']
    expect(statusOf([pieces.join('')], { maxHeaderSize: 64 })).toEqual([400])
    expect(statusOf(pieces, { maxHeaderSize: 64 })).toEqual([400])
    // a line that is fine up to the limit is still the limit's
    expect(statusOf(['GET / HTTP/1.1\r\nHost: a\r\nX: ', 'a'.repeat(64) + '\x00\r\n\r\n'], { maxHeaderSize: 64 })).toEqual([431])
    // the same with the default limit: a chunk extension line of 16 KiB with a NUL early on
    const head = 'POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;e'
    const rest = '\x00' + 'e'.repeat(16400) + '\r\nx\r\n0\r\n\r\n'
    expect(statusOf([head, rest])).toEqual(statusOf([head + rest]))
  })

  test('Content-Length up to 2^53 - 1 is read exactly (odd values near it came out one off, 2^53 - 1 was 413)', () => {
    const contentLengthOf = (text) => {
      let got = null
      const p = new RequestParser({}, { onHead: (h) => { got = h.contentLength }, onBody () {}, onComplete () {}, onError: (e) => { got = e.status } })
      p.execute(b(text))
      return got
    }
    const req = (n) => `POST / HTTP/1.1\r\nHost: a\r\nContent-Length: ${n}\r\n\r\n`
    expect(contentLengthOf(req('9007199254740989'))).toBe(9007199254740989)
    expect(contentLengthOf(req('9007199254740991'))).toBe(9007199254740991)
    expect(contentLengthOf(req('9007199254740992'))).toBe(413)
  })
})
