'use strict'

// http.ServerResponse over a request queue.
//
// Design choice: like node's, this extends the legacy `Stream` (an EventEmitter with
// pipe()), not stream.Writable. node's ServerResponse is an OutgoingMessage, which is
// not a Writable either (`res instanceof Writable` is false on node), and its
// observable behaviour differs from Writable's in ways apps rely on: write() after
// end() calls the callback with ERR_STREAM_WRITE_AFTER_END and then emits 'error' on
// the next tick; end(cb) on a finished response calls cb with
// ERR_STREAM_ALREADY_FINISHED synchronously; 'finish' then 'close' one tick apart;
// writable stays true. Reproducing those on top of Writable would mean fighting it.
//
// What goes to the backend (contract.js):
// - The head is built at writeHead() (headersSent is true from then on, as on node),
//   but framing headers (Content-Length / Transfer-Encoding) and Date are added when
//   the first bytes leave. If end() comes before anything left, the whole body is
//   known: Content-Length is set and head + body go out in ONE respond() call. node
//   would use chunked after an explicit writeHead(); a client cannot tell.
// - Writes are coalesced until the next tick (or uncork()), then sent with
//   RESPONSE_MORE; without a Content-Length that is chunked encoding, framed here
//   because routers never frame. HTTP/1.0 clients get the raw body and a closed
//   connection instead.
// - respond()/sendBody() returning false closes the window: write() returns false and
//   data waits until onDrain, which flushes and emits 'drain'.
// https://nodejs.org/api/http.html#class-httpserverresponse

const Stream = require('node:stream')
// node's own ServerResponse, taken as this module loads (before the preload puts ours on
// node's http)
const { STATUS_CODES, ServerResponse: NodeServerResponse } = require('node:http')
const { codes } = require('../errors')
const {
  isToken, hasInvalidChar, validateHeaderName, validateHeaderValue, validateString
} = require('./headers')
const { kHandle, kSocket, kOutHeaders, kState } = require('./symbols')
const { defineLegacyClass } = require('./legacy-class')
const { storedHeaders, givenHeaders, finishHead, headBytes, RE_TE_CHUNKED, R_CONNECTION, R_CONTENT_LENGTH, R_TE } = require('./out-head')
const { writeChunk, strictLength, flush, onError, nop, HIGH_WATER_MARK } = require('./response-flow')
const { SocketSink } = require('./socket-sink')
const { NodeIncomingMessage } = require('./incoming')

// node's http.OutgoingMessage (the preload does not replace it): a ServerResponse is one,
// as on node (`res instanceof http.OutgoingMessage`), and inherits what it does not
// define itself (captureRejections: a rejected 'finish' listener destroys the response).
const { OutgoingMessage } = require('node:http')
const { kHighWaterMark } = require('node:_http_outgoing')

// The setHeader() store: name -> [original name, value]. Not Object.create(null):
// that makes a dictionary-mode object per response, which cost 2 us per request in
// the hello-world benchmark. Instances of this constructor stay in fast mode (every
// response adds the same names in the same order) and still inherit nothing, so a
// header called "__proto__" or "constructor" is an ordinary key.
function HeaderStore () {}
HeaderStore.prototype = Object.create(null)

/**
 * Per-response state that never leaves this module. One object per response keeps the
 * response itself small and its shape stable.
 */
class OutState {
  constructor (req) {
    this.head = null // raw header pairs once writeHead() ran
    this.headBits = 0
    this.contentLength = -1 // from a Content-Length header the app set
    this.removed = 0
    this.hasBody = req.method !== 'HEAD'
    this.sent = false // respond() was called
    this.finalSent = false // the last byte went to the backend
    this.finishState = 0 // 1 'finish' scheduled, 2 emitted
    this.pending = null // chunks not yet given to the backend
    this.pendingSize = 0
    this.callbacks = null // write callbacks waiting for their chunk to leave
    this.flushQueued = false
    this.windowOpen = true
    this.needDrain = false
    this.corked = 0
    this.bytesWritten = 0
    this.trailer = ''
    this.hijacked = false // the app wrote its response to req.socket (raw-response.js): res sends nothing
    this.holding = false // the response is out; the router hears its end once the request body is in
    this.heldFlags = 0 // respond() flags for that end (RESPONSE_CLOSE)
    this.unique = null // the server's uniqueHeaders: lower-cased names whose values join with '; '
    this.detached = false
    // it ended without a response (_onAbort): res.socket stays the connection's, closed,
    // as node's (on-finished then takes the response as done)
    this.aborted = false
    // made outside a server (no queue): writes go to the socket assignSocket() gives
    this.direct = req[kHandle] === undefined || req[kHandle] === null
    this.endHead = false // end() made the head: its whole body is known (Content-Length)
    this.endLength = 0 // that body's length in bytes
    this.headFlags = 0 // respond() flags the head decided (RESPONSE_CLOSE)
    this.status = 0 // the status line writeHead() stored (a later res.statusCode = x changes nothing, as on node)
    this.reason = ''
    this.error = undefined // destroy(err)'s error (res.errored)
    this.highWaterMark = HIGH_WATER_MARK // write() returns false past it (the server's highWaterMark option)
    this.rejectBody = false // rejectNonStandardBodyWrites: a body on HEAD/204/304 throws
    // maxRequestsPerSocket's last response on a port the server owns: it says
    // Connection: close and the connection stays, as node's does (server-handle.js)
    this.lastKeepsOpen = false
  }
}

/**
 * @param {import('./incoming').IncomingMessage} req
 * @param {object} [options] { strictContentLength } as node's
 */
function ServerResponse (req, options) {
  // a request of node's own HTTP/1 parser (an http2 server's allowHTTP1 fallback: see
  // incoming.js) is answered by node's own response, as that server would without the
  // preload. Ours carry kHandle (null outside a server).
  if (req[kHandle] === undefined && req instanceof NodeIncomingMessage) return new NodeServerResponse(req, options)
  Stream.call(this)
  this.req = req
  this.statusCode = 200
  this.statusMessage = undefined
  this.sendDate = true
  this.chunkedEncoding = false
  this.useChunkedEncodingByDefault = true
  this.shouldKeepAlive = true
  this.strictContentLength = Boolean(options && options.strictContentLength)
  this.maxRequestsOnConnectionReached = false
  this.writable = true
  this.destroyed = false
  this.finished = false
  this._closed = false
  this._sent100 = false
  this._expect_continue = false
  this[kOutHeaders] = null
  this[kSocket] = null
  this[kHandle] = req[kHandle] || null
  this[kState] = new OutState(req)
  if (options) {
    if (typeof options.highWaterMark === 'number') this[kState].highWaterMark = options.highWaterMark
    if (options.rejectNonStandardBodyWrites === true) this[kState].rejectBody = true
  }
  this[kHighWaterMark] = this[kState].highWaterMark // node's own field (_http_outgoing)
  if (req.httpVersionMajor < 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor < 1)) {
    this.useChunkedEncodingByDefault = RE_TE_CHUNKED.test(req.headers.te || '')
    this.shouldKeepAlive = false
  }
}

class ServerResponseMembers extends Stream {
  get socket () {
    const st = this[kState]
    if (st.detached && !st.aborted) return null
    let s = this[kSocket]
    if (s === null && this[kHandle] !== null && !st.direct) s = this[kSocket] = this.req.socket
    return s
  }

  set socket (value) { this[kSocket] = value }

  get connection () { return this.socket }
  set connection (value) { this[kSocket] = value }

  get headersSent () { return this[kState].head !== null }

  get closed () { return this._closed }
  get errored () { return this[kState].error }

  // node's internals that middleware reads (compression and morgan test `_header`,
  // light-my-request parses it): the head as node would have stored it, built only
  // when asked for; complete from writeHead() on (Date, Connection, framing), as node's.
  get _header () {
    const st = this[kState]
    if (st.head === null) return null
    let text = `HTTP/1.1 ${st.status} ${st.reason}\r\n`
    for (let i = 0; i + 1 < st.head.length; i += 2) text += st.head[i] + ': ' + st.head[i + 1] + '\r\n'
    return text + '\r\n'
  }

  set _header (value) {}

  get _headerSent () { return this[kState].sent }
  set _headerSent (value) {}

  get _hasBody () { return this[kState].hasBody }
  set _hasBody (value) { this[kState].hasBody = Boolean(value) }
  get writableEnded () { return this.finished }
  get writableFinished () { return this.finished && this[kState].finalSent }
  get writableObjectMode () { return false }
  // node's: what is written and not yet out, as it goes on the wire (a head not sent yet,
  // the chunked framing)
  get writableLength () {
    const st = this[kState]
    return st.pendingSize + (st.head !== null && !st.sent ? headBytes(st.status, st.reason, st.head) : 0)
  }

  get writableHighWaterMark () { return this[kState].highWaterMark }
  get writableCorked () { return this[kState].corked }
  get writableNeedDrain () { return !this.destroyed && !this.finished && this[kState].needDrain }

  // ---- headers -------------------------------------------------------------

  setHeader (name, value) {
    if (this[kState].head !== null) throw new codes.ERR_HTTP_HEADERS_SENT({ action: 'set' })
    validateHeaderName(name)
    validateHeaderValue(name, value)
    let headers = this[kOutHeaders]
    if (headers === null) headers = this[kOutHeaders] = new HeaderStore()
    headers[name.toLowerCase()] = [name, value]
    return this
  }

  appendHeader (name, value) {
    if (this[kState].head !== null) throw new codes.ERR_HTTP_HEADERS_SENT({ action: 'append' })
    validateHeaderName(name)
    validateHeaderValue(name, value)
    const key = name.toLowerCase()
    const headers = this[kOutHeaders]
    if (headers === null || headers[key] === undefined) return this.setHeader(name, value)
    const entry = headers[key]
    if (!Array.isArray(entry[1])) entry[1] = [entry[1]]
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) entry[1].push(value[i])
    } else {
      entry[1].push(value)
    }
    return this
  }

  /** Headers or Map; set-cookie values are collected so none overwrites another. */
  setHeaders (headers) {
    if (this[kState].head !== null) throw new codes.ERR_HTTP_HEADERS_SENT({ action: 'set' })
    if (!headers || Array.isArray(headers) || typeof headers.keys !== 'function' || typeof headers.get !== 'function') {
      throw new codes.ERR_INVALID_ARG_TYPE({ name: 'headers', expected: 'an instance of Headers or Map', actual: headers })
    }
    const cookies = []
    for (const [key, value] of headers) {
      if (key === 'set-cookie') {
        if (Array.isArray(value)) cookies.push(...value)
        else cookies.push(value)
      } else {
        this.setHeader(key, value)
      }
    }
    if (cookies.length > 0) this.setHeader('set-cookie', cookies)
    return this
  }

  getHeader (name) {
    validateString(name, 'name')
    const headers = this[kOutHeaders]
    if (headers === null) return undefined
    const entry = headers[name.toLowerCase()]
    return entry && entry[1]
  }

  getHeaders () {
    const out = Object.create(null)
    const headers = this[kOutHeaders]
    if (headers !== null) {
      for (const key in headers) out[key] = headers[key][1]
    }
    return out
  }

  getHeaderNames () {
    return this[kOutHeaders] !== null ? Object.keys(this[kOutHeaders]) : []
  }

  getRawHeaderNames () {
    const headers = this[kOutHeaders]
    if (headers === null) return []
    const out = []
    for (const key in headers) out.push(headers[key][0])
    return out
  }

  hasHeader (name) {
    validateString(name, 'name')
    return this[kOutHeaders] !== null && this[kOutHeaders][name.toLowerCase()] !== undefined
  }

  removeHeader (name) {
    validateString(name, 'name')
    const st = this[kState]
    if (st.head !== null) throw new codes.ERR_HTTP_HEADERS_SENT({ action: 'remove' })
    const key = name.toLowerCase()
    switch (key) {
      case 'connection': st.removed |= R_CONNECTION; break
      case 'content-length': st.removed |= R_CONTENT_LENGTH; break
      case 'transfer-encoding': st.removed |= R_TE; break
      case 'date': this.sendDate = false; break
    }
    if (this[kOutHeaders] !== null) delete this[kOutHeaders][key]
  }

  addTrailers (headers) {
    let trailer = ''
    const isArray = Array.isArray(headers)
    const keys = Object.keys(headers)
    for (let i = 0; i < keys.length; i++) {
      const field = isArray ? headers[keys[i]][0] : keys[i]
      const value = isArray ? headers[keys[i]][1] : headers[keys[i]]
      if (typeof field !== 'string' || field === '' || !isToken(field)) {
        throw new codes.ERR_INVALID_HTTP_TOKEN({ label: 'Trailer name', value: field })
      }
      // several values: one line each, unless the name is a unique header (joined, node)
      const unique = this[kState].unique
      if (Array.isArray(value) && value.length > 1 && (unique === null || !unique.has(field.toLowerCase()))) {
        for (let j = 0; j < value.length; j++) {
          if (hasInvalidChar(value[j])) throw new codes.ERR_INVALID_CHAR({ field: 'trailer content', header: field })
          trailer += field + ': ' + value[j] + '\r\n'
        }
        continue
      }
      const text = Array.isArray(value) ? value.join('; ') : value
      if (hasInvalidChar(text)) throw new codes.ERR_INVALID_CHAR({ field: 'trailer content', header: field })
      trailer += field + ': ' + text + '\r\n'
    }
    this[kState].trailer = trailer
  }

  // ---- head ----------------------------------------------------------------

  writeHead (statusCode, reason, obj) {
    const st = this[kState]
    if (st.head !== null) throw new codes.ERR_HTTP_HEADERS_SENT({ action: 'write' })
    const original = statusCode
    statusCode |= 0
    if (statusCode < 100 || statusCode > 999) {
      throw new codes.ERR_HTTP_INVALID_STATUS_CODE({ value: original })
    }
    if (typeof reason === 'string') {
      this.statusMessage = reason
    } else {
      if (!this.statusMessage) this.statusMessage = STATUS_CODES[statusCode] || 'unknown'
      if (obj === undefined || obj === null) obj = reason
    }
    this.statusCode = statusCode

    let raw
    let bits
    if (this[kOutHeaders] !== null) {
      // setHeader() was used: the object merges into those headers (node's slow case)
      if (Array.isArray(obj)) {
        if (obj.length % 2 !== 0) throw new codes.ERR_INVALID_ARG_VALUE({ name: 'headers', value: obj })
        for (let n = 0; n < obj.length; n += 2) this.removeHeader(obj[n])
        for (let n = 0; n < obj.length; n += 2) if (obj[n]) this.appendHeader(obj[n], obj[n + 1])
      } else if (obj) {
        const keys = Object.keys(obj)
        for (let i = 0; i < keys.length; i++) if (keys[i]) this.setHeader(keys[i], obj[keys[i]])
      }
      raw = []
      bits = storedHeaders(this, raw, this[kOutHeaders])
    } else {
      raw = []
      bits = obj ? givenHeaders(this, raw, obj) : 0
    }
    if (hasInvalidChar(this.statusMessage)) throw new codes.ERR_INVALID_CHAR({ field: 'statusMessage' })

    if (statusCode === 204 || statusCode === 304 || (statusCode >= 100 && statusCode <= 199)) {
      st.hasBody = false
    }
    // A client that expects 100 Continue but got a final status may send the body
    // anyway: that connection cannot be reused.
    if (this._expect_continue && !this._sent100) this.shouldKeepAlive = false
    st.head = raw
    st.headBits = bits
    st.status = statusCode
    st.reason = this.statusMessage
    try {
      st.headFlags = finishHead(this, st)
    } catch (err) {
      st.head = null // not made: the app may fix its headers and try again (node)
      throw err
    }
    return this
  }

  // node's deprecated alias
  writeHeader (statusCode, reason, obj) {
    return this.writeHead(statusCode, reason, obj)
  }

  _implicitHeader () {
    this.writeHead(this.statusCode)
  }

  /**
   * node's: the response writes to this socket. The server never calls it here (the
   * queue is the connection); a response made outside a server writes HTTP/1.1 to the
   * socket from now on, what was written before included (socket-sink.js).
   */
  assignSocket (socket) {
    if (socket._httpMessage) throw new codes.ERR_HTTP_SOCKET_ASSIGNED()
    socket._httpMessage = this
    const st = this[kState]
    st.detached = false
    this[kSocket] = socket
    if (st.direct) {
      this[kHandle] = new SocketSink(socket, this)
      socket.on('close', onSocketClose)
    }
    this.emit('socket', socket)
    if (st.direct && !st.sent && (st.pending !== null || this.finished)) flush(this, this.finished, false)
  }

  detachSocket (socket) {
    if (socket && socket._httpMessage === this) {
      socket._httpMessage = null
      if (typeof socket.removeListener === 'function') socket.removeListener('close', onSocketClose)
    }
    this[kSocket] = null
  }

  flushHeaders () {
    if (this[kState].head === null) this._implicitHeader()
    const st = this[kState]
    if (!st.sent && !this.destroyed) flush(this, false, true)
  }

  writeContinue (cb) {
    const handle = this[kHandle]
    if (handle !== null) handle.writeContinue(this.req)
    this._sent100 = true
    if (typeof cb === 'function') process.nextTick(cb)
  }

  // 102 and 103: interim responses before the final one. The hub sends them (h2 too);
  // HTTP.SYS does not let a worker send one, so there they are dropped, as an HTTP/1.0
  // client never gets them either.
  writeProcessing (cb) {
    this.informational(102, 'Processing', [])
    if (typeof cb === 'function') process.nextTick(cb)
  }

  writeEarlyHints (hints, cb) {
    if (typeof hints !== 'object' || hints === null || Array.isArray(hints)) {
      throw new codes.ERR_INVALID_ARG_TYPE({ name: 'hints', expected: 'of type object', actual: hints })
    }
    if (hints.link === null || hints.link === undefined) return
    const link = linkHeaderValue(hints.link)
    if (link.length === 0) return
    const raw = ['Link', link]
    for (const key of Object.keys(hints)) {
      if (key !== 'link') raw.push(key, String(hints[key]))
    }
    this.informational(103, 'Early Hints', raw)
    if (typeof cb === 'function') process.nextTick(cb)
  }

  /**
   * node's: bytes written on the response's connection as they are. node's own
   * writeProcessing() and writeEarlyHints() write their interim heads with it, and so
   * does code that sends other 1xx; here they are read back as a raw response's bytes
   * (raw-response.js): an interim head goes out as one, anything else takes the
   * response over as req.socket.write() does.
   */
  _writeRaw (data, encoding, callback) {
    if (typeof encoding === 'function') {
      callback = encoding
      encoding = undefined
    }
    const socket = this.socket
    if (socket === null || this.destroyed) return false
    return socket.write(data, encoding, callback)
  }

  informational (status, reason, raw) {
    const handle = this[kHandle]
    if (handle !== null && this[kState].head === null && !this.destroyed) handle.writeInformational(this.req, status, reason, raw)
  }

  // ---- body ----------------------------------------------------------------

  write (chunk, encoding, callback) {
    if (typeof encoding === 'function') {
      callback = encoding
      encoding = null
    }
    const ret = writeChunk(this, chunk, encoding, callback, false)
    if (!ret) this[kState].needDrain = true
    return ret
  }

  end (chunk, encoding, callback) {
    if (typeof chunk === 'function') {
      callback = chunk
      chunk = null
      encoding = null
    } else if (typeof encoding === 'function') {
      callback = encoding
      encoding = null
    }
    const st = this[kState]
    if (chunk) {
      if (this.finished) {
        onError(this, new codes.ERR_STREAM_WRITE_AFTER_END(), typeof callback === 'function' ? callback : nop)
        return this
      }
      writeChunk(this, chunk, encoding, null, true)
    } else if (this.finished) {
      if (typeof callback === 'function') {
        if (!this.writableFinished) this.once('finish', callback)
        else callback(new codes.ERR_STREAM_ALREADY_FINISHED({ method: 'end' }))
      }
      return this
    } else if (st.head === null) {
      st.endHead = true
      st.endLength = 0
      this._implicitHeader()
    }
    if (typeof callback === 'function') this.once('finish', callback)
    if (strictLength(this, st) && st.bytesWritten !== st.contentLength) {
      throw new codes.ERR_HTTP_CONTENT_LENGTH_MISMATCH({ actual: st.bytesWritten, expected: st.contentLength })
    }
    this.finished = true
    st.corked = 0
    flush(this, true, false)
    return this
  }

  cork () {
    this[kState].corked++
  }

  uncork () {
    const st = this[kState]
    if (st.corked > 0 && --st.corked === 0 && st.pending !== null && !st.flushQueued) flush(this, false, false)
  }

  setTimeout (msecs, callback) {
    if (typeof callback === 'function') this.on('timeout', callback)
    const socket = this.socket
    if (socket) socket.setTimeout(msecs)
    return this
  }

  /** Resets the client connection (the response is lost), as on node. */
  destroy (err) {
    if (this.destroyed) return this
    this.destroyed = true
    const st = this[kState]
    if (err) st.error = err
    const handle = this[kHandle]
    if (handle === null || st.finalSent) return this
    // node destroys the socket, which resets the connection and gives the socket's
    // 'error' listeners the error (a rejected 'drain' listener under captureRejections)
    if (err && !st.direct) {
      const socket = this.socket
      if (socket && !socket.destroyed) {
        socket.destroy(err)
        return this
      }
    }
    handle.cancel(this.req, err || null)
    return this
  }

  pipe () {
    // a response is write-only, as node's
    this.emit('error', new codes.ERR_STREAM_CANNOT_PIPE())
  }

  /** The backend reopened the window: send what waited, then tell the app. */
  _onDrain () {
    const st = this[kState]
    st.windowOpen = true
    if (st.hijacked) {
      // written around res (raw-response.js): the socket's writer waits for 'drain'
      const s = this.req !== null ? this.req[kSocket] : null
      if (s) s.emit('drain')
      return
    }
    if (this.destroyed || st.finalSent) return
    if (st.pending !== null || this.finished) flush(this, this.finished, false)
    if (st.windowOpen && st.needDrain && st.pending === null) {
      st.needDrain = false
      if (!this.finished) this.emit('drain')
    }
  }

  /** The request is gone (client reset, cancel): 'close' without 'finish'. */
  _onAbort () {
    const st = this[kState]
    st.detached = true
    st.aborted = true
    this.destroyed = true
    const cbs = st.callbacks
    st.callbacks = null
    st.pending = null
    st.pendingSize = 0
    if (cbs !== null) {
      const err = new codes.ERR_STREAM_DESTROYED({ method: 'write' })
      for (let i = 0; i < cbs.length; i++) process.nextTick(cbs[i], err)
    }
    if (!this._closed && st.finishState !== 2) {
      this._closed = true
      this.emit('close')
    }
  }
}

// node's Link header check for early hints: "</styles.css>; rel=preload; as=style"
const LINK_VALUE = /^(?:<[^>]*>)(?:\s*;\s*[^;"\s]+(?:=(")?[^;"\s]*\1)?)*$/
const LINK_REASON = 'must be an array or string of format "</styles.css>; rel=preload; as=style"'

function linkHeaderValue (hints) {
  const check = (value) => {
    if (typeof value !== 'string' || !LINK_VALUE.test(value)) throw new codes.ERR_INVALID_ARG_VALUE({ name: 'hints', value, reason: LINK_REASON })
  }
  if (typeof hints === 'string') {
    check(hints)
    return hints
  }
  if (Array.isArray(hints)) {
    for (const link of hints) check(link)
    return hints.join(', ')
  }
  throw new codes.ERR_INVALID_ARG_VALUE({ name: 'hints', value: hints, reason: LINK_REASON })
}

// node's onServerResponseClose: the socket a response was given closed under it
function onSocketClose () {
  const res = this._httpMessage
  if (res && !res._closed) {
    res.destroyed = true
    res._closed = true
    res.emit('close')
  }
}

defineLegacyClass(ServerResponse, OutgoingMessage, ServerResponseMembers)

module.exports = { ServerResponse, STATUS_CODES }
