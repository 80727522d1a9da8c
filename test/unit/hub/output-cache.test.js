'use strict'

// The hub's output cache (src/hub/output-cache.js): the Range parser, the header block
// splitter, an entry's prebuilt HTTP/1.1 bytes, and the store itself driven with
// RESPONSE frame payloads as the hub hands them over: its key, its byte budget and entry
// bound, and client certificates (issue 23).

const { Entry, OutputCache, parseRange, pairsOf } = require('../../../src/hub/output-cache')
const { encodeTlsInfo, FrameWriter, decodeResponse, HEADER_SIZE } = require('../../../src/wire/protocol')

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

  test('the same age returns the identical buffer for the common answer (keep-alive HTTP/1.1); others are built each time', () => {
    const e = make()
    const plain = e.bytes(3, 0, false)
    const headOnly = e.bytes(3, 0, true)
    expect(e.bytes(3, 0, false)).toBe(plain)
    expect(e.bytes(3, 0, true)).toBe(headOnly)
    expect(headOnly).not.toBe(plain)
    // an entry holds at most its lines and these two heads (what its size counts)
    const close = e.bytes(3, 1, false)
    expect(e.bytes(3, 1, false)).not.toBe(close)
    expect(e.bytes(3, 1, false).equals(close)).toBe(true)
    expect(e.bytes(3, 0, false)).toBe(plain)
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
    expect(e.size).toBe(512 + 3 * LINES.length + 16384)

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
    expect(e.size).toBe(512 + 3 * LINES.length + 2 * 16383) // the joined copy counts
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

// ---------------------------------------------------------------------------------
// the store, driven as the hub drives it

/** A RESPONSE frame's payload as a worker writes it (FrameWriter.response), where the hub reads it. */
function responseFrame (headers, body = '') {
  const w = new FrameWriter()
  w.response(1, 200, 0, 60, 'OK', headers.flat(), body)
  const b = Buffer.concat(w.take())
  const bodyStart = b.length - decodeResponse(b, HEADER_SIZE, b.length).body.length
  return { b, p: HEADER_SIZE, bodyStart, end: b.length }
}

function queue () {
  return { cacheEpoch: 0, deleted: false, cacheStats: { hits: 0, misses: 0, stores: 0, evictions: 0, entries: 0, bytes: 0 } }
}

// What a client certificate looks like to the hub: its connection's encoded TlsInfo.
const WITH_CERT = encodeTlsInfo({ protocol: 'TLSv1.3', authorized: false, peerCertificate: Buffer.from('a DER certificate') })
const WITHOUT_CERT = encodeTlsInfo({ protocol: 'TLSv1.3', authorized: false, peerCertificate: null })

/** A GET as the hub routes it; `answered` collects what respondFromCache() sent. */
function request (q, { url = '/x', host = 'a.test', secure = false, port = 8080, tls = null, headers = [] } = {}) {
  const req = {
    queue: q,
    cacheEpoch: q.cacheEpoch,
    isHead: false,
    conn: { secure: secure || tls !== null, localPort: port, tls },
    head: { method: 'GET', url, host, rawHeaders: ['Host', host, ...headers.flat()], hasBody: false },
    answered: null,
    respondFromCache (status, reason, lines, body, entry) {
      this.answered = { status, body: entry !== null ? entry.body.toString('latin1') : body }
    }
  }
  return req
}

/** The app's response to req, stored as the hub stores it; whether it was. */
function store (cache, req, headers, body) {
  const f = responseFrame(headers, body)
  const cap = cache.begin(req, f.b, f.p, f.bodyStart, f.end, 60)
  if (cap === null) return false
  const before = req.queue.cacheStats.stores
  cache.commit(cap)
  return req.queue.cacheStats.stores > before
}

/** What a later request gets: the stored body, or null (it goes to the app). */
function answer (cache, req) {
  return cache.answer(req.queue, req) ? req.answered.body : null
}

const PUBLIC = [['Cache-Control', 'public, max-age=60'], ['Content-Type', 'text/html']]

describe('OutputCache: the key is the Host as the app saw it, port included (issue 23)', () => {
  // A page that reflects its Host (links, canonical URLs): what one Host made must never
  // answer a client that sent another
  const page = (host) => `<a href="http://${host}/next">next</a>`

  test('a Host with another port is another entry: `Host: localhost:1337` cannot poison the links of `Host: localhost`', () => {
    const cache = new OutputCache()
    const q = queue()
    expect(store(cache, request(q, { host: 'localhost:1337' }), PUBLIC, page('localhost:1337'))).toBe(true)
    expect(answer(cache, request(q, { host: 'localhost' }))).toBeNull()
    expect(answer(cache, request(q, { host: 'localhost:8080' }))).toBeNull()
    expect(answer(cache, request(q, { host: 'localhost:1337' }))).toBe(page('localhost:1337'))
    expect(store(cache, request(q, { host: 'localhost' }), PUBLIC, page('localhost'))).toBe(true)
    expect(answer(cache, request(q, { host: 'localhost' }))).toBe(page('localhost'))
    expect(answer(cache, request(q, { host: 'localhost:1337' }))).toBe(page('localhost:1337'))
  })

  test('the Host\'s case does not matter; the scheme, the listener\'s port and the target do', () => {
    const cache = new OutputCache()
    const q = queue()
    store(cache, request(q, { host: 'A.Test:8080' }), PUBLIC, 'x')
    expect(answer(cache, request(q, { host: 'a.test:8080' }))).toBe('x')
    expect(answer(cache, request(q, { host: 'a.test:8080', port: 8081 }))).toBeNull()
    expect(answer(cache, request(q, { host: 'a.test:8080', secure: true }))).toBeNull()
    expect(answer(cache, request(q, { host: 'a.test:8080', url: '/y' }))).toBeNull()
  })
})

describe('OutputCache: the byte budget counts keys, and the number of entries is bounded (issue 23)', () => {
  // what an entry at least holds: its key (Host + URL), its head lines and its body
  const held = (cache) => {
    let n = 0
    for (const [key, e] of cache.lru.entries()) n += key.length + e.lines.length + e.body.length
    return n
  }

  test('3000 entries with 15 KB Hosts stay within a 1 MB budget', () => {
    const cache = new OutputCache({ maxSize: 1024 * 1024 })
    const q = queue()
    const long = 'h'.repeat(15000)
    for (let i = 0; i < 3000; i++) store(cache, request(q, { host: long + i }), PUBLIC, 'small page ' + i)
    expect(held(cache)).toBeLessThanOrEqual(1024 * 1024)
    expect(cache.lru.calculatedSize).toBeLessThanOrEqual(1024 * 1024)
    expect(cache.lru.size).toBeLessThan(1024 * 1024 / 15000)
    expect(q.cacheStats.entries).toBe(cache.lru.size)
    expect(q.cacheStats.bytes).toBe(cache.lru.calculatedSize) // ls --json shows what the budget counts
    expect(q.cacheStats.evictions).toBe(3000 - cache.lru.size)
    // the most recent ones are kept
    expect(answer(cache, request(q, { host: long + 2999 }))).toBe('small page 2999')
  })

  test('an entry is counted with its key: a 200 KB URL under a 100 KB budget is not stored', () => {
    const cache = new OutputCache({ maxSize: 100 * 1024 })
    const q = queue()
    expect(store(cache, request(q, { url: '/' + 'u'.repeat(200 * 1024) }), PUBLIC, 'x')).toBe(false)
    expect(cache.lru.size).toBe(0)
  })

  test('at most one entry per KB of the budget, however small the entries (the least recently used goes)', () => {
    const cache = new OutputCache({ maxSize: 1024 * 1024 })
    const q = queue()
    for (let i = 0; i < 5000; i++) store(cache, request(q, { url: '/' + i }), PUBLIC, '')
    expect(cache.lru.size).toBe(1024)
    expect(q.cacheStats.entries).toBe(1024)
    expect(q.cacheStats.evictions).toBe(5000 - 1024)
    expect(answer(cache, request(q, { url: '/4999' }))).toBe('')
    expect(answer(cache, request(q, { url: '/0' }))).toBeNull()
    // an explicit bound
    const small = new OutputCache({ maxSize: 1024 * 1024, maxEntries: 2 })
    for (const url of ['/a', '/b', '/c']) store(small, request(q, { url }), PUBLIC, url)
    expect([...small.lru.keys()].map((k) => k.split(' ').pop()).sort()).toEqual(['/b', '/c'])
    // storing a key again replaces its entry and evicts nothing
    store(small, request(q, { url: '/c' }), PUBLIC, 'again')
    expect(small.lru.size).toBe(2)
    expect(answer(small, request(q, { url: '/b' }))).toBe('/b')
  })
})

describe('OutputCache: a client certificate is treated like Authorization unless the response says public (issue 23)', () => {
  const PRIVATE_BY_DEFAULT = [['Cache-Control', 's-maxage=60'], ['Content-Type', 'text/html']]

  test('a response to a client with a certificate is not stored unless it says Cache-Control: public', () => {
    const cache = new OutputCache()
    const q = queue()
    expect(store(cache, request(q, { tls: WITH_CERT }), PRIVATE_BY_DEFAULT, 'hello CN=alice')).toBe(false)
    expect(answer(cache, request(q, { tls: WITHOUT_CERT }))).toBeNull()
    expect(answer(cache, request(q))).toBeNull()
    expect(q.cacheStats.stores).toBe(0)
    // public: the app says the page is the same for everyone
    expect(store(cache, request(q, { url: '/pub', tls: WITH_CERT }), PUBLIC, 'the same for all')).toBe(true)
    expect(answer(cache, request(q, { url: '/pub', tls: WITHOUT_CERT }))).toBe('the same for all')
    expect(answer(cache, request(q, { url: '/pub', tls: WITH_CERT }))).toBe('the same for all')
  })

  test('a client with a certificate is answered only from an entry that said public', () => {
    const cache = new OutputCache()
    const q = queue()
    // stored for a client without one (TLS or not): not given to one with a certificate
    expect(store(cache, request(q, { tls: WITHOUT_CERT }), PRIVATE_BY_DEFAULT, 'hello anonymous')).toBe(true)
    expect(answer(cache, request(q, { tls: WITH_CERT }))).toBeNull()
    expect(answer(cache, request(q, { tls: WITHOUT_CERT }))).toBe('hello anonymous')
    // the TLS session without a certificate is the same entry
    expect(store(cache, request(q, { url: '/p', tls: WITHOUT_CERT }), PUBLIC, 'public page')).toBe(true)
    expect(answer(cache, request(q, { url: '/p', tls: WITH_CERT }))).toBe('public page')
  })
})
