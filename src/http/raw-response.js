'use strict'

// Raw responses: an app that writes its response to req.socket itself (fastify's
// reply.hijack(), hand-written HTTP in tests and proxies) instead of through res.
//
// There is no TCP socket here, so the bytes written are read back as a response: the
// head ("HTTP/1.1 200 OK\r\n", header lines, a blank line) becomes respond(), the bytes
// after it go out as its body exactly as written (the app frames them: Content-Length,
// chunked or none). The request's ServerResponse is then out of the way (hijacked): it
// sends nothing and never says 'finish', as node's does when an app writes around it.
//
// When the response ends:
// - with Content-Length, once that many body bytes are written: the connection stays
//   open for the next request, as node's parser would read it;
// - HEAD, 204 and 304 responses right after the head;
// - otherwise (chunked, or delimited by the close) when the app ends the socket, and
//   the connection closes after it.
// Only a request whose response has not begun can be answered this way, on HTTP/1.x.
//
// An interim head written this way ("HTTP/1.1 103 Early Hints\r\n...\r\n\r\n", what
// node's own writeProcessing() and writeEarlyHints() write with res._writeRaw()) goes out
// as the router's interim response (writeInformational; 100 as writeContinue), and res
// is the app's again for the final one.

const { codes } = require('../errors')
const { RESPONSE_MORE, RESPONSE_CLOSE } = require('../wire/contract')
const { isToken, hasInvalidChar } = require('./headers')
const { kResponse, kState } = require('./symbols')

const kRaw = Symbol('httpsys.rawResponse')
const HEAD_END = Buffer.from('\r\n\r\n')
const MAX_HEAD = 65536
const STATUS_LINE = /^HTTP\/1\.[01] (\d{3})(?: ([^\r\n]*))?$/

class RawResponse {
  constructor (req) {
    this.req = req
    this.head = null // the head's bytes until its blank line arrives
    this.started = false // respond() was called
    this.remaining = -1 // Content-Length body bytes still to come (-1: until the socket ends)
    this.done = false
  }
}

/**
 * socket.write(): bytes of a raw response.
 * @returns {boolean} false when the router's window is full ('drain' on the socket follows)
 */
function rawWrite (socket, handle, requests, chunk, encoding, callback) {
  if (typeof encoding === 'function') {
    callback = encoding
    encoding = undefined
  }
  let err = null
  let raw = socket[kRaw] || null
  if (socket.destroyed || !socket.writable) {
    err = new codes.ERR_STREAM_DESTROYED({ method: 'write' })
  } else if (typeof chunk !== 'string' && !(chunk instanceof Uint8Array)) {
    throw new codes.ERR_INVALID_ARG_TYPE({ name: 'chunk', expected: 'of type string or an instance of Buffer or Uint8Array', actual: chunk })
  } else if (raw === null) {
    const req = firstUnanswered(requests)
    if (handle === null || req === null) {
      err = new codes.ERR_HTTPSYS_SOCKET_WRITE({ reason: 'no request on this connection is waiting for its response' })
    } else if (req.httpVersionMajor !== 1) {
      err = new codes.ERR_HTTPSYS_SOCKET_WRITE({ reason: `HTTP/${req.httpVersion} carries no raw HTTP/1.1 bytes` })
    } else {
      raw = socket[kRaw] = new RawResponse(req)
      req[kResponse][kState].hijacked = true
    }
  }
  if (err !== null) {
    process.nextTick(failWrite, socket, err, callback)
    return false
  }
  const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding || 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  const ok = feed(socket, handle, raw, buf)
  if (typeof callback === 'function') process.nextTick(callback, null)
  return ok
}

/** socket.end() with a raw response under way: it is complete; the connection closes. */
function rawEnd (socket, handle) {
  const raw = socket[kRaw]
  if (raw.done) return
  if (!raw.started) {
    // the app ended before its head was complete: nothing sensible can go out
    socket.destroy()
    return
  }
  finish(socket, handle, raw, RESPONSE_CLOSE)
}

function feed (socket, handle, raw, buf) {
  const req = raw.req
  if (raw.done) return true
  if (!raw.started) {
    const parsed = gatherHead(raw, buf, false)
    if (parsed === null) return true
    if (typeof parsed === 'string') {
      badHead(socket, parsed)
      return true
    }
    if (parsed.status < 200) return interim(socket, handle, raw, parsed)
    raw.started = true
    let body = parsed.rest
    const { status, reason, rawHeaders, contentLength } = parsed
    const noBody = req.method === 'HEAD' || status === 204 || status === 304
    raw.remaining = noBody ? 0 : contentLength
    if (raw.remaining >= 0 && body.length > raw.remaining) body = body.subarray(0, raw.remaining)
    if (raw.remaining > 0) raw.remaining -= body.length
    const complete = raw.remaining === 0
    const flags = complete ? 0 : raw.remaining < 0 ? RESPONSE_MORE | RESPONSE_CLOSE : RESPONSE_MORE
    const ok = handle.respond(req, status, reason, rawHeaders, body.length > 0 ? body : null, flags)
    if (complete) done(socket, handle, raw)
    return ok
  }
  if (raw.remaining >= 0) {
    if (buf.length > raw.remaining) buf = buf.subarray(0, raw.remaining)
    raw.remaining -= buf.length
    if (raw.remaining === 0) {
      finish(socket, handle, raw, 0, buf)
      return true
    }
  }
  return buf.length === 0 ? true : handle.sendBody(req, buf, RESPONSE_MORE)
}

/** A whole interim head: sent as one, then what was written after it is read on. */
function interim (socket, handle, raw, parsed) {
  const req = raw.req
  if (parsed.status === 100) handle.writeContinue(req)
  else handle.writeInformational(req, parsed.status, parsed.reason, parsed.rawHeaders)
  // the response is not taken over (yet): the next bytes may be its final head, or res
  // may write it
  socket[kRaw] = null
  req[kResponse][kState].hijacked = false
  if (parsed.rest.length === 0) return true
  const next = socket[kRaw] = new RawResponse(req)
  req[kResponse][kState].hijacked = true
  return feed(socket, handle, next, parsed.rest)
}

function finish (socket, handle, raw, flags, last = null) {
  handle.sendBody(raw.req, last !== null && last.length > 0 ? last : null, flags)
  done(socket, handle, raw)
}

// The raw response is complete: the request is done with; its ServerResponse closes
// without 'finish' (node's, bypassed, closes with its socket).
function done (socket, handle, raw) {
  raw.done = true
  socket[kRaw] = null
  const req = raw.req
  const res = req[kResponse]
  if (raw.remaining < 0) res.shouldKeepAlive = false
  handle.letGo(req)
  res._onAbort()
}

function firstUnanswered (requests) {
  for (let i = 0; i < requests.length; i++) {
    const res = requests[i][kResponse]
    if (res && res[kState].head === null && !res[kState].sent && !res.destroyed) return requests[i]
  }
  return null
}

/**
 * A response head written in pieces (state.head holds what came so far; raw responses
 * and upgrade-socket.js): null until its blank line came, then parseHead()'s answer
 * with `rest`, the bytes written after the head; or what is wrong.
 * @param {{head: Buffer|null}} state
 * @param {boolean} upgrade as parseHead's
 * @returns {object|string|null}
 */
function gatherHead (state, buf, upgrade) {
  const head = state.head = state.head === null ? buf : Buffer.concat([state.head, buf])
  const end = head.indexOf(HEAD_END)
  if (end === -1) return head.length > MAX_HEAD ? 'the head is over 64 KiB' : null
  const parsed = parseHead(head.latin1Slice(0, end), upgrade)
  if (typeof parsed === 'string') return parsed
  parsed.rest = head.subarray(end + 4)
  state.head = null
  return parsed
}

/**
 * "HTTP/1.1 200 OK\r\nName: value\r\n..." (without the blank line)
 * @param {boolean} [upgrade] the socket of an 'upgrade' event: 101 is the answer it may
 *   give, and no interim response goes before it; elsewhere 100 and 102-199 are interim
 *   heads (raw responses), 101 is refused
 * @returns {object|string} { status, reason, rawHeaders, contentLength } or what is wrong
 */
function parseHead (text, upgrade = false) {
  const lines = text.split('\r\n')
  const m = STATUS_LINE.exec(lines[0])
  if (m === null) return `the status line ${JSON.stringify(lines[0].slice(0, 64))} is not "HTTP/1.1 <status> <reason>"`
  const status = Number(m[1])
  if (status < 100) return `status ${status} is not 100-999`
  if (status === 101 && !upgrade) return 'status 101 switches protocols: only an \'upgrade\' listener\'s socket may answer it'
  if (status < 200 && status !== 101 && upgrade) return `status ${status} is an interim response (use res.writeContinue() or res.writeEarlyHints())`
  const rawHeaders = []
  let contentLength = -1
  let chunked = false
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]
    const colon = line.indexOf(':')
    const name = colon > 0 ? line.slice(0, colon) : ''
    if (!isToken(name)) return `the header line ${JSON.stringify(line.slice(0, 64))} is not "Name: value"`
    const value = line.slice(colon + 1).trim()
    if (hasInvalidChar(value)) return `the value of ${name} has a control character`
    const lower = name.toLowerCase()
    if (lower === 'content-length') {
      if (!/^\d{1,15}$/.test(value) || (contentLength >= 0 && Number(value) !== contentLength)) return `Content-Length ${JSON.stringify(value)} is not one length`
      contentLength = Number(value)
    } else if (lower === 'transfer-encoding') {
      chunked = true
    }
    rawHeaders.push(name, value)
  }
  if (chunked && contentLength >= 0) return 'it has both Content-Length and Transfer-Encoding'
  return { status, reason: m[2] || '', rawHeaders, contentLength }
}

function badHead (socket, reason) {
  socket.destroy(new codes.ERR_HTTPSYS_SOCKET_WRITE({ reason: `the bytes written are not an HTTP/1.1 response: ${reason}` }))
}

function failWrite (socket, err, callback) {
  if (typeof callback === 'function') callback(err)
  if (socket.listenerCount('error') > 0) socket.emit('error', err)
}

module.exports = { rawWrite, rawEnd, kRaw, gatherHead }
