'use strict'

// One HTTP/2 client connection (h2 negotiated by ALPN on a TLS port): node's http2
// server session does the framing, HPACK and flow control (RFC 9113); the hub turns
// each stream into a request for the same routing and queues as HTTP/1.1 (H2Request).
//
// The request an app sees: the method, :path as the URL, :authority as the Host
// header (RFC 9113 8.3.1), the other fields as raw headers without pseudo-headers,
// cookie fields joined with "; " (8.2.3), HTTP version 2.0. The router's rules hold as
// on HTTP/1.1: a method node does not know, a missing or bad authority, a bad target:
// 400; header fields over the hub's maxHeaderSize: 431; a body over the limit: 413.
// The request body is flow-controlled through the stream: a paused stream stops
// WINDOW_UPDATEs, so the client waits rather than the hub buffering.
//
// Prior-knowledge h2c (RFC 9113 3.3) on plain ports is not served: HTTP.SYS serves
// HTTP/2 over TLS only, and the hub keeps its rules (the preface is a 400 there).

const http2 = require('node:http2')
const { METHODS } = require('node:http')
const { H2Request, CONTINUE_SENT } = require('./h2-request')
const { canonicalizeTarget } = require('../urlprefix')
const { isValidHostPort } = require('./request-target')
const { after, now } = require('./clock')

const { NGHTTP2_CANCEL, NGHTTP2_REFUSED_STREAM } = http2.constants

// RFC 9113 6.5.2 recommends at least 100; HTTP.SYS's default is 100 too.
const MAX_STREAMS = 100
const KNOWN_METHODS = new Set(METHODS)
// the Host characters the HTTP/1.1 parser accepts (URI host and port characters)
const HOST_CHARS = /^[A-Za-z0-9\-._~%!$&'()*+,;=:[\]]+$/
const VCHAR_ONLY = /^[\x21-\x7e]+$/
const DIGITS = /^\d+$/
// grace for in-flight streams after a GOAWAY when the hub closes
const LINGER_MS = 5000
// how often a connection with streams in flight is looked at when body_timeout is off
const LIVENESS_MS = 120000

class H2Connection {
  /**
   * @param {import('./hub').Hub} hub
   * @param {import('node:tls').TLSSocket} socket the handshake is done, ALPN said h2
   * @param {number} id
   * @param {number} port
   * @param {Buffer} tls the session, encoded for REQUEST frames
   */
  constructor (hub, socket, id, port, tls) {
    this.hub = hub
    this.socket = socket
    this.id = id
    this.localPort = port
    this.tls = tls
    this.tlsSlot = null // the certificate entry the handshake used (TlsStore.judge)
    this.tlsHost = null // the last Host checked against it (hub.route), for all its streams
    this.secure = true
    this.localAddress = socket.localAddress || ''
    this.remoteAddress = socket.remoteAddress || ''
    this.remotePort = socket.remotePort || 0
    this.family = socket.remoteFamily === 'IPv6' ? 6 : 4
    this.open = new Set() // H2StreamConn of streams not closed yet
    this.closing = false
    this.dead = false
    this.seen = null // the attachments its streams went to (attachment-connection.js noteAttachment)
    this.deadline = after(hub.headersTimeout)
    this.pingOut = false // a liveness PING is unanswered (timeout)
    this.charged = 0 // its streams' windows and held bytes (h2-request.js, the held-bytes budget)
    this.session = http2.performServerHandshake(socket, {
      settings: {
        enablePush: false,
        maxConcurrentStreams: MAX_STREAMS,
        // above the hub's own limit, so that the hub answers 431 itself (as on HTTP/1.1)
        maxHeaderListSize: 65536 + 32 * 1024
      },
      maxHeaderListPairs: 4096,
      // node's default (10 MB) would refuse streams under load before the hub's own limits do
      maxSessionMemory: 64
    })
    this.session.on('stream', (stream, headers, flags, rawHeaders) => this.onStream(stream, headers, flags, rawHeaders))
    this.session.on('error', () => {})
    this.session.on('close', () => this.onClose())
    socket.on('error', () => socket.destroy()) // as ClientConnection's
  }

  onStream (stream, headers, flags, rawHeaders) {
    if (this.closing || this.dead) {
      stream.close(NGHTTP2_REFUSED_STREAM)
      return
    }
    const sc = new H2StreamConn(this, stream)
    this.open.add(sc)
    // streams in flight: timeout() looks at them every bodyTimeout
    if (this.open.size === 1) this.deadline = after(this.period())
    stream.on('error', () => {})
    stream.on('close', () => this.streamClosed(sc))
    const head = headOf(stream, headers, rawHeaders, this.hub.maxHeaderSize)
    const req = new H2Request(sc, head)
    sc.req = req
    if (head.hasBody) {
      sc.bodyOpen = true
      stream.on('data', (chunk) => {
        sc.lastData = now()
        req.onBodyChunk(chunk)
      })
      // a trailing HEADERS block: the request's trailers, passed on with the body's end
      stream.on('trailers', (fields, flags, raw) => { head.trailers = trailerPairs(fields, raw) })
      stream.on('end', () => {
        sc.bodyOpen = false
        req.onBodyComplete()
      })
    }
    if (head.status !== 0) {
      this.hub.log.debug({ status: head.status, reason: head.reason, remoteAddress: this.remoteAddress }, 'bad h2 request')
      req.respondLocal(head.status, head.variant)
      return
    }
    const host = canonicalizeTarget(head)
    if (host === null) {
      req.respondLocal(400, 'url')
      return
    }
    if (host !== '') head.host = host
    this.hub.route(sc, req)
  }

  streamClosed (sc) {
    this.open.delete(sc)
    const req = sc.req
    if (req !== null) {
      if (!req.resDone) req.abort()
      req.track() // what it held is gone
    }
    if (this.open.size === 0 && !this.dead) {
      if (this.closing) this.session.close()
      else this.deadline = after(this.hub.keepAliveTimeout)
    }
  }

  /** hub.close(): GOAWAY; the streams in flight finish, then the session closes. */
  shutdown () {
    this.closing = true
    this.deadline = after(LINGER_MS)
    if (!this.session.closed) this.session.close()
    if (this.open.size === 0) this.destroy()
  }

  /** Its port stopped listening: GOAWAY; the streams in flight finish, then it closes. */
  closeWhenIdle () {
    if (this.dead || this.closing) return
    this.closing = true
    if (!this.session.closed) this.session.close()
    if (this.open.size === 0) this.destroy()
  }

  /**
   * The coarse clock: idle too long (no stream), or a closing hub waited enough; with
   * streams in flight, every bodyTimeout:
   * - a stream whose request body had no DATA for bodyTimeout (while the hub was not
   *   holding it back) is reset, and its app's request aborted, as HTTP/1.1's body_timeout
   *   ends its connection;
   * - the client must have answered the PING sent at the last look. After a connection
   *   error (GOAWAY) nghttp2 stops reading the socket and node reports nothing, not even
   *   the client's close, so only an unanswered PING tells that the connection is gone.
   */
  timeout () {
    if (this.open.size > 0 && !this.closing) {
      if (this.pingOut) return this.destroy()
      if (this.hub.bodyTimeout > 0) {
        const stale = now() - this.hub.bodyTimeout
        // (a reset stream leaves `open` on its 'close', a later tick)
        for (const sc of this.open) {
          if (sc.bodyOpen && !sc.held && sc.lastData <= stale && !sc.stream.destroyed) sc.stream.close(NGHTTP2_CANCEL)
        }
      }
      this.pingOut = true
      try {
        this.session.ping((err) => { if (!err) this.pingOut = false })
      } catch {
        return this.destroy()
      }
      this.deadline = after(this.period())
      return
    }
    this.destroy()
  }

  /** How often timeout() looks at the streams in flight. */
  period () {
    return this.hub.bodyTimeout > 0 ? this.hub.bodyTimeout : LIVENESS_MS
  }

  destroy () {
    if (this.dead) return
    this.session.destroy()
    this.socket.destroy()
    this.onClose()
  }

  onClose () {
    if (this.dead) return
    this.dead = true
    for (const sc of [...this.open]) this.streamClosed(sc)
    this.hub.connectionClosed(this)
  }
}

/**
 * One stream's side of the connection: what a HubRequest asks of its `conn`
 * (client-connection.js), for a single stream. Responses go through H2Request.
 */
class H2StreamConn {
  constructor (session, stream) {
    this.session = session
    this.stream = stream
    this.req = null
    this.id = session.id // the client connection: its streams share it (contract.js connectionId)
    this.tls = session.tls
    this.tlsSlot = session.tlsSlot
    this.secure = true
    this.localPort = session.localPort
    this.localAddress = session.localAddress
    this.remoteAddress = session.remoteAddress
    this.remotePort = session.remotePort
    this.family = session.family
    this.readEnded = false
    this.stopped = false
    this.bodyOpen = false // the request body has not ended
    this.lastData = now() // when its last DATA came (the body timeout, H2Connection.timeout)
    this.held = false // the hub stopped reading it (pauseForBody)
  }

  get closing () {
    return this.session.closing
  }

  // (the session's: its streams share the handshake, so a Host checked once is checked
  // for all of them, not a certificate lookup per stream)
  get tlsHost () {
    return this.session.tlsHost
  }

  set tlsHost (host) {
    this.session.tlsHost = host
  }

  pauseForBody () {
    this.held = true
    this.stream.pause()
  }

  resumeForBody () {
    if (this.held) {
      this.held = false
      this.lastData = now() // the client's pause starts now
    }
    if (!this.stream.destroyed) this.stream.resume()
  }

  /** A body over its queue's limit: 413, and the upload is stopped (H2Request.closeIfBodyLeft). */
  bodyTooLarge (req) {
    if (req.headSent) return this.destroy()
    req.withdraw()
    req.respondLocal(413, null)
  }

  /** 100 Continue is an informational HEADERS frame on h2 (RFC 9113 8.1). */
  writeContinue (req) {
    req.continueState = CONTINUE_SENT
    try {
      this.stream.additionalHeaders({ ':status': 100 })
    } catch {}
  }

  write () {}
  write2 () {}
  done () {}

  /** The worker cancelled, or died mid-response: reset this stream, not the connection. */
  destroy () {
    if (!this.stream.destroyed) this.stream.close(NGHTTP2_CANCEL)
  }
}

/** An h2 trailer block as [name, value, ...] (node gives the raw list; else from the object). */
function trailerPairs (fields, raw) {
  const out = []
  if (Array.isArray(raw)) {
    for (let i = 0; i + 1 < raw.length; i += 2) out.push(String(raw[i]), String(raw[i + 1]))
    return out
  }
  for (const name of Object.keys(fields || {})) {
    const v = fields[name]
    if (Array.isArray(v)) for (const x of v) out.push(name, String(x))
    else out.push(name, String(v))
  }
  return out
}

/**
 * The request head (http-parser.js RequestHead) of an h2 stream, with status 0, or the
 * status the hub answers instead (400, 431) and why.
 */
function headOf (stream, headers, rawHeaders, maxHeaderSize) {
  const method = headers[':method']
  const path = headers[':path']
  const authority = headers[':authority']
  const head = {
    method: typeof method === 'string' ? method : 'GET',
    url: typeof path === 'string' ? path : '/',
    versionMajor: 2,
    versionMinor: 0,
    rawHeaders: [],
    host: '',
    contentLength: -1,
    chunked: false,
    keepAlive: true,
    expectContinue: false,
    expectOther: false,
    upgrade: false,
    hasBody: !stream.endAfterHeaders,
    trailers: null,
    status: 0,
    variant: null,
    reason: null
  }
  const bad = (status, reason, variant = null) => {
    head.status = status
    head.reason = reason
    head.variant = variant
    return head
  }
  // request line as HTTP/1.1 would count it ("GET / HTTP/1.1\r\n"), then each field
  let size = head.method.length + head.url.length + 12
  let host = null
  let cookie = null
  const raw = head.rawHeaders
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]
    const value = rawHeaders[i + 1]
    if (name.charCodeAt(0) === 58) continue // pseudo-header
    size += name.length + value.length + 4
    switch (name) {
      case 'cookie':
        cookie = cookie === null ? value : cookie + '; ' + value
        continue
      case 'host':
        if (host !== null && host !== value) return bad(400, 'conflicting Host fields')
        host = value
        break
      case 'content-length':
        if (!DIGITS.test(value) || (head.contentLength !== -1 && head.contentLength !== Number(value))) return bad(400, 'invalid Content-Length')
        head.contentLength = Number(value)
        break
      case 'expect':
        if (/^100-continue$/i.test(value)) head.expectContinue = true
        else head.expectOther = true
        break
    }
    raw.push(name, value)
  }
  if (cookie !== null) raw.push('cookie', cookie)
  if (size > maxHeaderSize) return bad(431, 'header fields too large')
  if (!KNOWN_METHODS.has(head.method) || head.method === 'CONNECT') return bad(400, 'method')
  if (typeof path !== 'string' || !VCHAR_ONLY.test(path)) return bad(400, 'invalid :path', 'url')
  if (typeof authority === 'string' && authority !== '') {
    // RFC 9113 8.3.1: a Host that names another authority makes the request malformed
    if (host !== null && host.toLowerCase() !== authority.toLowerCase()) return bad(400, 'Host differs from :authority')
    if (host === null) raw.unshift('host', authority)
    host = authority
  }
  if (host === null || !HOST_CHARS.test(host) || !isValidHostPort(host)) return bad(400, 'missing or invalid authority', 'hostname')
  head.host = host
  return head
}

module.exports = { H2Connection, H2StreamConn, headOf, MAX_STREAMS }
