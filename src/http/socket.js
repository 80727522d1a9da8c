'use strict'

// What req.socket / req.connection / res.socket are for a request that came from a
// queue: the client connection as far as the router told us about it.
//
// There is no TCP socket in this process, so this object carries the
// properties apps and frameworks read (remoteAddress for req.ip, encrypted for
// req.protocol, writable/destroyed for on-finished, setTimeout for timeouts) and the
// methods they call. One object stands for one client connection while any of its
// requests is in flight; destroy() cancels those requests, which closes the client
// connection at once, as destroying node's socket would.
//
// A net.Socket with no handle (`socket instanceof net.Socket` holds, as apps and
// libraries check it; upgrade-socket.js does the same), whose socket methods are the
// ones below: nothing of it reaches a handle. Reading the socket has no meaning on a
// queue. write() takes a whole raw HTTP/1.1 response for a request whose response has
// not begun (raw-response.js), as apps that hijack a response write it.

const net = require('node:net')
const { codes } = require('../errors')
const { kResponse } = require('./symbols')
const { rawWrite, rawEnd, kRaw } = require('./raw-response')

const kRequests = Symbol('httpsys.socketRequests')
const kHandle = Symbol('httpsys.socketHandle')
const kTimer = Symbol('httpsys.socketTimer')
const kClosed = Symbol('httpsys.socketClosed')
const kDestroying = Symbol('httpsys.socketDestroying') // destroy() emits 'error'/'close' itself
const kEnded = Symbol('httpsys.socketEnded') // a response closed the connection: our side is ended
const kConnectionId = Symbol('httpsys.socketConnection')
const kDirect = Symbol('httpsys.socketDirect')
const kKeepAliveTimed = Symbol('httpsys.socketKeepAliveTimed') // its timeout is the server's keepAliveTimeout

class RequestSocket extends net.Socket {
  /**
   * @param {object} q the QueueRequest (contract.js) of the first request seen on it
   * @param {object|null} handle the server's ServerHandle (server-handle.js; null when detached)
   */
  constructor (q, handle) {
    super()
    this.remoteAddress = q.remoteAddress
    this.remotePort = q.remotePort
    this.remoteFamily = q.remoteFamily
    this.localAddress = q.localAddress
    this.localPort = q.localPort
    // net.Socket has no `encrypted`; tls.TLSSocket has `encrypted === true`. Express
    // and koa test it for req.protocol.
    this.encrypted = q.encrypted === true ? true : undefined
    // the TLS session is the router's (contract.js TlsInfo); these answer as tls.TLSSocket
    this.authorized = q.encrypted === true ? Boolean(q.tls && q.tls.authorized) : undefined
    this.authorizationError = q.encrypted === true ? (q.tls && q.tls.authorizationError) || null : undefined
    this.alpnProtocol = q.encrypted === true ? (q.tls && q.tls.alpnProtocol) || false : undefined
    this.servername = q.encrypted === true ? (q.tls && q.tls.servername) || false : undefined
    // tls.TLSSocket's flag for a completed handshake, which code checks for "is this https"
    this._secureEstablished = q.encrypted === true ? true : undefined
    this.server = handle !== null ? handle.server : null
    this.destroyed = false
    this.readable = true
    this.writable = true
    this.connecting = false
    this.pending = false
    this.allowHalfOpen = true
    // Counted from the bodies passing through src/http (heads are the router's):
    // good enough for access logs, not a wire count.
    this.bytesRead = 0
    // a standalone server's own connection after a request it could not parse: the
    // router's raw access ({ write, end, destroy }) for the 'clientError' listeners
    this[kDirect] = null
    this.written = 0 // bytes handed to the router (bytesWritten adds what waits in responses)
    this.timeout = undefined
    this[kRequests] = []
    this[kHandle] = handle
    this[kTimer] = null
    this[kClosed] = false
    this[kConnectionId] = q.connectionId
    this._tls = q.tls || null
  }

  get readyState () { return this.destroyed ? 'closed' : 'open' }

  // node's socket counts bytes as they are written to it, buffered ones included
  get bytesWritten () {
    let n = this.written
    const reqs = this[kRequests]
    for (let i = 0; i < reqs.length; i++) {
      const res = reqs[i][kResponse]
      if (res) n += res.writableLength
    }
    return n
  }

  get writableLength () { return 0 }
  get writableHighWaterMark () { return 16384 }
  get writableCorked () { return 0 }
  get readableHighWaterMark () { return 16384 }
  get writableEnded () { return this.destroyed || this[kEnded] === true }
  get writableFinished () { return this.destroyed || this[kEnded] === true }

  address () {
    return { address: this.localAddress, family: this.remoteFamily, port: this.localPort }
  }

  /**
   * Idle timeout like net.Socket's: 'timeout' fires after `ms` without body traffic;
   * the server turns it into req/res/server 'timeout' events (see server-handle.js).
   */
  setTimeout (ms, callback) {
    ms = Number(ms) || 0
    if (this[kTimer] !== null) {
      clearTimeout(this[kTimer])
      this[kTimer] = null
    }
    this.timeout = ms
    if (ms > 0 && !this.destroyed) {
      this[kTimer] = setTimeout(onTimer, ms, this)
      this[kTimer].unref()
      if (typeof callback === 'function') this.once('timeout', callback)
    } else if (typeof callback === 'function') {
      this.removeListener('timeout', callback)
    }
    return this
  }

  // TCP options belong to the router's socket; accepted so apps keep running.
  setNoDelay () { return this }
  setKeepAlive () { return this }
  setEncoding () { return this }
  ref () { return this }
  unref () { return this }
  cork () {}
  uncork () {}
  pause () { return this }
  resume () { return this }
  _read () {}

  /** A raw response, written around res (raw-response.js). */
  write (chunk, encoding, callback) {
    if (this[kDirect] !== null) return directWrite(this, chunk, encoding, callback)
    return rawWrite(this, this[kHandle], this[kRequests], chunk, encoding, callback)
  }

  /** Ends the connection after the responses in flight (they go out with close). */
  end (data, encoding, callback) {
    if (typeof data === 'function') {
      callback = data
      data = undefined
    } else if (typeof encoding === 'function') {
      callback = encoding
      encoding = undefined
    }
    if (data !== undefined && data !== null) this.write(data, encoding)
    if (this[kDirect] !== null) {
      // a 'clientError' listener's answer is complete: the connection ends after it
      this.writable = false
      this[kDirect].end()
      if (typeof callback === 'function') process.nextTick(callback)
      return this
    }
    if (this[kRaw]) rawEnd(this, this[kHandle])
    const reqs = this[kRequests]
    for (const req of reqs) {
      const res = req[kResponse]
      if (res) res.shouldKeepAlive = false
    }
    // an idle connection: the router ends it (where it can), and says when it closed
    if (reqs.length === 0) endIdle(this)
    if (typeof callback === 'function') process.nextTick(callback)
    return this
  }

  /** Resets the client connection: every request in flight on it is cancelled. */
  destroy (err) {
    if (this.destroyed) return this
    markDestroyed(this)
    this[kDestroying] = true
    // the socket's 'error' and 'close' are queued before anything its requests' ends
    // queue: listeners of the socket hear first, as from node's (on-finished, and so
    // koa, report a stream error once, from the socket)
    process.nextTick(emitClose, this, err || null)
    if (this[kDirect] !== null) {
      this[kDirect].destroy()
      return this
    }
    const reqs = this[kRequests].slice()
    const handle = this[kHandle]
    if (handle !== null) {
      for (let i = 0; i < reqs.length; i++) handle.cancel(reqs[i], err || null)
      if (reqs.length === 0) {
        // an idle connection of a standalone server's own (its responses all written
        // out) closes at once, as node's destroy(); one whose ended response the router
        // still carries or writes ends after it (node's 'finish' waits for the flush, so
        // its destroy() after end() loses nothing); elsewhere the router ends it. One
        // the router holds answered responses of for a client that takes none
        // (CONN_HELD) closes at once too: node's 'finish' had not come, its destroy()
        // drops them (test-http-pipeline-flood)
        const conn = handle.ownConn(this[kConnectionId])
        if (conn !== undefined && (conn.nothingToWrite === true || conn.held === true)) conn.destroy()
        else endIdle(this)
      }
    }
    return this
  }

  destroySoon () { return this.end() }

  resetAndDestroy () { return this.destroy() }

  // tls.TLSSocket surface, for apps behind a TLS-terminating router.
  getPeerCertificate (detailed) {
    const der = this._tls && this._tls.peerCertificate
    return der ? peerCertificate(der, detailed) : {}
  }

  getProtocol () { return (this._tls && this._tls.protocol) || null }
  getCipher () {
    // a fresh object per call, as node's: the session's own is shared (protocol.js decodeTlsInfo)
    const c = this._tls && this._tls.cipher
    return c ? { ...c } : null
  }

  getSession () { return undefined }
  isSessionReused () { return false }
}

// net.Socket answers these from its handle, through getters on its prototype: here
// they are values of the object's own, set as it learns them (and bytesRead counted)
for (const name of ['remoteAddress', 'remotePort', 'remoteFamily', 'localAddress', 'localPort', 'bytesRead', 'pending']) {
  const key = Symbol(name)
  Object.defineProperty(RequestSocket.prototype, name, {
    get () { return this[key] },
    set (value) { this[key] = value },
    configurable: true
  })
}

/**
 * node's getPeerCertificate() object (https://nodejs.org/api/tls.html#certificate-object)
 * from the DER the router passes: subject and issuer as { CN, O, ... }, validity,
 * fingerprints, serial number, raw. Only what the certificate itself says: the chain
 * (issuerCertificate) is the router's.
 */
function peerCertificate (der, detailed) {
  let x509
  try {
    x509 = new (require('node:crypto').X509Certificate)(der)
  } catch {
    return {}
  }
  const cert = {
    subject: distinguishedName(x509.subject),
    issuer: distinguishedName(x509.issuer),
    subjectaltname: x509.subjectAltName,
    infoAccess: undefined,
    ca: x509.ca,
    valid_from: x509.validFrom,
    valid_to: x509.validTo,
    fingerprint: x509.fingerprint,
    fingerprint256: x509.fingerprint256,
    fingerprint512: x509.fingerprint512,
    serialNumber: x509.serialNumber,
    raw: Buffer.from(der)
  }
  if (cert.subjectaltname === undefined) delete cert.subjectaltname
  delete cert.infoAccess
  if (detailed) cert.issuerCertificate = cert.subject.CN === cert.issuer.CN ? cert : undefined
  return cert
}

/** "C=US\nO=Example\nCN=a" -> { C: 'US', O: 'Example', CN: 'a' } (repeats become arrays, as node's) */
function distinguishedName (text) {
  const out = Object.create(null)
  for (const line of String(text || '').split('\n')) {
    const eq = line.indexOf('=')
    if (eq <= 0) continue
    const key = line.slice(0, eq)
    const value = line.slice(eq + 1)
    out[key] = out[key] === undefined ? value : [].concat(out[key], value)
  }
  return out
}

/** A 'clientError' listener writing to the client: the bytes go out as they are. */
function directWrite (socket, chunk, encoding, callback) {
  if (typeof encoding === 'function') {
    callback = encoding
    encoding = undefined
  }
  if (socket.destroyed || !socket.writable) {
    if (typeof callback === 'function') process.nextTick(callback, new codes.ERR_STREAM_WRITE_AFTER_END())
    return false
  }
  const buf = typeof chunk === 'string' ? Buffer.from(chunk, encoding || 'utf8') : chunk
  socket.written += buf.length
  return socket[kDirect].write(buf, typeof callback === 'function' ? () => callback() : undefined)
}

function endIdle (socket) {
  const handle = socket[kHandle]
  socket[kEnded] = true
  socket.writable = false
  // (where the router can: the hub; elsewhere the connection ends with its requests)
  if (handle !== null && handle.attachment !== null && typeof handle.attachment.endConnection === 'function') {
    handle.attachment.endConnection(socket[kConnectionId])
  }
}

function markDestroyed (socket) {
  socket.destroyed = true
  socket.readable = false
  socket.writable = false
  if (socket[kTimer] !== null) {
    clearTimeout(socket[kTimer])
    socket[kTimer] = null
  }
}

function emitClose (socket, err) {
  if (socket[kClosed]) return
  socket[kClosed] = true
  if (err !== null && socket.listenerCount('error') > 0) socket.emit('error', err)
  socket.emit('close', err !== null)
}

function onTimer (socket) {
  // (the timer stays: traffic refreshes it again, as a net.Socket's does after its
  // 'timeout'; the router is timing the wait for the next request: awaitNext)
  const handle = socket[kHandle]
  if (socket[kKeepAliveTimed] === true && handle !== null && handle.routerWaits(socket[kConnectionId])) return
  socket.emit('timeout')
}

/** The router reset the connection: close now (node emits it synchronously too). */
function closeFromRouter (socket) {
  if (socket[kDestroying]) return // its own destroy(err) says 'error' (with err) and 'close' next
  if (!socket.destroyed) markDestroyed(socket)
  emitClose(socket, null)
}

/**
 * No request of this connection is in flight any more: a real socket would now sit in
 * the router's keep-alive pool, which times out on its own; this object is let go.
 */
function idle (socket) {
  if (socket[kTimer] === null) return
  const handle = socket[kHandle]
  // a socket that stands for its connection until it closes (the hub) keeps its idle
  // timeout, as node's does between keep-alive requests ('timeout' on the server)
  if (handle !== null && handle.keepsSockets && !socket.destroyed) {
    socket[kTimer].refresh()
    return
  }
  clearTimeout(socket[kTimer])
  socket[kTimer] = null
}

/**
 * A response that closes its connection went out: node ends the socket then
 * (socket.end() in the response's finish), so its writable side reads as ended.
 */
function ended (socket) {
  socket[kEnded] = true
  socket.writable = false
}

/**
 * node's resOnFinish: a connection whose last response kept it alive waits for the next
 * request with the server's keepAliveTimeout as its socket's timeout, in place of the
 * server's timeout. Where the router times that wait with the server's keepAliveTimeout
 * (a standalone server's own connections: `routerTimes`), its expiry is the socket's
 * 'timeout' (server-handle.js idleTimeout), and the server's timeout says nothing while
 * the router waits; while the router still writes the responses out (node's would not
 * have finished yet), the server's timeout runs on.
 */
function awaitNext (socket, routerTimes) {
  if (routerTimes) socket[kKeepAliveTimed] = true
  idle(socket)
}

/**
 * A request came on a connection whose socket object outlives its requests: after a
 * keep-alive wait the socket's timeout is the server's again (node's
 * resetSocketTimeout); otherwise the request is traffic that refreshes the timer.
 */
function nextRequest (socket, serverTimeout) {
  if (socket[kKeepAliveTimed] === true) {
    socket[kKeepAliveTimed] = false
    socket.setTimeout(serverTimeout)
  } else {
    touch(socket, 0, 0)
  }
}

/** Body traffic resets the idle timer, as reads and writes do on a real socket. */
function touch (socket, bytesIn, bytesOut) {
  socket.bytesRead += bytesIn
  socket.written += bytesOut
  if (socket[kTimer] !== null) socket[kTimer].refresh()
}

module.exports = { RequestSocket, kRequests, kDirect, closeFromRouter, idle, awaitNext, nextRequest, touch, ended }
