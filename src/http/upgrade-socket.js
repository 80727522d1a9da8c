'use strict'

// The socket an app's 'upgrade' listener gets: `server.on('upgrade', (req, socket, head))`.
// ws, socket.io and express-ws take it over as node hands it to them: they write the
// handshake answer raw ("HTTP/1.1 101 Switching Protocols\r\n...\r\n\r\n") and then
// their own protocol's bytes, and read the client's bytes from it.
//
// It is a net.Socket (so `socket instanceof net.Socket` holds and every stream and
// socket method is node's own), with no handle: its bytes go through the request's
// queue attachment. The head the app writes is read back (raw-response.js gatherHead):
// a 101 becomes respond(..., RESPONSE_OPAQUE) and the router switches the connection to
// an opaque byte stream (the hub's tunnel.js, HTTP.SYS's opaque mode); so does a 2xx to
// a CONNECT ('connect': "HTTP/1.1 200 Connection established", a proxy's tunnel, which
// only a port a standalone server owns lets through); any other status is an ordinary
// response that closes the connection (ws's refusals: 400, 401).
// After the 101, writes are sendBody() pieces and the app's end() is its FIN; the
// client's bytes arrive as the request's body (onBody) and its FIN as onBodyEnd. Both
// ways are flow-controlled: a write waits for the response window (its callback, and
// so ws's backpressure, comes when the router took the bytes), and the client's bytes
// are asked for (readBody) only as the app reads them.
//
// allowHalfOpen is false, as on node's http server: the client's FIN ends our side too.
// A reset (the client, the router, or a worker stop) destroys it: 'error' (ECONNRESET)
// when the app listens for errors, then 'close'.

const net = require('node:net')
const { codes } = require('../errors')
const { RESPONSE_MORE, RESPONSE_CLOSE, RESPONSE_OPAQUE } = require('../wire/contract')
const { gatherHead } = require('./raw-response')

const kTunnel = Symbol('httpsys.tunnel')

/** Every upgraded socket of the process that is open (the preload closes them before a stop's kill). */
const open = new Set()

class TunnelState {
  constructor (handle, q) {
    this.handle = handle
    this.id = q.id
    this.connect = q.method === 'CONNECT' // a 2xx answer is the tunnel (node's proxy servers)
    this.head = null // the head's bytes until its blank line is written
    this.started = false // the head went out
    this.opaque = false // it was a 101: the connection is the app's protocol now
    this.writeCb = null // a write waiting for the response window
    this.complete = false // a refusal (not 101) went out whole in one send
    this.writeEnded = false // our FIN went to the router
    this.readEnded = false // the client's FIN arrived
    this.wantRead = false // _read() came before the 101
    this.bytesRead = 0
    this.bytesWritten = 0
    this.local = { address: q.localAddress, family: q.remoteFamily, port: q.localPort }
  }
}

class UpgradeSocket extends net.Socket {
  /**
   * @param {import('./server-handle').ServerHandle} handle
   * @param {object} q the upgrade request's QueueRequest (src/wire/contract.js)
   */
  constructor (handle, q) {
    super({ allowHalfOpen: false })
    this[kTunnel] = new TunnelState(handle, q)
    // net.Socket answers remoteAddress and friends from _peername when it has no handle
    this._peername = { address: q.remoteAddress, family: q.remoteFamily, port: q.remotePort }
    // node frees the socket's HTTP parser before it emits 'upgrade' or 'connect'
    this.parser = null
    if (q.encrypted === true) {
      // the router terminated TLS: answer as a tls.TLSSocket would (ws reads `encrypted`)
      this.encrypted = true
      this._secureEstablished = true
      this.authorized = Boolean(q.tls && q.tls.authorized)
      this.alpnProtocol = (q.tls && q.tls.alpnProtocol) || false
      this.servername = (q.tls && q.tls.servername) || false
    }
    this.server = handle.server
    open.add(this)
  }

  get pending () { return false }
  get bytesRead () { return this[kTunnel].bytesRead }
  get bytesWritten () { return this[kTunnel].bytesWritten + this.writableLength }

  _getsockname () { return this[kTunnel].local }

  // net.Socket's own _writev goes to a handle this socket does not have
  _writev (chunks, cb) {
    const bufs = chunks.map(({ chunk, encoding }) => typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk)
    this._write(bufs.length === 1 ? bufs[0] : Buffer.concat(bufs), 'buffer', cb)
  }

  _write (chunk, encoding, cb) {
    const t = this[kTunnel]
    const a = t.handle.attachment
    if (a === null) return cb(new codes.ECONNRESET())
    // net.Socket keeps strings as written (decodeStrings: false)
    if (typeof chunk === 'string') chunk = Buffer.from(chunk, encoding)
    this._unrefTimer()
    t.bytesWritten += chunk.length
    let ok
    if (!t.started) {
      const parsed = gatherHead(t, chunk, true)
      if (parsed === null) return cb()
      if (typeof parsed === 'string') return cb(badHead(parsed))
      let rest = parsed.rest
      t.started = true
      t.opaque = parsed.status === 101 || (t.connect && parsed.status >= 200 && parsed.status < 300)
      let flags = t.opaque ? RESPONSE_OPAQUE | RESPONSE_MORE : RESPONSE_MORE | RESPONSE_CLOSE
      if (!t.opaque && parsed.contentLength >= 0 && rest.length >= parsed.contentLength) {
        // a refusal written whole (ws writes its 400 with a Content-Length): one send
        rest = rest.subarray(0, parsed.contentLength)
        flags = RESPONSE_CLOSE
        t.complete = true
      }
      ok = a.respond(t.id, parsed.status, parsed.reason, parsed.rawHeaders, rest.length > 0 ? rest : null, flags)
      if (t.opaque && t.wantRead) a.readBody(t.id)
    } else if (t.complete) {
      ok = true // a refusal already sent whole: nothing more goes with it
    } else {
      ok = a.sendBody(t.id, chunk, RESPONSE_MORE)
    }
    if (ok) cb()
    else t.writeCb = cb
  }

  _final (cb) {
    const t = this[kTunnel]
    const a = t.handle.attachment
    t.writeEnded = true
    if (!t.started || a === null) {
      // ended without ever answering the handshake: there is nothing to send; the
      // client connection is reset (as node's socket.end() would close it)
      this.destroy()
      return cb()
    }
    if (!t.complete) a.sendBody(t.id, null, RESPONSE_CLOSE)
    cb()
  }

  _read () {
    const t = this[kTunnel]
    if (!t.opaque) {
      t.wantRead = true
      return
    }
    const a = t.handle.attachment
    if (a !== null && !t.readEnded) a.readBody(t.id)
  }

  _destroy (err, cb) {
    const t = this[kTunnel]
    open.delete(this)
    t.handle.tunnelGone(t.id, !(t.writeEnded && t.readEnded))
    const pending = t.writeCb
    t.writeCb = null
    if (pending !== null) pending(err || new codes.ERR_STREAM_DESTROYED({ method: 'write' }))
    super._destroy(err, cb)
  }
}

// ---- the handle -> socket side (server-handle.js routes these by request id) ----------

/** Client bytes (the request's body, after the 101). */
function tunnelData (socket, chunk) {
  const t = socket[kTunnel]
  t.bytesRead += chunk.length
  socket._unrefTimer()
  if (socket.push(chunk) && t.handle.attachment !== null && !t.readEnded) t.handle.attachment.readBody(t.id)
}

/** The client's FIN. */
function tunnelEnd (socket) {
  const t = socket[kTunnel]
  if (t.readEnded) return
  t.readEnded = true
  socket.push(null)
  // as net.Socket at EOF: 'end' comes even when nobody reads (nothing is buffered), so
  // a socket the app ended closes (allowHalfOpen false) and the server's close() can end
  socket.read(0)
}

/** The router reset the connection, or the worker is leaving. */
function tunnelAbort (socket) {
  // (its _destroy's cancel is a no-op: the request is no longer in flight)
  if (socket.destroyed) return
  // an app that listens for errors hears ECONNRESET as from node's socket; one that does
  // not is not crashed by a client leaving (node's upgraded socket would crash it)
  socket.destroy(socket.listenerCount('error') > 0 ? new codes.ECONNRESET() : undefined)
}

/** The response window reopened: a write waiting for it is done. */
function tunnelDrain (socket) {
  const t = socket[kTunnel]
  const cb = t.writeCb
  if (cb === null) return
  t.writeCb = null
  cb()
}

/** Closes every upgraded socket (the preload, before a stop's deadline). */
function closeUpgradedSockets () {
  for (const s of [...open]) tunnelAbort(s)
}

function badHead (reason) {
  return new codes.ERR_HTTPSYS_SOCKET_WRITE({ reason: `the bytes written to an upgrade's socket are not an HTTP/1.1 response head: ${reason}` })
}

module.exports = { UpgradeSocket, tunnelData, tunnelEnd, tunnelAbort, tunnelDrain, closeUpgradedSockets }
