'use strict'

// The hub's HTTP/1.1 request parser (RFC 9112), written for the router's hot path.
//
// Why not node's: llhttp is not exposed for requests by any public API, and pure-JS
// parsers are slower than this one. The parser works on the Buffer with byte compares
// and table lookups and makes strings only for what it hands out (latin1, as node does).
//
// Shape: a line-oriented state machine. Lines (request line, header and trailer lines,
// chunk-size lines) are parsed in place from the caller's buffer; only a line cut by a
// buffer boundary is copied into a small pending buffer, finished with the next
// execute() (an indexOf of LF first, so a line fed byte by byte costs linear time).
// Bodies are handed out as slices of the input (zero-copy), decoded chunk data too.
//
// Decisions where the RFC leaves room (all answer 400 unless noted):
// - Line ends: CRLF everywhere. A bare LF is rejected also in header lines: we are the
//   edge, so tolerance buys nothing and a second parser disagreeing on it is how request
//   smuggling starts (RFC 9112 2.2 only says MAY). node rejects it too.
// - Empty lines before the request line are skipped (RFC 9112 2.2) and not counted.
// - obs-fold is rejected (RFC 9112 5.2). So is whitespace before the colon (5.1).
// - Methods: node's http.METHODS, exactly (methods are case-sensitive, RFC 9110 9.1);
//   any other token is 400, as node answers it (llhttp knows only those). HTTP.SYS
//   would pass an unknown verb through, and an app would see `post` that express
//   routes as POST while its own `req.method === 'POST'` check says no.
// - request-target: origin-form, absolute-form (`scheme://...`), or `*` with OPTIONS.
//   authority-form (CONNECT) is 400: a URL-prefix router has nothing to route it to. Bytes outside
//   VCHAR (e.g. raw UTF-8) are 400, as in node. With `connect` (a port a standalone server
//   owns: node's server) CONNECT is served as llhttp serves it: any target, no body (a
//   Content-Length or Transfer-Encoding is not a body's framing), `upgrade` set, so the
//   bytes after its head are the tunnel's.
// - Version: `HTTP/d.d` or 400; any version but 1.0/1.1 is 505. The HTTP/2 preface
//   (`PRI * HTTP/2.0`) is 400, for its method, as node answers it.
// - Host: HTTP/1.1 needs one; repeats must be identical; the value must be made of
//   URI host/port characters (RFC 9112 3.2 says 400 for an invalid Host; node does not
//   check, but the router routes on it; strictHost false: not checked), and its port,
//   like an absolute-form target's, digits only (RFC 3986 3.2.3; HTTP.SYS refuses the
//   rest, and the app and the output cache see the port: request-target.js).
// - Content-Length: digits only; repeats or list members must be identical (RFC 9110
//   8.6); a value beyond 2^53 or above maxBodySize is 413.
// - Transfer-Encoding: with Content-Length, in HTTP/1.0, chunked not last or applied
//   twice: 400 (RFC 9112 6.1, 6.3). Codings before the final chunked are passed through
//   undecoded like node does, so no 501 is ever produced (folded into 400).
// - Chunk lines: `hex [ext] CRLF`, ext per RFC 9112 7.1.1, no stray whitespace. Chunk
//   extensions are parsed and dropped; more than maxHeaderSize of them in one message is
//   413 (what node does against CVE-2024-22019).
// - maxHeaderSize counts the request line, the header lines and the empty line, CRLFs
//   included; exactly maxHeaderSize bytes pass. Trailers have their own maxHeaderSize.
//   Crossing it is 431, reported as soon as the bytes seen prove it.
// - Trailers are exposed as head.trailers ([name, value, ...], set before onComplete),
//   null when there were none.
// - `lenient` (node's insecureHTTPParser, on a port a standalone server owns): a header
//   value may hold any byte but CR and LF, as llhttp's lenient header parsing takes it.
//   Nothing else is relaxed: a bare LF, obs-fold and Content-Length with
//   Transfer-Encoding stay 400 (what request smuggling is made of).
// - Upgrade requests are parsed like others (their body framed by Content-Length or
//   chunked); a caller that switches protocols pauses in onHead or onComplete and takes
//   the bytes after execute()'s return value as opaque data.

const { METHODS } = require('node:http')
const { codes } = require('../errors')
const { isValidHostPort } = require('./request-target')

/**
 * Bad input: `new ParseError({ status, reason })`; `status` is what the router answers
 * before closing the connection.
 */
const ParseError = codes.ERR_HTTPSYS_HTTP_PARSE

/**
 * @typedef {object} RequestHead what onHead(head) receives, a new object per request
 * @property {string} method as sent (any token)
 * @property {string} url the request-target, undecoded
 * @property {number} versionMajor always 1
 * @property {number} versionMinor 0 or 1
 * @property {string[]} rawHeaders [name, value, ...]: case, order, repeats kept; OWS trimmed
 * @property {string} host the first Host value, or ''
 * @property {number} contentLength -1 without a Content-Length
 * @property {boolean} chunked
 * @property {boolean} keepAlive per HTTP/1.0 and 1.1 rules and the Connection tokens
 * @property {boolean} expectContinue `Expect: 100-continue` (HTTP/1.1)
 * @property {boolean} expectOther an Expect header with another expectation (HTTP/1.1)
 * @property {boolean} upgrade Connection: upgrade and an Upgrade header
 * @property {boolean} hasBody onBody calls may follow (chunked, or Content-Length > 0)
 * @property {string[]|null} trailers [name, value, ...] of a chunked body, set before onComplete
 */

const HTAB = 9
const LF = 10
const CR = 13
const SP = 32
const DQUOTE = 34
const COLON = 58
const SEMI = 59
const EQUALS = 61
const BSLASH = 92

const NEED_MORE = -1
const FAILED = -2

const S_IDLE = 0 // expecting a request line
const S_IDLE_LF = 1 // an empty line before the request line, LF pending
const S_HEADERS = 2
const S_BODY = 3 // Content-Length body
const S_CHUNK_SIZE = 4
const S_CHUNK_DATA = 5
const S_CHUNK_CR = 6
const S_CHUNK_LF = 7
const S_TRAILERS = 8
const S_DONE = 9 // message parsed to its end, onComplete deferred by pause()
const S_ERROR = 10

// what the header section said, as bits of one integer
const F_HOST = 1
const F_CL = 2
const F_CL_BIG = 4
const F_TE = 8
const F_TE_CHUNKED_LAST = 16
const F_TE_BAD = 32
const F_CLOSE = 64
const F_KEEP_ALIVE = 128
const F_CONN_UPGRADE = 256
const F_UPGRADE = 512
const F_CONTINUE = 1024
const F_EXPECT_OTHER = 2048

function byteTable (ranges, chars = '') {
  const t = new Uint8Array(256)
  for (const [a, b] of ranges) t.fill(1, a, b + 1)
  for (let i = 0; i < chars.length; i++) t[chars.charCodeAt(i)] = 1
  return t
}

const ALNUM = [[0x30, 0x39], [0x41, 0x5a], [0x61, 0x7a]]
// RFC 9110 5.6.2 tchar
const TCHAR = byteTable(ALNUM, '!#$%&\'*+-.^_`|~')
// request-target bytes: VCHAR
const TARGET = byteTable([[0x21, 0x7e]])
// RFC 9110 5.5 field-vchar, SP, HTAB (obs-text included)
const FVALUE = byteTable([[0x20, 0x7e], [0x80, 0xff]], '\t')
// the same for a lenient parser: every byte but CR and LF
const FVALUE_LENIENT = byteTable([[0x00, 0x09], [0x0b, 0x0c], [0x0e, 0xff]])
// RFC 9110 5.6.4 qdtext
const QDTEXT = byteTable([[0x23, 0x5b], [0x5d, 0x7e], [0x80, 0xff]], '\t !')
// RFC 3986 host (reg-name, IPv4, IP-literal) and port characters
const HOSTCH = byteTable(ALNUM, '-._~%!$&\'()*+,;=:[]')
// RFC 3986 3.1 scheme characters after the first letter
const SCHEME = byteTable(ALNUM, '+-.')
const HEX = new Int8Array(256).fill(-1)
for (let i = 0; i < 10; i++) HEX[0x30 + i] = i
for (let i = 0; i < 6; i++) HEX[0x41 + i] = HEX[0x61 + i] = 10 + i

const VERSION_PREFIX = [72, 84, 84, 80, 47] // HTTP/

const KNOWN_METHODS = new Set(METHODS)
// Every beginning of a known method, so a partial request line with a method no known
// one starts with is refused before the rest arrives (as node does).
const METHOD_PREFIXES = new Set(METHODS.flatMap((m) => Array.from(m, (_, k) => m.slice(0, k + 1))))

// The list elements of a comma-separated header value (RFC 9110 5.6.1), without a
// callback or an allocation on the hot path: nextListElement() finds the next
// non-empty element at or after i, leaves its trimmed bounds in elementStart and
// elementEnd, and returns where the scan goes on (-1: no more elements).
let elementStart = 0
let elementEnd = 0

function nextListElement (buf, i, end) {
  while (i < end && (buf[i] === 44 || buf[i] === SP || buf[i] === HTAB)) i++
  if (i >= end) return -1
  const s = i
  while (i < end && buf[i] !== 44) i++
  let e = i
  while (buf[e - 1] === SP || buf[e - 1] === HTAB) e--
  elementStart = s
  elementEnd = e
  return i
}

const lower = (s) => Uint8Array.from(s, (ch) => ch.charCodeAt(0))
const N_HOST = lower('host')
const N_EXPECT = lower('expect')
const N_UPGRADE = lower('upgrade')
const N_CONNECTION = lower('connection')
const N_CONTENT_LENGTH = lower('content-length')
const N_TRANSFER_ENCODING = lower('transfer-encoding')
const V_CLOSE = lower('close')
const V_KEEP_ALIVE = lower('keep-alive')
const V_CHUNKED = lower('chunked')
const V_CONTINUE = lower('100-continue')

class RequestParser {
  /**
   * @param {object} [options]
   * @param {number} [options.maxHeaderSize=16384] bytes of request line + headers (431 beyond)
   * @param {number} [options.maxBodySize=Infinity] body bytes (413 beyond)
   * @param {boolean} [options.connect=false] serve CONNECT as node does (else 400)
   * @param {boolean} [options.lenient=false] node's insecureHTTPParser: any header value byte but CR, LF
   * @param {object} handlers onHead(head), onBody(chunk), onComplete(), onError(err);
   *   called as methods of `handlers`. A handler may call pause(); it must not call
   *   execute() or reset() on this parser.
   */
  constructor ({ maxHeaderSize = 16384, maxBodySize = Infinity, requireHost = true, strictHost = true, connect = false, lenient = false } = {}, handlers) {
    this.maxHeaderSize = maxHeaderSize
    this.connect = connect
    this._fvalue = lenient ? FVALUE_LENIENT : FVALUE
    this.requireHost = requireHost // node's requireHostHeader
    // Host made of URI host/port characters only: the router routes on it (a server
    // that owns its port, routed by port alone, takes any value, as node does)
    this.strictHost = strictHost
    this.maxBodySize = maxBodySize
    /** true between pause() and resume(); execute() then consumes nothing. */
    this.paused = false
    this._h = handlers
    this._running = false
    this._state = S_IDLE
    this._line = null // pending bytes of a line cut by a buffer boundary
    this._lineLen = 0
    this._headBytes = 0 // bytes of the header (or trailer) section so far
    this._remaining = 0 // of the Content-Length body or of the current chunk
    this._bodyTotal = 0
    this._extBytes = 0
    this._head = null // of the message whose body is being parsed
    // the head under construction
    this._method = ''
    this._url = ''
    this._minor = 1
    this._raw = null
    this._trailers = null
    this._host = ''
    this._cl = -1
    this._flags = 0
    // One latin1 string of the head's first bytes, cut with substring(): one native
    // call per request instead of two per header. Valid only for `_winBuf` during one
    // execute(), because callers may reuse their Buffer for the next read.
    this._win = ''
    this._winBuf = null
    this._winStart = 0
    this._winEnd = 0
    this._winSize = 1024 // last head's size + slack: heads on a connection look alike
  }

  /**
   * Parses as much of `buf` as it can and calls the handlers in order.
   * @param {Buffer} buf
   * @returns {number} bytes consumed: all of them unless a handler paused the parser
   *   (then the caller keeps the rest for after resume()) or the input was bad.
   */
  execute (buf) {
    if (this.paused || this._running || this._state === S_ERROR) return 0
    this._running = true
    let pos = 0
    if (this._state === S_DONE) this._complete()
    if (this._lineLen !== 0 && !this.paused && this._state !== S_ERROR) pos = this._finishLine(buf)
    if (!this.paused && this._state !== S_ERROR) pos = this._run(buf, pos)
    this._winBuf = null
    this._running = false
    return pos
  }

  /** Stops execute() right after the current handler returns. */
  pause () {
    this.paused = true
  }

  /**
   * Lets execute() go on. When the message had already been parsed to its end (a
   * request without a body paused in onHead, or paused in its last onBody), onComplete
   * is called from here, because no more input may ever come for it. It may pause again.
   */
  resume () {
    if (!this.paused) return
    this.paused = false
    if (this._state === S_DONE && !this._running) {
      this._running = true
      this._complete()
      this._running = false
    }
  }

  /**
   * The client closed its side.
   * @returns {ParseError|null} an error (status 400) when a request was in progress
   */
  finish () {
    const s = this._state
    if (s === S_ERROR || s === S_DONE || s === S_IDLE_LF || (s === S_IDLE && this._lineLen === 0)) return null
    this._state = S_ERROR
    this._lineLen = 0
    return new ParseError({ status: 400, reason: 'connection closed before the request was complete' })
  }

  /** Whether part of a request head has been read (the head timeout runs). */
  inHead () {
    return this._state === S_HEADERS || this._state === S_IDLE_LF || (this._state === S_IDLE && this._lineLen > 0)
  }

  /** Back to a fresh connection's state (not from inside a handler). */
  reset () {
    this.paused = false
    this._running = false
    this._state = S_IDLE
    this._lineLen = 0
    this._headBytes = 0
    this._remaining = 0
    this._head = null
    this._raw = null
    this._trailers = null
    this._winBuf = null
  }

  // -------------------------------------------------------------------------

  _run (buf, pos) {
    const end = buf.length
    while (pos < end) {
      switch (this._state) {
        case S_BODY: {
          const rem = this._remaining
          if (end - pos < rem) {
            this._remaining = rem - (end - pos)
            this._h.onBody(pos === 0 ? buf : buf.subarray(pos, end))
            return end
          }
          this._remaining = 0
          this._state = S_DONE
          this._h.onBody(pos === 0 && rem === end ? buf : buf.subarray(pos, pos + rem))
          pos += rem
          if (this.paused) return pos
          this._complete()
          if (this.paused) return pos
          break
        }
        case S_CHUNK_DATA: {
          const rem = this._remaining
          const n = end - pos < rem ? end - pos : rem
          this._remaining = rem - n
          if (n === rem) this._state = S_CHUNK_CR
          this._h.onBody(pos === 0 && n === end ? buf : buf.subarray(pos, pos + n))
          pos += n
          if (this.paused) return pos
          break
        }
        case S_CHUNK_CR:
          if (buf[pos] !== CR) { this._fail(400, 'missing CRLF after chunk data'); return pos }
          this._state = S_CHUNK_LF
          pos++
          break
        case S_CHUNK_LF:
          if (buf[pos] !== LF) { this._fail(400, 'missing CRLF after chunk data'); return pos }
          this._state = S_CHUNK_SIZE
          pos++
          break
        case S_IDLE_LF:
          if (buf[pos] !== LF) { this._fail(400, 'bare CR before the request line'); return pos }
          this._state = S_IDLE
          pos++
          break
        case S_DONE:
          this._complete()
          if (this.paused) return pos
          break
        case S_IDLE:
          if (buf[pos] === CR) { // an empty line before the request line (RFC 9112 2.2)
            if (pos + 1 === end) {
              this._state = S_IDLE_LF
              return end
            }
            if (buf[pos + 1] !== LF) { this._fail(400, 'bare CR before the request line'); return pos }
            pos += 2
            break
          }
          {
            const w = end - pos > this._winSize ? pos + this._winSize : end
            this._win = buf.latin1Slice(pos, w)
            this._winBuf = buf
            this._winStart = pos
            this._winEnd = w
          }
        // falls through: a line state
        default: {
          const allowed = this._allowance()
          const lim = end - pos > allowed ? pos + allowed : end
          const next = this._parseLine(buf, pos, lim)
          if (next >= 0) {
            pos = next
            if (this.paused || this._state === S_ERROR) return pos
            break
          }
          if (next === FAILED) return pos
          if (lim < end) {
            this._fail(this._limitStatus(), this._limitReason())
            return pos
          }
          this._keep(buf, pos, end)
          return end
        }
      }
    }
    return pos
  }

  // Completes a line cut by the previous buffer's end with the head of `buf`.
  _finishLine (buf) {
    const lf = buf.indexOf(LF)
    const take = lf === -1 ? buf.length : lf + 1
    const allowed = this._allowance()
    // No more is kept than the limit needs: the rest of an over-long line is refused anyway.
    this._keep(buf, 0, Math.min(take, Math.max(allowed + 1 - this._lineLen, 0)))
    if (this._lineLen > allowed) {
      // The verdict one buffer gets: a bad byte within the allowance is that line's 400,
      // only a line that is fine up to the limit is the limit's status.
      if (this._parseLine(this._line, 0, allowed) !== FAILED && this._state !== S_ERROR) {
        this._fail(this._limitStatus(), this._limitReason())
      }
      return 0
    }
    if (lf === -1) {
      // Garbage (a TLS hello, a typo'd version) is answered without waiting for a line
      // end; only while the line is short, so byte-sized reads cannot make it quadratic.
      if (this._state === S_IDLE && this._lineLen <= 64) this._requestLine(this._line, 0, this._lineLen)
      return take
    }
    const len = this._lineLen
    this._lineLen = 0
    const next = this._parseLine(this._line, 0, len)
    if (next === NEED_MORE) this._fail(400, 'malformed line')
    return take
  }

  _keep (buf, from, to) {
    const need = this._lineLen + to - from
    if (this._line === null || this._line.length < need) {
      const grown = Buffer.allocUnsafe(Math.max(256, need * 2))
      if (this._lineLen !== 0) this._line.copy(grown, 0, 0, this._lineLen)
      this._line = grown
    }
    buf.copy(this._line, this._lineLen, from, to)
    this._lineLen = need
  }

  // How long the next line may be before a limit is crossed.
  _allowance () {
    return this._state === S_CHUNK_SIZE ? this.maxHeaderSize : this.maxHeaderSize - this._headBytes
  }

  _limitStatus () {
    return this._state === S_CHUNK_SIZE ? 413 : 431
  }

  _limitReason () {
    if (this._state === S_CHUNK_SIZE) return 'chunk extensions too large'
    return this._state === S_TRAILERS ? 'trailer section too large' : 'request header section too large'
  }

  // Parses one line starting at `a`; returns the offset after its LF, NEED_MORE when
  // `end` cuts it, or FAILED (after reporting the error).
  _parseLine (buf, a, end) {
    if (a === end) return NEED_MORE
    switch (this._state) {
      case S_IDLE:
        return this._requestLine(buf, a, end)
      case S_HEADERS: {
        if (buf[a] === CR) {
          if (a + 1 === end) return NEED_MORE
          if (buf[a + 1] !== LF) return this._fail(400, 'bare CR in the header section')
          this._headBytes += 2
          this._endHead()
          return a + 2
        }
        const next = this._fieldLine(buf, a, end, false)
        if (next >= 0) this._headBytes += next - a
        return next
      }
      case S_CHUNK_SIZE:
        return this._chunkSizeLine(buf, a, end)
      case S_TRAILERS: {
        if (buf[a] === CR) {
          if (a + 1 === end) return NEED_MORE
          if (buf[a + 1] !== LF) return this._fail(400, 'bare CR in the trailer section')
          this._head.trailers = this._trailers
          this._complete()
          return a + 2
        }
        const next = this._fieldLine(buf, a, end, true)
        if (next >= 0) this._headBytes += next - a
        return next
      }
    }
    return this._fail(400, 'unexpected state')
  }

  _requestLine (buf, a, end) {
    let i = a
    while (i < end && TCHAR[buf[i]] === 1) i++
    if (i === end) {
      if (i - a > 16 || !METHOD_PREFIXES.has(buf.latin1Slice(a, i))) return this._fail(400, 'unknown method')
      return NEED_MORE
    }
    const methodEnd = i
    if (buf[i] !== SP || i === a) return this._fail(400, 'invalid method')
    // checked as soon as the token is complete: node refuses it at that byte too
    const method = methodString(buf, a, methodEnd - a)
    if (!KNOWN_METHODS.has(method)) return this._fail(400, 'unknown method')
    // A shared router opens no tunnels (README "CONNECT"): every CONNECT is refused,
    // whatever its target. A 2xx to one would tell a proxy in front that a tunnel is up,
    // and what it then relays blindly would reach the app as requests nobody checked.
    // Where the server owns its port (`connect`), the tunnel is the app's, as on node.
    if (method === 'CONNECT' && !this.connect) return this._fail(400, 'CONNECT request-target: the router opens no tunnels')
    const ts = ++i
    while (i < end && TARGET[buf[i]] === 1) i++
    if (i === end) return NEED_MORE
    const te = i
    if (buf[i] !== SP) {
      return this._fail(400, buf[i] === CR ? 'missing HTTP version' : 'invalid character in request-target')
    }
    if (te === ts) return this._fail(400, 'empty request-target')
    i++
    if (end - i < 10) { // report a bad version before the line is complete
      for (let k = 0; i + k < end; k++) {
        if (!versionByteOk(k, buf[i + k])) return this._fail(400, 'invalid HTTP version')
      }
      return NEED_MORE
    }
    for (let k = 0; k < 10; k++) {
      if (!versionByteOk(k, buf[i + k])) return this._fail(400, 'invalid HTTP version')
    }
    const major = buf[i + 5] - 48
    const minor = buf[i + 7] - 48
    if (major !== 1 || minor > 1) return this._fail(505, 'HTTP version not supported')
    if (buf[ts] !== 47 && method !== 'CONNECT') { // not origin-form (llhttp takes any CONNECT target)
      if (buf[ts] === 42 && te - ts === 1) {
        if (method !== 'OPTIONS') {
          return this._fail(400, 'asterisk-form request-target outside OPTIONS')
        }
      } else if (!isAbsoluteForm(buf, ts, te)) {
        return this._fail(400, 'request-target is neither origin-form nor absolute-form')
      }
    }
    this._method = method
    this._url = te - ts === 1 && buf[ts] === 47 ? '/' : this._str(buf, ts, te)
    // an absolute-form target's authority becomes the Host the app sees (urlprefix.js)
    if (this.strictHost && buf[ts] !== 47 && buf[ts] !== 42 && method !== 'CONNECT' && !isValidHostPort(authorityOf(this._url))) {
      return this._fail(400, 'invalid port in the request-target')
    }
    this._minor = minor
    this._raw = []
    this._trailers = null
    this._host = ''
    this._cl = -1
    this._flags = 0
    this._headBytes = i + 10 - a
    this._state = S_HEADERS
    return i + 10
  }

  _fieldLine (buf, a, end, trailer) {
    let i = a
    while (i < end && TCHAR[buf[i]] === 1) i++
    if (i === end) return NEED_MORE
    const nameEnd = i
    if (buf[i] !== COLON) {
      const c = buf[i]
      if (c !== SP && c !== HTAB) return this._fail(400, 'invalid character in header name')
      return this._fail(400, i === a ? 'obsolete line folding' : 'whitespace before the colon of a header')
    }
    if (i === a) return this._fail(400, 'empty header name')
    i++
    while (i < end && (buf[i] === SP || buf[i] === HTAB)) i++
    const vs = i
    const fvalue = this._fvalue
    while (i < end && fvalue[buf[i]] === 1) i++
    if (i === end) return NEED_MORE
    if (buf[i] !== CR) return this._fail(400, 'invalid character in header value')
    if (i + 1 === end) return NEED_MORE
    if (buf[i + 1] !== LF) return this._fail(400, 'bare CR in header value')
    let ve = i
    while (ve > vs && (buf[ve - 1] === SP || buf[ve - 1] === HTAB)) ve--
    const name = this._str(buf, a, nameEnd)
    const value = ve === vs ? '' : this._str(buf, vs, ve)
    if (trailer) {
      if (this._trailers === null) this._trailers = []
      this._trailers.push(name, value)
      return i + 2
    }
    this._raw.push(name, value)
    const len = nameEnd - a
    if (len >= 4 && len <= 17 && !this._known(buf, a, len, vs, ve, value)) return FAILED
    return i + 2
  }

  _str (buf, a, b) {
    if (buf === this._winBuf && b <= this._winEnd) return this._win.substring(a - this._winStart, b - this._winStart)
    return buf.latin1Slice(a, b)
  }

  // Reads the header fields the router acts on; false after reporting an error.
  _known (buf, a, len, vs, ve, value) {
    switch (len) {
      case 4:
        if (!nameIs(buf, a, N_HOST)) return true
        if (this._flags & F_HOST) {
          if (value !== this._host) return this._failed(400, 'several different Host headers')
          return true
        }
        if (this.strictHost) {
          for (let i = vs; i < ve; i++) {
            if (HOSTCH[buf[i]] !== 1) return this._failed(400, 'invalid Host header')
          }
          if (!isValidHostPort(value)) return this._failed(400, 'invalid port in Host header')
        }
        this._flags |= F_HOST
        this._host = value
        return true
      case 6:
        if (nameIs(buf, a, N_EXPECT)) {
          this._flags |= ve - vs === 12 && nameIs(buf, vs, V_CONTINUE) ? F_CONTINUE : F_EXPECT_OTHER
        }
        return true
      case 7:
        if (nameIs(buf, a, N_UPGRADE) && ve > vs) this._flags |= F_UPGRADE
        return true
      case 10:
        if (nameIs(buf, a, N_CONNECTION)) this._connection(buf, vs, ve)
        return true
      case 14:
        return nameIs(buf, a, N_CONTENT_LENGTH) ? this._contentLength(buf, vs, ve) : true
      case 17:
        if (nameIs(buf, a, N_TRANSFER_ENCODING)) this._transferEncoding(buf, vs, ve)
        return true
    }
    return true
  }

  _connection (buf, i, end) {
    while ((i = nextListElement(buf, i, end)) !== -1) {
      const s = elementStart
      const n = elementEnd - s
      if (n === 5 && nameIs(buf, s, V_CLOSE)) this._flags |= F_CLOSE
      else if (n === 10 && nameIs(buf, s, V_KEEP_ALIVE)) this._flags |= F_KEEP_ALIVE
      else if (n === 7 && nameIs(buf, s, N_UPGRADE)) this._flags |= F_CONN_UPGRADE
    }
  }

  _transferEncoding (buf, i, end) {
    let f = this._flags | F_TE
    while ((i = nextListElement(buf, i, end)) !== -1) {
      if (elementEnd - elementStart === 7 && nameIs(buf, elementStart, V_CHUNKED)) {
        if (f & F_TE_CHUNKED_LAST) f |= F_TE_BAD // chunked twice
        f |= F_TE_CHUNKED_LAST
      } else {
        if (f & F_TE_CHUNKED_LAST) f |= F_TE_BAD // a coding after chunked
        f &= ~F_TE_CHUNKED_LAST
      }
    }
    this._flags = f
  }

  _contentLength (buf, i, end) {
    let seen = false
    while (i < end) {
      const c = buf[i]
      if (c === 44 || c === SP || c === HTAB) {
        i++
        continue
      }
      let v = 0
      const s = i
      while (i < end && buf[i] >= 48 && buf[i] <= 57) v = v * 10 + (buf[i++] - 48) // digit first: v * 10 + byte could pass 2^53 and round
      const e = i
      while (i < end && (buf[i] === SP || buf[i] === HTAB)) i++
      if (e === s || (i < end && buf[i] !== 44)) return this._failed(400, 'invalid Content-Length')
      if (v > Number.MAX_SAFE_INTEGER) this._flags |= F_CL_BIG
      if ((this._flags & F_CL) && v !== this._cl) return this._failed(400, 'several different Content-Length values')
      this._flags |= F_CL
      this._cl = v
      seen = true
    }
    return seen || this._failed(400, 'empty Content-Length')
  }

  _endHead () {
    const f = this._flags
    const minor = this._minor
    let chunked = false
    let cl = -1
    if (minor === 1 && (f & F_HOST) === 0 && this.requireHost) return this._fail(400, 'missing Host header')
    if (f & F_TE) {
      if (minor === 0) return this._fail(400, 'Transfer-Encoding in an HTTP/1.0 request')
      if (f & F_CL) return this._fail(400, 'both Content-Length and Transfer-Encoding')
      if ((f & F_TE_BAD) || (f & F_TE_CHUNKED_LAST) === 0) {
        return this._fail(400, 'Transfer-Encoding whose final coding is not chunked')
      }
      chunked = true
    } else if (f & F_CL) {
      if ((f & F_CL_BIG) || this._cl > this.maxBodySize) return this._fail(413, 'Content-Length above the body size limit')
      cl = this._cl
    }
    // CONNECT has no body: what follows its head is the tunnel's (llhttp upgrades at once)
    const connect = this._method === 'CONNECT'
    if (connect) {
      chunked = false
      cl = -1
    }
    const head = {
      method: this._method,
      url: this._url,
      versionMajor: 1,
      versionMinor: minor,
      rawHeaders: this._raw,
      host: this._host,
      contentLength: cl,
      chunked,
      keepAlive: (f & F_CLOSE) === 0 && (minor === 1 || (f & F_KEEP_ALIVE) !== 0),
      // node honours Expect on HTTP/1.1 only (RFC 9110 10.1.1: a 1.0 client cannot wait)
      expectContinue: minor === 1 && (f & F_CONTINUE) !== 0,
      expectOther: minor === 1 && (f & (F_CONTINUE | F_EXPECT_OTHER)) === F_EXPECT_OTHER,
      upgrade: connect || (f & (F_CONN_UPGRADE | F_UPGRADE)) === (F_CONN_UPGRADE | F_UPGRADE),
      hasBody: chunked || cl > 0,
      trailers: null
    }
    this._raw = null
    this._head = head
    this._winBuf = null
    this._winSize = this._headBytes + 64
    if (chunked) {
      this._state = S_CHUNK_SIZE
      this._bodyTotal = 0
      this._extBytes = 0
    } else if (cl > 0) {
      this._state = S_BODY
      this._remaining = cl
    } else {
      this._state = S_DONE
    }
    this._h.onHead(head)
    if (this._state === S_DONE && !this.paused) this._complete()
  }

  _chunkSizeLine (buf, a, end) {
    let i = a
    let size = 0
    while (i < end && HEX[buf[i]] !== -1) {
      size = size * 16 + HEX[buf[i++]]
      if (size > Number.MAX_SAFE_INTEGER) return this._fail(413, 'chunk size too large')
    }
    if (i === end) return NEED_MORE
    if (i === a) return this._fail(400, 'invalid chunk size')
    const extStart = i
    // chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )
    while (buf[i] !== CR) {
      while (i < end && (buf[i] === SP || buf[i] === HTAB)) i++
      if (i === end) return NEED_MORE
      if (buf[i] !== SEMI) return this._fail(400, 'invalid chunk extension')
      i = skipBws(buf, i + 1, end)
      const ns = i
      while (i < end && TCHAR[buf[i]] === 1) i++
      if (i === end) return NEED_MORE
      if (i === ns) return this._fail(400, 'invalid chunk extension')
      const afterName = i
      i = skipBws(buf, i, end)
      if (i === end) return NEED_MORE
      if (buf[i] !== EQUALS) {
        i = afterName // BWS before CR is not allowed, before ";" it is
        continue
      }
      i = skipBws(buf, i + 1, end)
      if (i === end) return NEED_MORE
      if (buf[i] === DQUOTE) {
        i++
        for (;;) {
          if (i >= end) return NEED_MORE
          const c = buf[i]
          if (c === DQUOTE) break
          if (c === BSLASH) {
            if (i + 1 === end) return NEED_MORE
            if (FVALUE[buf[i + 1]] !== 1) return this._fail(400, 'invalid chunk extension')
            i += 2
          } else if (QDTEXT[c] === 1) {
            i++
          } else {
            return this._fail(400, 'invalid chunk extension')
          }
        }
        i++
      } else {
        const vs = i
        while (i < end && TCHAR[buf[i]] === 1) i++
        if (i === end) return NEED_MORE
        if (i === vs) return this._fail(400, 'invalid chunk extension')
      }
      if (i === end) return NEED_MORE
    }
    if (i + 1 === end) return NEED_MORE
    if (buf[i + 1] !== LF) return this._fail(400, 'bare CR in chunk size line')
    this._extBytes += i - extStart
    if (this._extBytes > this.maxHeaderSize) return this._fail(413, 'chunk extensions too large')
    if (size === 0) {
      this._state = S_TRAILERS
      this._headBytes = 0
      this._trailers = null
    } else {
      this._bodyTotal += size
      if (this._bodyTotal > this.maxBodySize) return this._fail(413, 'chunked body above the body size limit')
      this._remaining = size
      this._state = S_CHUNK_DATA
    }
    return i + 2
  }

  _complete () {
    this._state = S_IDLE
    this._head = null
    this._headBytes = 0
    this._h.onComplete()
  }

  // Reports bad input once and stays failed; returns FAILED so parse steps can return it.
  _fail (status, reason) {
    this._state = S_ERROR
    this._lineLen = 0
    this._raw = null
    const err = new ParseError({ status, reason })
    if (typeof this._h.onError === 'function') this._h.onError(err)
    return FAILED
  }

  _failed (status, reason) {
    this._fail(status, reason)
    return false
  }
}

// Byte k of `HTTP/d.d\r\n`.
function versionByteOk (k, c) {
  if (k < 5) return c === VERSION_PREFIX[k]
  if (k === 5 || k === 7) return c >= 48 && c <= 57
  if (k === 6) return c === 46
  return k === 8 ? c === CR : c === LF
}

// Compares a name case-insensitively with a lower-case literal. Only letters can
// match a letter after `| 0x20`, and the other literal bytes ('-', digits) are
// never hit by a non-token byte here (the input was validated as token or value).
function nameIs (buf, a, lit) {
  for (let k = 0; k < lit.length; k++) {
    if ((buf[a + k] | 0x20) !== lit[k]) return false
  }
  return true
}

function skipBws (buf, i, end) {
  while (i < end && (buf[i] === SP || buf[i] === HTAB)) i++
  return i
}

// RFC 9112 3.2.2 absolute-form, narrowed to `scheme://` (what http and https use), so
// that an authority-form `host:port` (CONNECT) is not taken for a scheme and a path.
function isAbsoluteForm (buf, a, end) {
  const c = buf[a] | 0x20
  if (c < 0x61 || c > 0x7a) return false
  for (let i = a + 1; i < end; i++) {
    if (buf[i] === COLON) return i + 2 < end && buf[i + 1] === 47 && buf[i + 2] === 47
    if (SCHEME[buf[i]] !== 1) return false
  }
  return false
}

// The authority of an absolute-form target (isAbsoluteForm passed): from "//" to the
// path, query or fragment.
function authorityOf (url) {
  const a = url.indexOf('//') + 2
  let e = a
  while (e < url.length && url[e] !== '/' && url[e] !== '?' && url[e] !== '#') e++
  return url.slice(a, e)
}

// The common methods as constants, so the hot path makes no string for them.
function methodString (buf, a, len) {
  const c = buf[a]
  switch (len) {
    case 3:
      if (c === 71 && buf[a + 1] === 69 && buf[a + 2] === 84) return 'GET'
      if (c === 80 && buf[a + 1] === 85 && buf[a + 2] === 84) return 'PUT'
      break
    case 4:
      if (c === 80 && buf[a + 1] === 79 && buf[a + 2] === 83 && buf[a + 3] === 84) return 'POST'
      if (c === 72 && buf[a + 1] === 69 && buf[a + 2] === 65 && buf[a + 3] === 68) return 'HEAD'
      break
  }
  return buf.latin1Slice(a, a + len)
}

module.exports = { RequestParser, ParseError }
