'use strict'

// The pure parts of the hub's output cache (src/hub/output-cache.js): the Range parser,
// the header block splitter, and an entry's prebuilt HTTP/1.1 bytes.

const { Entry, parseRange, pairsOf } = require('../../../src/hub/output-cache')

describe('parseRange', () => {
  test.each([
    // a single range
    ['bytes=0-99', 1000, [0, 99]],
    ['bytes=10-10', 1000, [10, 10]],
    ['bytes=0-0', 1, [0, 0]],
    ['bytes=999-999', 1000, [999, 999]],
    // open-ended
    ['bytes=500-', 1000, [500, 999]],
    ['bytes=0-', 1000, [0, 999]],
    ['bytes=999-', 1000, [999, 999]],
    // suffix
    ['bytes=-100', 1000, [900, 999]],
    ['bytes=-1', 1000, [999, 999]],
    ['bytes=-1000', 1000, [0, 999]],
    ['bytes=-2000', 1000, [0, 999]], // longer than the body: all of it
    // the end beyond the body is clamped
    ['bytes=0-5000', 1000, [0, 999]],
    ['bytes=900-1000', 1000, [900, 999]],
    ['bytes=0-99999999999999999999', 1000, [0, 999]],
    // the unit is case-insensitive; whitespace around the parts is tolerated
    ['BYTES=0-9', 1000, [0, 9]],
    ['Bytes = 5 - 9', 1000, [5, 9]],
    [' bytes=-10 ', 1000, [990, 999]]
  ])('%j of %i bytes → %j', (value, size, expected) => {
    expect(parseRange(value, size)).toEqual(expected)
  })

  test.each([
    ['bytes=1000-', 1000], // first = size
    ['bytes=1000-1000', 1000],
    ['bytes=1500-', 1000], // first > size
    ['bytes=1500-1600', 1000],
    ['bytes=-0', 1000], // an empty suffix
    ['bytes=-00', 1000],
    ['bytes=0-', 0], // an empty body
    ['bytes=0-0', 0]
  ])('%j of %i bytes → false (416)', (value, size) => {
    expect(parseRange(value, size)).toBe(false)
  })

  test.each([
    ['bytes=50-10', 1000], // last < first: invalid, the whole body goes out
    ['bytes=1-0', 1000],
    ['bytes=2000-1000', 1000],
    ['bytes=0-1,5-9', 1000], // several ranges
    ['bytes=0-1, 5-9', 1000],
    ['bytes=-5,-1', 1000],
    ['bytes=0-1,', 1000],
    ['items=0-1', 1000], // another unit
    ['bytes 0-1', 1000],
    ['bytes=', 1000],
    ['bytes=-', 1000],
    ['bytes=a-b', 1000],
    ['bytes=0x10-20', 1000],
    ['bytes=1.5-2', 1000],
    ['bytes=--1', 1000],
    ['bytes=0-1-2', 1000],
    ['garbage', 1000],
    ['', 1000]
  ])('%j of %i bytes → null (ignored)', (value, size) => {
    expect(parseRange(value, size)).toBeNull()
  })

  // an empty body has no byte to give: 416, never "Content-Range: bytes 0--1/0"
  test.each(['bytes=-5', 'bytes=0-', 'bytes=0-0'])('%s of an empty body is unsatisfiable', (range) => {
    expect(parseRange(range, 0)).toBe(false)
  })
})

describe('pairsOf', () => {
  test.each([
    ['', []],
    ['Content-Type: text/html\r\n', ['Content-Type', 'text/html']],
    ['Content-Type: text/html', ['Content-Type', 'text/html']], // no final CRLF
    ['Content-Type: text/html\r\nETag: "x"\r\n', ['Content-Type', 'text/html', 'ETag', '"x"']],
    ['A: 1\r\nB: 2\r\nA: 3\r\n', ['A', '1', 'B', '2', 'A', '3']], // repeats kept, in order
    ['Location: http://h:8080/x\r\n', ['Location', 'http://h:8080/x']], // colons in the value
    ['X-Empty:\r\n', ['X-Empty', '']],
    ['X-Empty: \r\n', ['X-Empty', '']],
    ['X-Pad:    padded  \r\n', ['X-Pad', 'padded']], // the value is trimmed
    ['X-Tight:v\r\n', ['X-Tight', 'v']],
    ['cache-control: public, max-age=60\r\n', ['cache-control', 'public, max-age=60']] // case kept
  ])('%j → %j', (text, expected) => {
    expect(pairsOf(text)).toEqual(expected)
  })

  test.each([
    ['NoColon\r\n'],
    ['NoColon'],
    [': value\r\n'], // empty name
    ['A: 1\r\nbroken\r\nC: 3\r\n'], // a line without a colon, another line's colon further on
    ['A: 1\r\nbroken'],
    ['A: 1\r\n\r\n'], // an empty line
    ['\r\n']
  ])('%j → null', (text) => {
    expect(pairsOf(text)).toBeNull()
  })
})

describe('Entry', () => {
  const LINES = 'Content-Type: text/plain\r\nETag: "abc"\r\n'
  const BODY = Buffer.from('hello world')
  const STORED = 1_000_000
  const make = (body = BODY, reason = 'OK', lines = LINES) =>
    new Entry({ name: 'q' }, reason, lines, body, STORED, 60000, '"abc"', null)

  const head = (age, conn, { lines = LINES, reason = 'OK', length = BODY.length } = {}) =>
    'HTTP/1.1 200 ' + reason + '\r\n' + lines + 'Content-Length: ' + length + '\r\nAge: ' + age + '\r\n' + conn + '\r\n'

  test('the constructor keeps its arguments', () => {
    const q = { name: 'q' }
    const e = new Entry(q, 'Fine', LINES, BODY, STORED, 60000, '"abc"', 'Wed, 21 Oct 2015 07:28:00 GMT')
    expect(e.queue).toBe(q)
    expect(e.reason).toBe('Fine')
    expect(e.lines).toBe(LINES)
    expect(e.body).toBe(BODY)
    expect(e.stored).toBe(STORED)
    expect(e.ttlMs).toBe(60000)
    expect(e.etag).toBe('"abc"')
    expect(e.lastModified).toBe('Wed, 21 Oct 2015 07:28:00 GMT')
  })

  test.each([
    [0, ''],
    [1, 'Connection: close\r\n'],
    [2, 'Connection: keep-alive\r\n'],
    [3, 'Connection: close\r\n']
  ])('add %i: head with %j, then the body (in the same buffer for a keep-alive client only)', (add, conn) => {
    const e = make()
    const b = e.bytes(7, add, false)
    expect(e.joins(add)).toBe(add === 0)
    expect(b.toString('latin1')).toBe(head(7, conn) + (add === 0 ? 'hello world' : ''))
  })

  test.each([
    [0, ''],
    [1, 'Connection: close\r\n'],
    [2, 'Connection: keep-alive\r\n']
  ])('add %i, head only: no body, the body\'s Content-Length', (add, conn) => {
    const e = make()
    expect(e.bytes(7, add, true).toString('latin1')).toBe(head(7, conn))
  })

  test('the reason phrase and the lines are written as stored, in latin1', () => {
    const lines = 'X-Name: caf\u00e9\r\n'
    const e = make(BODY, 'Very Fine', lines)
    const b = e.bytes(0, 0, false)
    expect(b.toString('latin1')).toBe(head(0, '', { lines, reason: 'Very Fine' }) + 'hello world')
    expect(b.indexOf(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0d, 0x0a]))).toBeGreaterThan(0) // "café\r\n", one byte for é
  })

  test('an empty body: Content-Length 0', () => {
    const e = make(Buffer.alloc(0))
    expect(e.bytes(1, 0, false).toString('latin1')).toBe(head(1, '', { length: 0 }))
  })

  test('the same age returns the identical buffer, per variant', () => {
    const e = make()
    const full = e.bytes(3, 2, false)
    const headOnly = e.bytes(3, 2, true)
    const close = e.bytes(3, 1, false)
    const plain = e.bytes(3, 0, false)
    expect(e.bytes(3, 2, false)).toBe(full)
    expect(e.bytes(3, 2, true)).toBe(headOnly)
    expect(e.bytes(3, 1, false)).toBe(close)
    expect(e.bytes(3, 0, false)).toBe(plain)
    expect(close).not.toBe(full)
    expect(plain).not.toBe(full)
  })

  test('a new age rebuilds every variant', () => {
    const e = make()
    const a3 = e.bytes(3, 0, false)
    const h3 = e.bytes(3, 0, true)
    const a4 = e.bytes(4, 0, false)
    expect(a4).not.toBe(a3)
    expect(a4.toString('latin1')).toBe(head(4, '') + 'hello world')
    const h4 = e.bytes(4, 0, true)
    expect(h4).not.toBe(h3)
    expect(h4.toString('latin1')).toBe(head(4, ''))
    // back to the old age: built again, with the right Age
    const again = e.bytes(3, 0, false)
    expect(again).not.toBe(a3)
    expect(again.toString('latin1')).toBe(head(3, '') + 'hello world')
  })

  test('a body of 16384 bytes or more is not joined: bytes() is the head only', () => {
    const big = Buffer.alloc(16384, 0x61)
    const e = make(big)
    const expected = head(2, 'Connection: keep-alive\r\n', { length: 16384 })
    expect(e.bytes(2, 2, false).toString('latin1')).toBe(expected)
    expect(e.bytes(2, 2, true).toString('latin1')).toBe(expected)
    expect(e.size).toBe(256 + LINES.length + 16384)

    const bigger = make(Buffer.alloc(100000, 0x62))
    expect(bigger.bytes(0, 0, false).toString('latin1')).toBe(head(0, '', { length: 100000 }))
  })

  test('a body of 16383 bytes is joined with its head', () => {
    const body = Buffer.alloc(16383, 0x61)
    const e = make(body)
    const b = e.bytes(2, 0, false)
    const h = head(2, '', { length: 16383 })
    expect(b.length).toBe(h.length + 16383)
    expect(b.subarray(0, h.length).toString('latin1')).toBe(h)
    expect(b.subarray(h.length).equals(body)).toBe(true)
    expect(e.size).toBe(256 + LINES.length + 2 * 16383) // the joined copy counts
  })

  test.each([
    [STORED, 0],
    [STORED + 999, 0],
    [STORED + 1000, 1],
    [STORED + 61500, 61],
    [STORED - 5000, 0] // a clock going back: never negative
  ])('ageAt(%i) → %i', (now, age) => {
    expect(make().ageAt(now)).toBe(age)
  })
})
