'use strict'

// http.IncomingMessage for a request received from a queue.
//
// A real stream.Readable (as node's is), so pipe(), async iteration, pause/resume and
// setEncoding behave exactly as on node. The body is pulled, never pushed without
// bound: _read() asks the backend for more (attachment.readBody), and the handle
// pushes what arrives. `headers` is built from rawHeaders on first access only; most
// hello-world handlers never touch it.
// https://nodejs.org/api/http.html#class-httpincomingmessage

const net = require('node:net')
const { Readable } = require('node:stream')
// node's own, taken as this module loads (before the preload puts ours on node's http)
const { IncomingMessage: NodeIncomingMessage } = require('node:http')
const { buildHeaders, buildDistinct } = require('./headers')
const { defineLegacyClass } = require('./legacy-class')
const {
  kHandle, kQueueRequest, kSocket, kHeaders, kHeadersDistinct, kTrailers,
  kTrailersDistinct, kResponse, kJoinDuplicates, kPerfProbe
} = require('./symbols')

/**
 * @param {object} [socket] node's signature; the server passes nothing and the socket
 *   object is made when first asked for
 */
function IncomingMessage (socket) {
  // node's HTTP/1 parser makes its requests with the class its server holds, and an
  // http2 server's allowHTTP1 fallback holds http.IncomingMessage as it was when the
  // server was made: this class, under the preload (http2 servers stay node's own). A
  // request read from a live socket by node's parser is node's own: this class has
  // none of the parser's internals.
  if (isLiveSocket(socket)) return new NodeIncomingMessage(socket)
  Readable.call(this)
  // Until the app reads, the stream must not pull on its own (Readable's read-ahead
  // would mark the request as consumed and ask the backend for body nobody wants).
  this._readableState.readingMore = true
  this[kSocket] = socket // undefined when none is given, as node's
  this[kHandle] = null
  this[kPerfProbe] = null
  this[kQueueRequest] = null
  this[kResponse] = null
  this[kHeaders] = null
  this[kHeadersDistinct] = null
  this[kTrailers] = null
  this[kTrailersDistinct] = null
  this[kJoinDuplicates] = false
  this.httpVersionMajor = null
  this.httpVersionMinor = null
  this.httpVersion = null
  this.complete = false
  this.rawHeaders = []
  this.rawTrailers = []
  this.aborted = false
  this.upgrade = null
  this.url = ''
  this.method = null
  this.statusCode = null
  this.statusMessage = null
  this._consuming = false
  this._dumped = false
}

class IncomingMessageMembers extends Readable {
  get socket () {
    let s = this[kSocket]
    if ((s === null || s === undefined) && this[kHandle] !== null) s = this[kSocket] = this[kHandle].socketFor(this)
    return s
  }

  set socket (value) { this[kSocket] = value }

  get connection () { return this.socket }
  set connection (value) { this[kSocket] = value }

  get headers () {
    let h = this[kHeaders]
    if (h === null) h = this[kHeaders] = buildHeaders(this.rawHeaders, this[kJoinDuplicates])
    return h
  }

  set headers (value) { this[kHeaders] = value }

  get headersDistinct () {
    let h = this[kHeadersDistinct]
    if (h === null) h = this[kHeadersDistinct] = buildDistinct(this.rawHeaders)
    return h
  }

  set headersDistinct (value) { this[kHeadersDistinct] = value }

  // A chunked request's trailers, from the router with the end of its body (the hub
  // passes them on; HTTP.SYS keeps them: empty there, as for a request without any).
  get trailers () {
    let t = this[kTrailers]
    if (t === null) t = this[kTrailers] = buildHeaders(this.rawTrailers, false)
    return t
  }

  set trailers (value) { this[kTrailers] = value }

  get trailersDistinct () {
    let t = this[kTrailersDistinct]
    if (t === null) t = this[kTrailersDistinct] = buildDistinct(this.rawTrailers)
    return t
  }

  set trailersDistinct (value) { this[kTrailersDistinct] = value }

  // Windows authentication (README "Windows authentication"): who HTTP.SYS authenticated,
  // or the hub's development identity; null for an anonymous request. A test may assign one.
  get windowsIdentity () {
    const q = this[kQueueRequest]
    return (q !== null && q.identity) || null
  }

  set windowsIdentity (value) {
    Object.defineProperty(this, 'windowsIdentity', { value, writable: true, configurable: true, enumerable: true })
  }

  setTimeout (msecs, callback) {
    if (typeof callback === 'function') this.on('timeout', callback)
    const socket = this.socket
    if (socket) socket.setTimeout(msecs)
    return this
  }

  // node marks a request as consumed on the first read(), so that a body nobody read
  // is discarded (_dump) once the response is done.
  read (n) {
    if (!this._consuming) {
      this._readableState.readingMore = false
      this._consuming = true
    }
    return super.read(n)
  }

  _read () {
    const handle = this[kHandle]
    if (handle === null) return
    const q = this[kQueueRequest]
    if (!q.hasBody) {
      this.complete = true
      this.push(null)
      return
    }
    handle.readBody(this)
  }

  /** Discards a body nobody read, so that 'end' and 'close' still come. */
  _dump () {
    if (!this._dumped) {
      this._dumped = true
      this.removeAllListeners('data')
      this.resume()
    }
  }

  _destroy (err, cb) {
    if (!this.readableEnded || !this.complete) {
      this.aborted = true
      this.emit('aborted')
    }
    const handle = this[kHandle]
    // Destroying a request whose response is still pending resets the client
    // connection, as destroying node's socket does.
    if (handle !== null && this.aborted) handle.cancel(this, err)
    process.nextTick(onDestroyed, this, err, cb)
  }
}

/** A connected socket of node's own (ours, req.socket's RequestSocket, have no handle). */
function isLiveSocket (socket) {
  return socket !== undefined && socket !== null && socket._handle !== null && socket._handle !== undefined && socket instanceof net.Socket
}

// node emits a request's destroy error only when someone listens for it, so that a
// client going away never crashes an app that did not ask.
function onDestroyed (req, err, cb) {
  if (err && req.listenerCount('error') > 0) cb(err)
  else cb()
}

defineLegacyClass(IncomingMessage, Readable, IncomingMessageMembers)

module.exports = { IncomingMessage, NodeIncomingMessage }
