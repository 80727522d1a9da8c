'use strict'

// The hub's output cache: what HTTP.SYS's kernel response cache does on Windows, with
// the same rules (src/cache/rules.js, docs/output-cache.md). A worker marks a response
// cacheable by giving it a time to live (the RESPONSE frame's cacheTtl, computed from
// the app's config rules and its Cache-Control); the hub copies such a response as it
// passes (a capture) and stores it once complete. Later GET and HEAD requests for the
// same URL are answered from memory without waking the app, with Age, Range (one
// range) and conditional requests (If-None-Match, If-Modified-Since) answered here.
//
// Keys: scheme + the listener's port + the Host as the app saw it (lower case, with its
// port: a page that reflects its Host differs by it, issue 23) + the canonical request
// target (the path, and its query when the app's rule allowed one: a query never
// reaches the store otherwise). One LRU (lru-cache) holds every app's entries within a
// byte budget that counts each entry's key, head and body copies and its objects, and
// a bound on their number; a response above the per-response limit is not stored.
// A request with a client certificate is treated like one with Authorization unless the
// app says `Cache-Control: public`: its response is not stored, and it is answered only
// from an entry whose response said public (RFC 9111 3.5, docs/output-cache.md).
// An app's entries go when one of its instances attaches or leaves (a start, restart,
// reload or crash: a new build is never answered by the old one's responses) and when
// its queue goes (hub.invalidateCache, through clearQueue()).

const { LRUCache } = require('lru-cache')
const rules = require('../cache/rules')
const { unchunk } = require('../wire/chunked')
const { CONNECTION_LINES } = require('./responses')

// Response header fields the cache does not store: the connection's own, the framing
// (the cache writes one Content-Length of its own), and Age (it writes the real one).
const NOT_STORED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'age', 'proxy-connection', 'upgrade'])
// Fields a 304 from the cache carries (RFC 9110 15.4.5), with Age.
const IN_304 = new Set(['etag', 'cache-control', 'expires', 'date', 'content-location', 'last-modified'])
// What an entry costs besides the bytes its size counts (its key, head lines and body
// copies): the Entry, its Buffer objects, the LRU's map slot and arrays. Measured at about
// 400 bytes on node 20 (100,000 entries of a short key), rounded up.
const ENTRY_OVERHEAD = 512
// Copies of an entry's head lines it may hold: its own string and the two heads built
// for the common answer (bytes(): full and head only).
const LINE_COPIES = 3
// At most one entry per this many bytes of the budget: the number of entries is bounded
// even where the count above is short of the real cost.
const BYTES_PER_ENTRY = 1024
// The flags byte a TLS connection's encoded session starts with (wire/protocol.js
// encodeTlsInfo, wire-protocol.md): 2 when the client sent a certificate.
const TLS_CLIENT_CERT = 2
// Bodies below this are kept with their head in one buffer (one write), for the common
// answer only (a keep-alive HTTP/1.1 client, ADD_NONE): an entry holds its body at most
// twice, as its size says. Other answers write the head, then the body.
const JOINED_BODY = 16384

const HTTP11 = 'HTTP/1.1 '

class Entry {
  /**
   * @param {boolean} [shared=true] the response said Cache-Control: public (it may answer a
   *   client with a certificate)
   * @param {number} [keyLength=0] its key's length (counted in its size)
   */
  constructor (queue, reason, lines, body, stored, ttlMs, etag, lastModified, shared = true, keyLength = 0) {
    this.queue = queue
    this.reason = reason
    this.lines = lines // "Name: value\r\n" lines as stored (latin1)
    this.body = body
    this.stored = stored
    this.ttlMs = ttlMs
    this.etag = etag
    this.lastModified = lastModified
    this.shared = shared
    this.age = -1 // the Age the built buffers say
    // the common answer's HTTP/1.1 bytes (ADD_NONE), built for one Age: [head only ? 1 : 0];
    // other answers are built each time (an entry holds at most LINE_COPIES of its head)
    this.built = [null, null]
    this.size = ENTRY_OVERHEAD + keyLength + lines.length * LINE_COPIES + body.length * (body.length < JOINED_BODY ? 2 : 1)
  }

  /** Seconds since it was stored (RFC 9111 4.2.3: the router's copy is the origin's). */
  ageAt (now) {
    return Math.max(0, Math.floor((now - this.stored) / 1000))
  }

  /** Whether bytes(age, add, false) holds the body too (else write it after them). */
  joins (add) {
    return add === 0 && this.body.length < JOINED_BODY
  }

  /**
   * The full 200 for an HTTP/1.1 client: one buffer (head + a small body: joins()), or
   * the head to write before `body`.
   */
  bytes (age, add, headOnly) {
    if (add !== 0) return this.build(age, add, headOnly)
    if (age !== this.age) {
      this.age = age
      this.built[0] = this.built[1] = null
    }
    const i = headOnly ? 1 : 0
    let b = this.built[i]
    if (b === null) {
      b = this.build(age, add, headOnly)
      this.built[i] = b
    }
    return b
  }

  build (age, add, headOnly) {
    const head = Buffer.from(HTTP11 + '200 ' + this.reason + '\r\n' + this.lines + 'Content-Length: ' + this.body.length + '\r\nAge: ' + age + '\r\n' + CONNECTION_LINES[add] + '\r\n', 'latin1')
    return headOnly || !this.joins(add) ? head : Buffer.concat([head, this.body])
  }
}

/** A response being copied as it passes, until it is complete. */
class Capture {
  constructor (key, queue, epoch, reason, lines, ttlMs, declared, etag, lastModified, shared) {
    this.key = key
    this.queue = queue
    this.epoch = epoch
    this.reason = reason
    this.lines = lines
    this.ttlMs = ttlMs
    this.declared = declared // its Content-Length, -1 without
    this.etag = etag
    this.lastModified = lastModified
    this.shared = shared
    this.chunked = false // the worker framed it (src/http: writeHead() then end()): stored bare
    this.chunks = []
    this.bytes = 0
  }
}

class OutputCache {
  /**
   * @param {object} [opts]
   * @param {number} [opts.maxSize=67108864] bytes all entries may take together (0: no cache)
   * @param {number} [opts.maxResponseSize=262144] the largest response body stored
   *   (HTTP.SYS's default UriMaxUriBytes, 256 KB)
   * @param {number} [opts.maxEntries] the most entries held (default: one per KB of maxSize)
   */
  constructor ({ maxSize = 64 * 1024 * 1024, maxResponseSize = 256 * 1024, maxEntries = Math.max(1, Math.floor(maxSize / BYTES_PER_ENTRY)) } = {}) {
    this.maxResponseSize = maxResponseSize
    // (not lru-cache's own `max`: it allocates arrays of that length up front)
    this.maxEntries = maxEntries
    this.lru = new LRUCache({
      maxSize,
      maxEntrySize: maxSize,
      sizeCalculation: (e) => e.size,
      dispose: (e, key, reason) => {
        const s = e.queue.cacheStats
        s.entries--
        s.bytes -= e.size
        if (reason === 'evict') s.evictions++
      }
    })
  }

  /**
   * The key of a request: its scheme and listener port (from its connection), its Host
   * with the port the app sees in it, and its target. Space-separated: the target has no
   * space (VCHAR), so the Host between the port and it cannot be mistaken.
   */
  static keyOf (req) {
    const conn = req.conn
    const head = req.head
    return (conn.secure ? 'https ' : 'http ') + conn.localPort + ' ' + (head.host || '').toLowerCase() + ' ' + head.url
  }

  /**
   * A GET or HEAD routed to q: answered here when a fresh entry is stored for its URL.
   * @returns {boolean} true: answered (the request goes no further)
   */
  answer (q, req) {
    const s = q.cacheStats
    if (s.entries === 0 || req.head.hasBody) {
      s.misses++
      return false
    }
    const e = this.lru.get(OutputCache.keyOf(req))
    if (e === undefined || e.queue !== q || !rules.requestAllows(req.head.rawHeaders) || (!e.shared && hasClientCert(req.conn))) {
      s.misses++
      return false
    }
    s.hits++
    serve(req, e, Date.now())
    return true
  }

  /**
   * A RESPONSE frame with a time to live, for a request routed to a queue whose cache
   * is on: starts copying it when every rule allows (the worker computed the time to
   * live from the same rules; the hub does not take its word for the refusals).
   * @returns {Capture|null}
   */
  begin (req, b, p, bodyStart, end, ttl) {
    const q = req.queue
    const head = req.head
    if (head.method !== 'GET' || head.hasBody || !rules.requestAllows(head.rawHeaders)) return null
    const status = b.readUInt16LE(p)
    if (status !== 200) return null
    const rlen = b.readUInt16LE(p + 8)
    const bs = p + 14 + rlen
    const pairs = pairsOf(b.latin1Slice(bs, bodyStart))
    if (pairs === null || rules.responseRefused(pairs)) return null
    const shared = rules.publicResponse(pairs)
    if (!shared && hasClientCert(req.conn)) return null
    let lines = ''
    let chunked = false
    let declared = -1
    let etag = null
    let lastModified = null
    for (let i = 0; i < pairs.length; i += 2) {
      const name = pairs[i].toLowerCase()
      const value = pairs[i + 1]
      if (name === 'transfer-encoding') {
        // the worker's chunked framing comes off when it is stored; any other coding stays out
        if (value.toLowerCase() !== 'chunked' || chunked) return null
        chunked = true
        continue
      }
      if (name === 'content-length') {
        const n = /^\d{1,15}$/.test(value) ? Number(value) : -2
        if (n === -2 || (declared !== -1 && n !== declared)) return null
        declared = n // repeats of one value: stored once
        continue
      }
      if (NOT_STORED.has(name)) continue
      if (name === 'etag') etag = value
      else if (name === 'last-modified') lastModified = value
      lines += pairs[i] + ': ' + value + '\r\n'
    }
    if (declared > this.maxResponseSize || (chunked && declared !== -1)) return null
    const reason = rlen > 0 ? b.latin1Slice(p + 10, p + 10 + rlen) : 'OK'
    const cap = new Capture(OutputCache.keyOf(req), q, req.cacheEpoch, reason, lines, ttl * 1000, declared, etag, lastModified, shared)
    cap.chunked = chunked
    if (end > bodyStart && !this.append(cap, b.subarray(bodyStart, end))) return null
    return cap
  }

  /** Body bytes of a captured response. @returns {boolean} false: too large, dropped */
  /** body: a Buffer or a list of them (a frame's pieces), not ours to keep: copied. */
  append (cap, body) {
    if (Array.isArray(body)) {
      for (let i = 0; i < body.length; i++) if (!this.append(cap, body[i])) return false
      return true
    }
    cap.bytes += body.length
    if (cap.bytes > this.maxResponseSize) return false
    cap.chunks.push(Buffer.from(body))
    return true
  }

  /** The captured response is complete: stored, unless its app changed meanwhile. */
  commit (cap) {
    const q = cap.queue
    if (q.deleted || q.cacheEpoch !== cap.epoch) return
    if (cap.declared !== -1 && cap.declared !== cap.bytes) return
    let body = cap.chunks.length === 1 ? cap.chunks[0] : Buffer.concat(cap.chunks, cap.bytes)
    if (cap.chunked) {
      // trailers are not stored (a cached answer has a Content-Length, no trailer section)
      const seen = { trailers: false }
      body = unchunk(body, seen)
      if (body === null || seen.trailers) return
    }
    const now = Date.now()
    const e = new Entry(q, cap.reason, cap.lines, body, now, cap.ttlMs, cap.etag, cap.lastModified, cap.shared, cap.key.length)
    if (e.size > this.lru.maxSize) return
    // the least recently used entry makes room for a new key (lru-cache counts it an eviction)
    if (this.lru.size >= this.maxEntries && !this.lru.has(cap.key)) this.lru.pop()
    this.lru.set(cap.key, e, { ttl: cap.ttlMs })
    if (this.lru.peek(cap.key) !== e) return
    q.cacheStats.entries++
    q.cacheStats.bytes += e.size
    q.cacheStats.stores++
  }

  /** Empties q's entries. */
  clearQueue (q) {
    if (q.cacheStats.entries === 0) return
    for (const [key, e] of this.lru.entries()) {
      if (e.queue === q) this.lru.delete(key)
    }
  }

  /** Drops expired entries (their bytes are freed before the LRU would reach them). */
  purge () {
    this.lru.purgeStale()
  }
}

/** Whether the client sent a certificate on the request's connection (an encoded TlsInfo). */
function hasClientCert (conn) {
  const tls = conn.tls
  return tls !== null && tls !== undefined && (tls[0] & TLS_CLIENT_CERT) !== 0
}

/** "Name: value\r\n" lines as [name, value, ...]; null when a line is not one. */
function pairsOf (text) {
  const out = []
  let ls = 0
  while (ls < text.length) {
    let le = text.indexOf('\r\n', ls)
    if (le === -1) le = text.length
    const colon = text.indexOf(':', ls)
    if (colon <= ls || colon > le) return null
    out.push(text.slice(ls, colon), text.slice(colon + 1, le).trim())
    ls = le + 2
  }
  return out
}

// -------------------------------------------------------------------------
// answering from an entry

/** What the request asks of the entry: a range, or a condition. */
function serve (req, e, now) {
  const raw = req.head.rawHeaders
  let range = null
  let inm = null
  let ims = null
  let ifRange = null
  for (let i = 0; i < raw.length; i += 2) {
    const n = raw[i]
    if (n.length === 5) {
      if (n.toLowerCase() === 'range') range = raw[i + 1]
    } else if (n.length === 8) {
      if (n.toLowerCase() === 'if-range') ifRange = raw[i + 1]
    } else if (n.length === 13) {
      if (n.toLowerCase() === 'if-none-match') inm = inm === null ? raw[i + 1] : inm + ',' + raw[i + 1]
    } else if (n.length === 17) {
      if (n.toLowerCase() === 'if-modified-since') ims = raw[i + 1]
    }
  }
  const age = e.ageAt(now)
  if ((inm !== null || ims !== null) && notModified(e, inm, ims)) {
    let lines = ''
    for (const line of e.lines.split('\r\n')) {
      const colon = line.indexOf(':')
      if (colon > 0 && IN_304.has(line.slice(0, colon).toLowerCase())) lines += line + '\r\n'
    }
    req.respondFromCache(304, 'Not Modified', lines + 'Age: ' + age + '\r\n', null)
    return
  }
  if (range !== null && !req.isHead && (ifRange === null || rangeStillValid(e, ifRange.trim()))) {
    const r = parseRange(range, e.body.length)
    if (r === false) {
      req.respondFromCache(416, 'Range Not Satisfiable', e.lines + 'Content-Range: bytes */' + e.body.length + '\r\nContent-Length: 0\r\nAge: ' + age + '\r\n', null)
      return
    }
    if (r !== null) {
      const [a, z] = r
      req.respondFromCache(206, 'Partial Content', e.lines + 'Content-Range: bytes ' + a + '-' + z + '/' + e.body.length +
        '\r\nContent-Length: ' + (z - a + 1) + '\r\nAge: ' + age + '\r\n', e.body.subarray(a, z + 1))
      return
    }
  }
  req.respondFromCache(200, e.reason, null, null, e, age)
}

/**
 * RFC 9110 13.1.2 and 13.1.3: If-None-Match (weak comparison, or "*") decides when
 * present; else If-Modified-Since against the entry's Last-Modified.
 */
function notModified (e, inm, ims) {
  if (inm !== null) {
    if (inm.trim() === '*') return true
    if (e.etag === null) return false
    const mine = weak(e.etag)
    return inm.split(',').some((t) => weak(t.trim()) === mine)
  }
  if (e.lastModified === null) return false
  const since = Date.parse(ims)
  const modified = Date.parse(e.lastModified)
  return Number.isFinite(since) && Number.isFinite(modified) && modified <= since
}

/**
 * RFC 9110 13.1.5: If-Range holds when it names the entry's ETag by strong comparison
 * (neither weak) or is exactly its Last-Modified date; otherwise the whole body goes out.
 */
function rangeStillValid (e, ifRange) {
  if (ifRange.startsWith('"') || ifRange.startsWith('W/')) {
    return e.etag !== null && !ifRange.startsWith('W/') && !e.etag.startsWith('W/') && ifRange === e.etag
  }
  return e.lastModified !== null && ifRange === e.lastModified
}

function weak (tag) {
  return tag.startsWith('W/') ? tag.slice(2) : tag
}

/**
 * One byte range (RFC 9110 14.1.2) of a body of `size` bytes.
 * @returns {[number, number]|null|false} [first, last]; null: not one satisfiable-or-not
 *   range we answer (the whole body goes out, as RFC 9110 14.2 allows); false: 416
 */
function parseRange (value, size) {
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(value)
  if (m === null || (m[1] === '' && m[2] === '')) return null
  if (size === 0) return false // no byte of an empty body can be asked for
  if (m[1] === '') {
    const n = Number(m[2])
    if (n === 0) return false
    return [Math.max(0, size - n), size - 1]
  }
  const a = Number(m[1])
  const z = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1)
  if (m[2] !== '' && Number(m[2]) < a) return null
  if (a >= size) return false
  return [a, z]
}

module.exports = { OutputCache, Entry, parseRange, pairsOf }
