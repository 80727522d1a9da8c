'use strict'

// The hub <-> worker wire protocol (docs/wire-protocol.md has the byte layout and the
// rules). Shared by src/hub (router side) and src/queue/hub-client.js (worker side),
// owned by neither. Binary and length-prefixed because the per-request frames are the hot path;
// JSON only in the rare control frames.
//
// Speed comes from batching: both sides append frames to one FrameWriter during a tick
// and write what it holds with one socket write. Small payloads are copied into a slab;
// large bodies are queued by reference so they are never copied.

const { EXPECT_CONTINUE, EXPECT_OTHER, RESPONSE_CLOSE, RESPONSE_KEEP_OPEN } = require('./contract')
const { openKeys } = require('./tls-key')

// 2: REQUEST carries the client connection's TLS session (REQ_ENCRYPTED), HELLO the
// TLS material of an https server; 3: INFO, an interim (1xx) response, and the client
// connection's lifetime (CONN_CLOSED, CONN_END); 4: BODY_END's trailers; 5: the bytes
// read after an upgrade's head (REQ_HEAD), CONN_FIN, and a CONNECT tunnel after a 2xx
// (docs/wire-protocol.md); 6: a standalone server's connection lifecycle (CONN_OPEN to
// CONN_IDLE, and the worker's answer to CONN_FIN).
const VERSION = 6

const HEADER_SIZE = 9 // u32 length | u8 type | u32 id
const MAX_FRAME = 64 * 1024 * 1024
// Bodies at least this long travel by reference (a separate writev part), not copied.
const REF_THRESHOLD = 4096
const SLAB_SIZE = 64 * 1024

const T = Object.freeze({
  HELLO: 1,
  HELLO_OK: 2,
  HELLO_ERR: 3,
  REQUEST: 4,
  BODY: 5,
  BODY_END: 6,
  ABORT: 7,
  ACK: 8,
  READ: 9,
  RESPONSE: 10,
  RES_BODY: 11,
  WINDOW: 12,
  CONTINUE: 13,
  CANCEL: 14,
  DETACH: 15,
  DETACH_OK: 16,
  CLOSE: 17,
  INFO: 18,
  CONN_CLOSED: 19,
  CONN_END: 20,
  CONN_FIN: 21,
  // a port a standalone server owns (version 6): connFrames below
  CONN_OPEN: 22,
  CONN_ERROR: 23,
  CONN_TIMEOUT: 24,
  CONN_WRITE: 25,
  CONN_DESTROY: 26,
  CONN_IDLE: 27,
  CONN_HELD: 28,
  CONN_KEPT: 29
})

// REQUEST flags
const REQ_HAS_BODY = 1
const REQ_KEEP_ALIVE = 2
const REQ_ENCRYPTED = 4
const REQ_EXPECT_CONTINUE = 8
const REQ_UPGRADE = 16
const REQ_EXPECT_OTHER = 32 // an Expect header other than 100-continue (HTTP/1.1)
// the hub grants this request's response window (an h2 stream's: its connection's
// budget, hub h2-request.js): the worker starts with GRANTED_WINDOW_START of it and
// sends no body byte beyond what it was granted (docs/wire-protocol.md "Flow control")
const REQ_GRANTED_WINDOW = 64
// an upgrade (or CONNECT) request: the bytes the hub had read after its head follow the
// headers (and the TLS section) as u32 length + bytes; node hands them to 'upgrade' and
// 'connect' as `head` (docs/wire-protocol.md "Upgrades")
const REQ_HEAD = 128

// RESPONSE / RES_BODY flags: the contract's RESPONSE_MORE (1), RESPONSE_CLOSE (2),
// RESPONSE_OPAQUE (4) and RESPONSE_KEEP_OPEN (8) travel as they are; this one is the
// wire's own. A Connection header saying close sets CLOSE, unless KEEP_OPEN is set.
const RES_HAS_CONNECTION = 64 // the worker's headers carry a Connection header

// The worker's default receive window (REQUEST frames it may have unacknowledged), the
// request-body window a request starts with, and the response-body window per request.
const DEFAULT_RECEIVE_WINDOW = 128
const INITIAL_BODY_WINDOW = 64 * 1024
const RESPONSE_WINDOW = 256 * 1024
const GRANTED_WINDOW_START = 8 * 1024

const EMPTY = Buffer.alloc(0)

/**
 * Appends frames; take() hands out what was appended as a list of Buffers for one
 * socket write. Regions already handed out are never written again.
 */
class FrameWriter {
  constructor () {
    this.slab = Buffer.allocUnsafeSlow(SLAB_SIZE)
    this.start = 0
    this.pos = 0
    this.parts = []
    this.partBytes = 0
  }

  /** @returns {number} bytes waiting to be taken */
  get length () {
    return this.partBytes + this.pos - this.start
  }

  /** Makes room for n bytes at this.pos; returns this.pos. */
  reserve (n) {
    if (this.slab.length - this.pos < n) {
      this._cut()
      this.slab = Buffer.allocUnsafeSlow(n > SLAB_SIZE ? n : SLAB_SIZE)
      this.start = this.pos = 0
    }
    return this.pos
  }

  /** Queues a buffer by reference after what was written so far. */
  ref (buf) {
    this._cut()
    this.parts.push(buf)
    this.partBytes += buf.length
  }

  /** @returns {Buffer[]} everything appended since the last take() */
  take () {
    this._cut()
    const parts = this.parts
    this.parts = []
    this.partBytes = 0
    return parts
  }

  /** Writes everything appended so far to `socket`, several parts as one corked write. */
  writeTo (socket) {
    if (this.length === 0) return
    const parts = this.take()
    if (parts.length === 1) {
      socket.write(parts[0])
      return
    }
    socket.cork()
    for (let i = 0; i < parts.length; i++) socket.write(parts[i])
    socket.uncork()
  }

  _cut () {
    if (this.pos > this.start) {
      this.parts.push(this.slab.subarray(this.start, this.pos))
      this.partBytes += this.pos - this.start
      this.start = this.pos
    }
  }

  header (type, id, payloadLength) {
    const p = this.reserve(HEADER_SIZE + payloadLength)
    writeHeader(this.slab, p, type, id, payloadLength)
    this.pos = p + HEADER_SIZE
    return this.pos
  }

  /** A frame without payload (BODY_END, ABORT, CONTINUE, CANCEL, DETACH, DETACH_OK). */
  empty (type, id) {
    this.header(type, id, 0)
  }

  /** A frame with one u32 (ACK, READ, WINDOW). */
  u32 (type, id, value) {
    const p = this.header(type, id, 4)
    this.slab.writeUInt32LE(value >>> 0, p)
    this.pos = p + 4
  }

  /** HELLO / HELLO_OK carry the version byte first; HELLO_ERR and CLOSE do not. */
  json (type, id, value, withVersion) {
    const body = Buffer.from(JSON.stringify(value), 'utf8')
    const extra = withVersion ? 1 : 0
    let p = this.header(type, id, extra + body.length)
    if (withVersion) this.slab[p++] = VERSION
    body.copy(this.slab, p)
    this.pos = p + body.length
  }

  /** BODY: a piece of a request body. */
  body (id, chunk) {
    this.bytes(T.BODY, id, chunk, 0, chunk.length, -1)
  }

  /** RES_BODY: u8 flags, then bytes. chunk is a Buffer, a string (utf8) or null. */
  resBody (id, flags, chunk) {
    if (typeof chunk === 'string') {
      if (chunk.length * 3 < REF_THRESHOLD) {
        const p = this.header(T.RES_BODY, id, 1 + chunk.length * 3)
        this.slab[p] = flags
        const n = this.slab.utf8Write(chunk, p + 1)
        this.slab.writeUInt32LE(5 + 1 + n, p - HEADER_SIZE)
        this.pos = p + 1 + n
        return n
      }
      chunk = Buffer.from(chunk, 'utf8')
    } else if (chunk === null || chunk === undefined) {
      chunk = EMPTY
    }
    this.bytes(T.RES_BODY, id, chunk, 0, chunk.length, flags)
    return chunk.length
  }

  /** A frame of [u8 flags] + bytes; flags -1 means no flags byte. */
  bytes (type, id, buf, start, end, flags) {
    const n = end - start
    const extra = flags >= 0 ? 1 : 0
    if (n >= REF_THRESHOLD) {
      // only the header (and flags byte) is written here: reserving the whole payload
      // would allocate a slab of its size per large frame, which the body never uses
      // (a 1 MB slab per 1 MB response, and the major GCs its external memory brings)
      const p = this.reserve(HEADER_SIZE + extra) + HEADER_SIZE
      writeHeader(this.slab, p - HEADER_SIZE, type, id, extra + n)
      if (extra) this.slab[p] = flags
      this.pos = p + extra
      this.ref(start === 0 && end === buf.length ? buf : buf.subarray(start, end))
      return
    }
    const p = this.header(type, id, extra + n)
    if (extra) this.slab[p] = flags
    if (n > 0) buf.copy(this.slab, p + extra, start, end)
    this.pos = p + extra + n
  }

  /**
   * BODY_END (hub -> worker): the request body is complete. A chunked body's trailers
   * follow as u32 pairs + 2n str (latin1, as the request's headers); none: no payload.
   * @param {number} id
   * @param {string[]|null} trailers [name, value, ...]
   */
  bodyEnd (id, trailers) {
    if (trailers === null || trailers === undefined || trailers.length === 0) {
      this.empty(T.BODY_END, id)
      return
    }
    let size = 4
    for (let i = 0; i < trailers.length; i++) size += 2 + trailers[i].length
    let p = this.header(T.BODY_END, id, size)
    const b = this.slab
    b.writeUInt32LE(trailers.length >>> 1, p)
    p += 4
    for (let i = 0; i < trailers.length; i++) p = putStr(b, p, trailers[i])
    this.pos = p
  }

  /**
   * REQUEST (hub -> worker). Strings are latin1 (byte strings from the parser); each is
   * u16-length-prefixed, so no string may exceed 65535 bytes (the hub caps maxHeaderSize).
   * @param {number} id
   * @param {object} head the parser's head: method, url, versionMajor, versionMinor, rawHeaders
   * @param {object} conn remoteAddress, remotePort, localAddress, localPort, family (4|6), id
   * @param {number} flags REQ_*
   * @param {Buffer|null} [tail] an upgrade's: the bytes read after its head (REQ_HEAD)
   */
  request (id, head, conn, flags, tail = null) {
    const raw = head.rawHeaders
    const method = head.method
    const url = head.url
    const ra = conn.remoteAddress
    const la = conn.localAddress
    const tls = (flags & REQ_ENCRYPTED) !== 0 ? conn.tls : null
    if (tail !== null) flags |= REQ_HEAD
    let size = 16 + 8 + method.length + url.length + ra.length + la.length + (tls !== null ? tls.length : 0) + (tail !== null ? 4 + tail.length : 0)
    for (let i = 0; i < raw.length; i++) size += 2 + raw[i].length
    let p = this.header(T.REQUEST, id, size)
    const b = this.slab
    b[p] = flags
    b[p + 1] = head.versionMajor
    b[p + 2] = head.versionMinor
    b[p + 3] = conn.family
    b.writeUInt16LE(conn.remotePort, p + 4)
    b.writeUInt16LE(conn.localPort, p + 6)
    b.writeUInt32LE(conn.id, p + 8)
    b.writeUInt32LE(raw.length >>> 1, p + 12)
    p = putStr(b, p + 16, method)
    p = putStr(b, p, url)
    p = putStr(b, p, ra)
    p = putStr(b, p, la)
    for (let i = 0; i < raw.length; i++) p = putStr(b, p, raw[i])
    // the connection's TLS section, encoded once per connection (encodeTlsInfo)
    if (tls !== null) p += tls.copy(b, p)
    if (tail !== null) {
      b.writeUInt32LE(tail.length, p)
      p += 4 + tail.copy(b, p + 4)
    }
    this.pos = p
  }

  /**
   * RESPONSE (worker -> hub): u16 status | u8 flags | u8 0 | u32 cacheTtl | u16 reason
   * length | reason | u32 header block length | "Name: value\r\n"... | body.
   * The worker serialises the header block so the hub copies it without looking inside.
   * @returns {number} body bytes carried
   */
  response (id, status, flags, cacheTtl, reason, rawHeaders, body, type = T.RESPONSE) {
    let block = 0
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]
      const value = rawHeaders[i + 1]
      if (name.length === 10 && isConnection(name)) {
        flags |= RES_HAS_CONNECTION
        if ((flags & RESPONSE_KEEP_OPEN) === 0 && /close/i.test(value)) flags |= RESPONSE_CLOSE
      }
      block += name.length + (typeof value === 'string' ? value.length : String(value).length) + 4
    }
    let bodyMax = 0
    let inline = true
    if (typeof body === 'string') {
      bodyMax = body.length * 3
      if (bodyMax >= REF_THRESHOLD) {
        body = Buffer.from(body, 'utf8')
        bodyMax = body.length
        inline = bodyMax < REF_THRESHOLD
      }
    } else if (body) {
      bodyMax = body.length
      inline = bodyMax < REF_THRESHOLD
    }
    const fixed = 14 + reason.length + block
    let p = this.header(type, id, fixed + (inline ? bodyMax : 0))
    const frame = p - HEADER_SIZE
    const b = this.slab
    b.writeUInt16LE(status, p)
    b[p + 2] = flags
    b[p + 3] = 0
    b.writeUInt32LE(cacheTtl >>> 0, p + 4)
    p = putStr(b, p + 8, reason)
    b.writeUInt32LE(block, p)
    p += 4
    for (let i = 0; i < rawHeaders.length; i += 2) {
      p = putLatin1(b, p, rawHeaders[i])
      b[p] = 58 // ':'
      b[p + 1] = 32
      const value = rawHeaders[i + 1]
      p = putLatin1(b, p + 2, typeof value === 'string' ? value : String(value))
      b[p] = 13
      b[p + 1] = 10
      p += 2
    }
    let n = 0
    if (typeof body === 'string') {
      n = body.length <= ASCII_MAX ? putAscii(b, p, body) : -1
      if (n < 0) n = b.utf8Write(body, p)
    } else if (body && inline) {
      n = body.copy(b, p)
    }
    if (inline) {
      b.writeUInt32LE(5 + fixed + n, frame)
      this.pos = p + n
      return n
    }
    b.writeUInt32LE(5 + fixed + body.length, frame)
    this.pos = p
    this.ref(body)
    return body.length
  }
}

/**
 * INFO (worker -> hub): an interim response (102 Processing, 103 Early Hints) before
 * the final one; RESPONSE's layout, no body.
 */
FrameWriter.prototype.info = function info (id, status, reason, rawHeaders) {
  this.response(id, status, 0, 0, reason, rawHeaders, null, T.INFO)
}

function writeHeader (b, p, type, id, payloadLength) {
  b.writeUInt32LE(5 + payloadLength, p)
  b[p + 4] = type
  b.writeUInt32LE(id >>> 0, p + 5)
}

// Short strings are cheaper to copy in JS than through the native write (an HTTP
// date, 29 characters, in every response, too).
function putLatin1 (b, p, s) {
  const n = s.length
  if (n > 32) return p + b.latin1Write(s, p, n)
  for (let i = 0; i < n; i++) b[p + i] = s.charCodeAt(i)
  return p + n
}

// A short body (hello world) copied in JS when it is ASCII, where utf8 is the same
// bytes, rather than through utf8Write's native call. -1 when it is not ASCII.
const ASCII_MAX = 64
function putAscii (b, p, s) {
  const n = s.length
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i)
    if (c > 0x7f) return -1
    b[p + i] = c
  }
  return n
}

// name is "Connection" in any case, without the string toLowerCase() would make.
function isConnection (name) {
  for (let i = 0; i < 10; i++) {
    if ((name.charCodeAt(i) | 0x20) !== CONNECTION.charCodeAt(i)) return false
  }
  return true
}
const CONNECTION = 'connection'

function putStr (b, p, s) {
  b.writeUInt16LE(s.length, p)
  return putLatin1(b, p + 2, s)
}

/**
 * Splits a byte stream into frames and hands each to onFrame(type, id, buf, start, end)
 * where buf[start, end) is the payload (a view, never a copy, when the frame arrived in
 * one piece). The pieces of a frame split across reads are kept in a list and copied
 * once, into a buffer of exactly the frame's size, when its last byte has arrived; the
 * frames after it in that read are handed out as views again.
 *
 * A body frame (RES_BODY, BODY) of at least `piecesFrom` bytes can skip that copy: when
 * onPieces is given, the held frame goes to onPieces(type, id, pieces), pieces being the
 * views that make up the whole frame (pieces[0] starts with its header), and is copied
 * only when onPieces returns false. A large body then goes from the read buffers to its
 * destination (one writev) without a second copy of every byte in between.
 */
class FrameReader {
  /**
   * @param {(type: number, id: number, buf: Buffer, start: number, end: number) => void} onFrame
   * @param {(type: number, id: number, pieces: Buffer[]) => boolean} [onPieces]
   * @param {number} [piecesFrom] the smallest frame (bytes, header included) for onPieces
   */
  constructor (onFrame, onPieces = null, piecesFrom = 16 * 1024) {
    this.onFrame = onFrame
    this.onPieces = onPieces
    this.piecesFrom = piecesFrom
    this.held = null // pieces of an incomplete frame
    this.heldBytes = 0
    this.need = 0 // bytes the held frame needs in total (0: its length is not complete yet)
    this.stopped = false
  }

  /** @throws {Error} with code ERR_HTTPSYS_PROTOCOL on a malformed length */
  push (chunk) {
    let off = 0
    if (this.held !== null) {
      off = this.complete(chunk)
      if (off < 0) return
    }
    const n = chunk.length
    while (n - off >= HEADER_SIZE && !this.stopped) {
      const len = chunk.readUInt32LE(off)
      if (len < 5 || len > MAX_FRAME) throw protocolError(`bad frame length ${len}`)
      const end = off + 4 + len
      if (end > n) break
      this.onFrame(chunk[off + 4], chunk.readUInt32LE(off + 5), chunk, off + HEADER_SIZE, end)
      off = end
    }
    if (off < n && !this.stopped) {
      const rest = off === 0 ? chunk : chunk.subarray(off)
      this.held = [rest]
      this.heldBytes = rest.length
      this.need = rest.length >= 4 ? frameSize(rest.readUInt32LE(0)) : 0
    }
  }

  /**
   * Adds chunk to the held frame; delivers the frame once it is whole.
   * @returns {number} where the rest of chunk starts, or -1 when chunk was all held
   */
  complete (chunk) {
    if (this.need === 0) {
      const have = this.heldBytes // fewer than 4: the length field is split
      if (have + chunk.length < 4) {
        this.held.push(chunk)
        this.heldBytes += chunk.length
        return -1
      }
      let len = 0
      for (let i = 3; i >= 0; i--) len = len * 256 + (i < have ? byteAt(this.held, i) : chunk[i - have])
      this.need = frameSize(len)
    }
    const missing = this.need - this.heldBytes
    if (chunk.length < missing) {
      this.held.push(chunk)
      this.heldBytes += chunk.length
      return -1
    }
    const held = this.held
    held.push(missing === chunk.length ? chunk : chunk.subarray(0, missing))
    const need = this.need
    this.held = null
    this.heldBytes = 0
    this.need = 0
    const first = held[0]
    if (this.onPieces !== null && need >= this.piecesFrom && first.length >= HEADER_SIZE &&
        this.onPieces(first[4], first.readUInt32LE(5), held)) {
      return this.stopped ? chunk.length : missing
    }
    const frame = Buffer.concat(held, need)
    this.onFrame(frame[4], frame.readUInt32LE(5), frame, HEADER_SIZE, frame.length)
    return this.stopped ? chunk.length : missing
  }
}

/**
 * A frame handed to onPieces, as views of its payload after its first `skip` bytes
 * (its header, and a flags byte where it has one), which lie in pieces[0].
 */
function payloadPieces (pieces, skip) {
  const first = pieces[0]
  const out = first.length > skip ? [first.subarray(skip)] : []
  for (let i = 1; i < pieces.length; i++) out.push(pieces[i])
  return out
}

function frameSize (len) {
  if (len < 5 || len > MAX_FRAME) throw protocolError(`bad frame length ${len}`)
  return 4 + len
}

// Byte i of the bytes held in parts (only ever asked for the first four).
function byteAt (parts, i) {
  for (const p of parts) {
    if (i < p.length) return p[i]
    i -= p.length
  }
  return 0
}

function protocolError (reason) {
  const { codes } = require('../errors')
  return new codes.ERR_HTTPSYS_PROTOCOL({ reason })
}

/**
 * A worker's memo of the strings its last REQUEST decoded, by position (method, url,
 * the two addresses, then each header name and value). A client sends the same method,
 * addresses and most header lines request after request, and a string compared in JS
 * costs less than latin1Slice's native call and the new string it makes (the worker's
 * CPU per keep-alive request, bench/results/router-profile.md round 4).
 */
const MEMO_SLOTS = 4 + 2 * 16
const MEMO_MAX = 64 // longer strings are sliced: comparing them costs what slicing does
function decodeMemo () {
  return new Array(MEMO_SLOTS).fill('')
}

// b[start, end) as a latin1 string: the one at memo[slot] when it has these bytes.
function strAt (b, start, end, memo, slot) {
  const n = end - start
  if (memo === null || slot >= MEMO_SLOTS || n > MEMO_MAX) return b.latin1Slice(start, end)
  const m = memo[slot]
  if (m.length === n) {
    let i = 0
    while (i < n && m.charCodeAt(i) === b[start + i]) i++
    if (i === n) return m
  }
  const s = b.latin1Slice(start, end)
  memo[slot] = s
  return s
}

/**
 * Decodes a REQUEST payload into the contract's QueueRequest (worker side). memo
 * (decodeMemo()) lets repeated strings be reused.
 * @returns {object}
 */
function decodeRequest (id, b, p, memo = null) {
  const flags = b[p]
  const versionMajor = b[p + 1]
  const versionMinor = b[p + 2]
  const family = b[p + 3]
  const remotePort = b.readUInt16LE(p + 4)
  const localPort = b.readUInt16LE(p + 6)
  const connectionId = b.readUInt32LE(p + 8)
  const pairs = b.readUInt32LE(p + 12)
  p += 16
  let len = b.readUInt16LE(p)
  const method = strAt(b, p + 2, (p += 2 + len), memo, 0)
  len = b.readUInt16LE(p)
  const url = strAt(b, p + 2, (p += 2 + len), memo, 1)
  len = b.readUInt16LE(p)
  const remoteAddress = strAt(b, p + 2, (p += 2 + len), memo, 2)
  len = b.readUInt16LE(p)
  const localAddress = strAt(b, p + 2, (p += 2 + len), memo, 3)
  const rawHeaders = new Array(pairs * 2)
  for (let i = 0; i < rawHeaders.length; i++) {
    len = b.readUInt16LE(p)
    rawHeaders[i] = strAt(b, p + 2, (p += 2 + len), memo, 4 + i)
  }
  const encrypted = (flags & REQ_ENCRYPTED) !== 0
  const tls = encrypted ? decodeTlsInfo(b, p) : null
  let head = null
  if ((flags & REQ_HEAD) !== 0) {
    if (encrypted) p = tlsEnd(b, p)
    // a copy: the frame's buffer is reused for the next read, and the app keeps `head`
    head = Buffer.from(b.subarray(p + 4, p + 4 + b.readUInt32LE(p)))
  }
  return {
    id,
    method,
    url,
    httpVersionMajor: versionMajor,
    httpVersionMinor: versionMinor,
    rawHeaders,
    remoteAddress,
    remotePort,
    localAddress,
    localPort,
    remoteFamily: family === 6 ? 'IPv6' : 'IPv4',
    encrypted,
    tls,
    hasBody: (flags & REQ_HAS_BODY) !== 0,
    connectionId,
    keepAlive: (flags & REQ_KEEP_ALIVE) !== 0,
    expect: (flags & REQ_EXPECT_CONTINUE) !== 0 ? EXPECT_CONTINUE : (flags & REQ_EXPECT_OTHER) !== 0 ? EXPECT_OTHER : null,
    upgrade: (flags & REQ_UPGRADE) !== 0,
    head
  }
}

/**
 * BODY_END's trailers (worker side): [name, value, ...], or null for a frame without
 * payload (a body that had none).
 * @returns {string[]|null}
 */
function decodeTrailers (b, p, end) {
  if (end - p < 4) return null
  const n = b.readUInt32LE(p) * 2
  p += 4
  const out = new Array(n)
  for (let i = 0; i < n; i++) {
    const len = b.readUInt16LE(p)
    out[i] = b.latin1Slice(p + 2, (p += 2 + len))
  }
  return out
}

/**
 * The TLS section of a REQUEST (after its headers, when REQ_ENCRYPTED is set): the
 * client connection's session as the contract's TlsInfo (src/wire/contract.js).
 *   u8 flags (1 authorized, 2 a peer certificate follows)
 *   str protocol, str cipher name, str cipher standardName, str cipher version,
 *   str alpnProtocol, str servername, str authorizationError   ('' means null/false)
 *   u32 certificate length, certificate (DER)                  (with flag 2 only)
 * The hub encodes it once per client connection and copies it into every REQUEST of
 * that connection; it never changes during a connection (no renegotiation: node's TLS
 * server refuses it, and TLS 1.3 has none).
 * @param {object} info protocol, cipher {name, standardName, version}, alpnProtocol,
 *   servername, authorized, authorizationError, peerCertificate (Buffer|null)
 * @returns {Buffer}
 */
function encodeTlsInfo (info) {
  const cipher = info.cipher || {}
  const strs = [info.protocol, cipher.name, cipher.standardName, cipher.version, info.alpnProtocol, info.servername, info.authorizationError]
    .map((s) => typeof s === 'string' ? s.slice(0, 65535) : '')
  const cert = Buffer.isBuffer(info.peerCertificate) && info.peerCertificate.length > 0 ? info.peerCertificate : null
  let size = 1
  for (const s of strs) size += 2 + Buffer.byteLength(s, 'latin1')
  if (cert !== null) size += 4 + cert.length
  const b = Buffer.allocUnsafe(size)
  b[0] = (info.authorized ? 1 : 0) | (cert !== null ? 2 : 0)
  let p = 1
  for (const s of strs) p = putStr(b, p, s)
  if (cert !== null) {
    b.writeUInt32LE(cert.length, p)
    cert.copy(b, p + 4)
  }
  return b
}

// The last TLS section decoded, and what it decoded to. Every request of a connection
// carries the same section, and connections with the same protocol, cipher and server
// name have equal ones: one comparison of its bytes replaces seven string slices and
// two objects per request. The object is shared by those requests, so it is read-only
// for its users (socket.js hands out copies).
let lastTlsBytes = null
let lastTlsInfo = null

/** @returns {number} where the TLS section that starts at b[p] ends */
function tlsEnd (b, p) {
  const flags = b[p++]
  for (let i = 0; i < 7; i++) p += 2 + b.readUInt16LE(p)
  if ((flags & 2) !== 0) p += 4 + b.readUInt32LE(p)
  return p
}

/** @returns {object} the TlsInfo encodeTlsInfo wrote at b[p...] (frozen, maybe shared) */
function decodeTlsInfo (b, p) {
  const start = p
  const flags = b[p]
  const end = tlsEnd(b, p)
  if (lastTlsBytes !== null && lastTlsBytes.length === end - start && b.compare(lastTlsBytes, 0, lastTlsBytes.length, start, end) === 0) return lastTlsInfo
  p = start + 1
  const strs = new Array(7)
  for (let i = 0; i < 7; i++) {
    const len = b.readUInt16LE(p)
    strs[i] = b.latin1Slice(p + 2, (p += 2 + len))
  }
  let peerCertificate = null
  if ((flags & 2) !== 0) {
    const len = b.readUInt32LE(p)
    // a copy: the frame's buffer is reused for the next read
    peerCertificate = Buffer.from(b.subarray(p + 4, p + 4 + len))
  }
  const info = Object.freeze({
    protocol: strs[0] || null,
    cipher: strs[1] ? Object.freeze({ name: strs[1], standardName: strs[2] || strs[1], version: strs[3] }) : null,
    alpnProtocol: strs[4] || false,
    servername: strs[5] || null,
    authorized: (flags & 1) !== 0,
    authorizationError: strs[6] || null,
    peerCertificate
  })
  lastTlsBytes = Buffer.from(b.subarray(start, end))
  lastTlsInfo = info
  return info
}

// HELLO's `tls`: the key material an https server was given (src/http/https-server.js),
// for the hub to terminate TLS with. JSON has no bytes: a Buffer travels as
// { base64 }, a string (PEM text) as itself; arrays (several CAs or chains) keep their order.
const TLS_MATERIAL_KEYS = ['key', 'cert', 'pfx', 'ca', 'passphrase']
const TLS_POLICY_KEYS = ['requestCert', 'rejectUnauthorized']

/** @returns {object|null} the JSON-ready material of https options, or null when there is none */
function encodeTlsOptions (options) {
  if (options === null || typeof options !== 'object') return null
  const out = {}
  let any = false
  for (const key of TLS_MATERIAL_KEYS) {
    // an encrypted key goes opened (tls-key.js: the native router opens no PKCS#8 one)
    const v = key === 'key' && options.key != null ? openKeys(options.key, options.passphrase) : options[key]
    if (v === undefined || v === null) continue
    out[key] = Array.isArray(v) ? v.map(encodeBytes) : encodeBytes(v)
    any = true
  }
  if (!any) return null
  for (const key of TLS_POLICY_KEYS) if (typeof options[key] === 'boolean') out[key] = options[key]
  return out
}

/** @returns {object|null} options for tls.createSecureContext from encodeTlsOptions' output */
function decodeTlsOptions (value) {
  if (value === null || typeof value !== 'object') return null
  const out = {}
  for (const key of TLS_MATERIAL_KEYS) {
    const v = value[key]
    if (v === undefined || v === null) continue
    out[key] = Array.isArray(v) ? v.map(decodeBytes) : decodeBytes(v)
  }
  for (const key of TLS_POLICY_KEYS) if (typeof value[key] === 'boolean') out[key] = value[key]
  return out
}

function encodeBytes (v) {
  if (Buffer.isBuffer(v) || v instanceof Uint8Array) return { base64: Buffer.from(v).toString('base64') }
  if (v !== null && typeof v === 'object' && (v.buf !== undefined || v.pem !== undefined)) {
    // node's { pem, passphrase } / { buf, passphrase } forms for key and pfx
    return { ...v, pem: v.pem === undefined ? undefined : encodeBytes(v.pem), buf: v.buf === undefined ? undefined : encodeBytes(v.buf) }
  }
  return typeof v === 'string' ? v : String(v)
}

function decodeBytes (v) {
  if (v !== null && typeof v === 'object') {
    if (typeof v.base64 === 'string') return Buffer.from(v.base64, 'base64')
    const out = { ...v }
    if (out.pem !== undefined) out.pem = decodeBytes(out.pem)
    if (out.buf !== undefined) out.buf = decodeBytes(out.buf)
    return out
  }
  return typeof v === 'string' ? v : String(v)
}

/**
 * Decodes a RESPONSE payload (tests and tools; the hub reads the fields in place).
 * @returns {{status, flags, cacheTtl, reason, headerBlock: Buffer, body: Buffer}}
 */
function decodeResponse (b, p, end) {
  const status = b.readUInt16LE(p)
  const flags = b[p + 2]
  const cacheTtl = b.readUInt32LE(p + 4)
  const rlen = b.readUInt16LE(p + 8)
  const reason = b.latin1Slice(p + 10, p + 10 + rlen)
  p += 10 + rlen
  const blen = b.readUInt32LE(p)
  const headerBlock = b.subarray(p + 4, p + 4 + blen)
  return { status, flags, cacheTtl, reason, headerBlock, body: b.subarray(p + 4 + blen, end) }
}

/**
 * Checks a RESPONSE payload (worker -> hub) before the hub reads it in place: every
 * length must stay inside the frame, or the hub would copy bytes that are not the
 * response to the client. 1xx other than 101 is never a final answer (100 Continue has
 * its own frame); 101 is valid here and refused later (opaque mode is not implemented).
 * The header block's content is the worker's (src/http validates names and values as
 * node does); only its end is checked, so that it cannot swallow the blank line.
 * @returns {string|null} what is wrong, or null
 */
function checkResponse (b, p, end) {
  if (end - p < 14) return `RESPONSE payload of ${end - p} bytes is shorter than its 14 fixed bytes`
  const status = b.readUInt16LE(p)
  if (status < 200 ? status !== 101 : status > 999) return `RESPONSE status ${status} is not 101 or 200-999`
  const rlen = b.readUInt16LE(p + 8)
  const rs = p + 10
  if (rs + rlen + 4 > end) return `RESPONSE reason length ${rlen} runs past the frame`
  for (let i = rs; i < rs + rlen; i++) {
    const c = b[i]
    if ((c < 32 && c !== 9) || c === 127) return 'RESPONSE reason holds a control character'
  }
  const bl = b.readUInt32LE(rs + rlen)
  const bs = rs + rlen + 4
  if (bl > end - bs) return `RESPONSE header block length ${bl} runs past the frame`
  if (bl !== 0 && (bl < 4 || b[bs] === 13 || b[bs + bl - 2] !== 13 || b[bs + bl - 1] !== 10)) {
    return 'RESPONSE header block does not hold whole "Name: value\\r\\n" lines'
  }
  return null
}

/**
 * Checks an INFO payload: RESPONSE's rules, a status of 102 to 199 (100 Continue has
 * its own frame and 101 switches protocols), and no body.
 * @returns {string|null} what is wrong, or null
 */
function checkInfo (b, p, end) {
  if (end - p < 14) return `INFO payload of ${end - p} bytes is shorter than its 14 fixed bytes`
  const status = b.readUInt16LE(p)
  if (status < 102 || status > 199) return `INFO status ${status} is not 102-199`
  // the same length rules as RESPONSE; its status check passes any 2xx, used here as a stand-in
  const copy = Buffer.from(b.subarray(p, end))
  copy.writeUInt16LE(200, 0)
  const bad = checkResponse(copy, 0, copy.length)
  if (bad !== null) return bad.replace(/^RESPONSE/, 'INFO')
  const rlen = b.readUInt16LE(p + 8)
  const bl = b.readUInt32LE(p + 10 + rlen)
  if (p + 14 + rlen + bl !== end) return 'INFO carries a body'
  return null
}

/**
 * CONN_OPEN (router -> worker): u8 family, u16 remotePort, u16 localPort, str
 * remoteAddress, str localAddress; the id is the connection's.
 * @returns {object|null} null when the payload is short
 */
function decodeConnOpen (b, start, end) {
  if (end - start < 9) return null
  const family = b[start]
  const remotePort = b.readUInt16LE(start + 1)
  const localPort = b.readUInt16LE(start + 3)
  let p = start + 5
  const rl = b.readUInt16LE(p)
  if (p + 2 + rl + 2 > end) return null
  const remoteAddress = b.latin1Slice(p + 2, p + 2 + rl)
  p += 2 + rl
  const ll = b.readUInt16LE(p)
  if (p + 2 + ll > end) return null
  const localAddress = b.latin1Slice(p + 2, p + 2 + ll)
  return { family, remotePort, localPort, remoteAddress, localAddress }
}

/**
 * CONN_ERROR (router -> worker): u16 status (408: the head did not come within
 * headersTimeout), str reason (the parser's words), then the bytes being parsed.
 * @returns {{status: number, reason: string, raw: Buffer}|null}
 */
function decodeConnError (b, start, end) {
  if (end - start < 4) return null
  const status = b.readUInt16LE(start)
  const rl = b.readUInt16LE(start + 2)
  if (start + 4 + rl > end) return null
  return { status, reason: b.latin1Slice(start + 4, start + 4 + rl), raw: Buffer.from(b.subarray(start + 4 + rl, end)) }
}

/** CONN_OPEN's payload, as the router encodes it (tests; the worker only decodes). */
function encodeConnOpen ({ family, remotePort, localPort, remoteAddress, localAddress }) {
  const b = Buffer.alloc(9 + remoteAddress.length + localAddress.length)
  b[0] = family
  b.writeUInt16LE(remotePort, 1)
  b.writeUInt16LE(localPort, 3)
  let p = 5
  b.writeUInt16LE(remoteAddress.length, p)
  p += 2 + b.latin1Write(remoteAddress, p + 2)
  b.writeUInt16LE(localAddress.length, p)
  b.latin1Write(localAddress, p + 2)
  return b
}

/** CONN_ERROR's payload, as the router encodes it (tests). */
function encodeConnError (status, reason, raw) {
  const head = Buffer.alloc(4 + reason.length)
  head.writeUInt16LE(status, 0)
  head.writeUInt16LE(reason.length, 2)
  head.latin1Write(reason, 4)
  return Buffer.concat([head, raw])
}

/** Parses a JSON control payload; HELLO/HELLO_OK start with the version byte. */
function decodeJson (b, start, end, withVersion) {
  let version = null
  if (withVersion) version = b[start++]
  let value
  try {
    value = JSON.parse(b.toString('utf8', start, end))
  } catch {
    throw protocolError('a control frame is not valid JSON')
  }
  return withVersion ? { version, value } : value
}

module.exports = {
  payloadPieces,
  decodeConnOpen,
  decodeConnError,
  encodeConnOpen,
  encodeConnError,
  VERSION,
  HEADER_SIZE,
  MAX_FRAME,
  T,
  REQ_HAS_BODY,
  REQ_KEEP_ALIVE,
  REQ_ENCRYPTED,
  REQ_EXPECT_CONTINUE,
  REQ_UPGRADE,
  REQ_EXPECT_OTHER,
  REQ_GRANTED_WINDOW,
  REQ_HEAD,
  RES_HAS_CONNECTION,
  DEFAULT_RECEIVE_WINDOW,
  INITIAL_BODY_WINDOW,
  RESPONSE_WINDOW,
  GRANTED_WINDOW_START,
  FrameWriter,
  FrameReader,
  decodeRequest,
  decodeMemo,
  decodeTrailers,
  decodeResponse,
  encodeTlsInfo,
  decodeTlsInfo,
  encodeTlsOptions,
  decodeTlsOptions,
  checkResponse,
  checkInfo,
  decodeJson,
  protocolError
}
