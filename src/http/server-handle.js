'use strict'

// One listen() of a Server (what node keeps as server._handle): the attachment to a
// queue and the requests in flight on it.
//
// The backend calls the handlers below (src/wire/contract.js); they turn QueueRequests into
// IncomingMessage/ServerResponse pairs and route body, drain and abort notifications
// to them by id. This is the hot path: one Map lookup per callback, no closures per
// request, the socket object made only when someone asks for req.socket.

const dc = require('node:diagnostics_channel')
const { codes } = require('../errors')
const { RESPONSE_CLOSE, EXPECT_CONTINUE, EXPECT_OTHER } = require('../wire/contract')
const { RequestSocket, kRequests, kDirect, closeFromRouter, idle, awaitNext, nextRequest, touch, ended } = require('./socket')
const { headBytes, H_CACHE_CONTROL } = require('./out-head')
const { storable, responseTtl, ruleFor, publicResponse } = require('../cache/rules')
const { readWorkerEnv } = require('../worker-interface')
const { UpgradeSocket, tunnelData, tunnelEnd, tunnelAbort, tunnelDrain } = require('./upgrade-socket')
const perfEntries = require('./perf-entries')
const { clientErrorOf, nodeClientError } = require('./client-error')
const {
  kHandle, kClosing, kResponseOptions, kUniqueHeaders, kState, kQueueRequest, kSocket, kResponse, kJoinDuplicates, kIncomingClass,
  kResponseClass, kStartTick, kPerfProbe
} = require('./symbols')

// node's diagnostics channels for http servers (APM tools subscribe to them)
const requestStart = dc.channel('http.server.request.start')
const responseFinish = dc.channel('http.server.response.finish')

const NO_HEAD = Buffer.alloc(0)

class ServerHandle {
  /**
   * @param {import('./server').Server} server
   * @param {import('./listen-target').ListenTarget} target
   */
  constructor (server, target) {
    this.server = server
    this.target = target
    this.attachment = null
    this.reservation = null // what the backend bound before the attach (contract.js reserve())
    this.released = false
    this.listeningEmitted = false
    this.inflight = new Map() // id -> IncomingMessage
    this.tunnels = new Map() // id -> UpgradeSocket: upgrade requests an 'upgrade' listener took
    this.sockets = new Map() // connectionId -> RequestSocket
    this.requestCounts = new Map() // connectionId -> requests seen (only with maxRequestsPerSocket)
    this.connections = new Set() // open client connections seen (where the router reports closes)
    this.own = null // a standalone server's client connections: id -> the router's connection
    // serves the streams handed to the server (server.js adopt), not a listen(): the
    // server's 'connection' and 'close' are not its to emit
    this.adopted = false
    this.dispatching = null // the request whose 'request' listeners are running
    this.detachWhenIdle = false // close() waits for those to end before it detaches
    this.closing = false // close() was called: no new requests
    this.detached = false // the router sends no new requests
    this.closed = false // the attachment is being (or has been) closed
    this.ended = false // 'close' is emitted (or the attach failed)
    this.tick = 0
    this.checker = null
    // the output cache's rules (HTTPSYS_CACHE; null: off): each GET response's time to
    // live goes to the router with respond() (src/cache/rules.js)
    this.cacheRules = readWorkerEnv().cache
    this.handlers = {
      onRequest: (q) => this.onRequest(q),
      onBody: (id, chunk) => this.onBody(id, chunk),
      onBodyEnd: (id, trailers) => this.onBodyEnd(id, trailers),
      onAbort: (id) => this.onAbort(id),
      onDrain: (id) => this.onDrain(id),
      onClose: (err) => this.onClose(err),
      onConnectionClose: (id) => this.onConnectionClose(id),
      onConnectionFin: (id) => this.onConnectionFin(id),
      // the router that holds this server's own port for it (a standalone process's)
      // tells of its connections in frames
      onConnectionOpen: (conn) => this.accepted(conn),
      onConnectionError: (id, e) => this.connectionError(id, e),
      onConnectionTimeout: (id) => this.connectionTimeout(id),
      onConnectionHeld: (id) => {
        const conn = this.ownConn(id)
        if (conn !== undefined) conn.held = true
      }
    }
  }

  // ---- backend -> http ---------------------------------------------------------

  onRequest (q) {
    const server = this.server
    const req = new server[kIncomingClass]()
    req[kHandle] = this
    req[kSocket] = null // made when first asked for (socketFor)
    req[kQueueRequest] = q
    req[kJoinDuplicates] = server.joinDuplicateHeaders === true
    req[kStartTick] = this.tick
    req.method = q.method
    req.url = q.url
    req.httpVersionMajor = q.httpVersionMajor
    req.httpVersionMinor = q.httpVersionMinor
    req.httpVersion = q.httpVersionMajor === 1
      ? (q.httpVersionMinor === 1 ? '1.1' : q.httpVersionMinor === 0 ? '1.0' : '1.' + q.httpVersionMinor)
      : q.httpVersionMajor + '.' + q.httpVersionMinor
    const max = server.maxHeadersCount
    req.rawHeaders = typeof max === 'number' && max > 0 && q.rawHeaders.length > max * 2
      ? q.rawHeaders.slice(0, max * 2)
      : q.rawHeaders
    req.complete = !q.hasBody
    if (this.attachment !== null && this.attachment.tellsConnectionClose === true) this.connections.add(q.connectionId)
    // node emits 'upgrade' for a request that asks to switch protocols when the server
    // listens for it, and an ordinary 'request' otherwise (req.upgrade false then); a
    // CONNECT (only a router that serves one sends it) is 'connect', and without a
    // listener node destroys its socket
    if (q.upgrade === true) {
      if (q.method === 'CONNECT') return this.connect(req, q)
      if (server.listenerCount('upgrade') > 0) return this.upgrade(req, q, 'upgrade')
    }
    req.upgrade = false

    if (server.highWaterMark !== undefined) req._readableState.highWaterMark = server.highWaterMark
    const res = new server[kResponseClass](req, server[kResponseOptions])
    const unique = server[kUniqueHeaders]
    if (unique !== null && unique !== undefined) res[kState].unique = unique
    res[kHandle] = this
    res.shouldKeepAlive = q.keepAlive !== false
    req[kResponse] = res
    // perf_hooks 'http' entries, while an observer asks for them (perf-entries.js)
    req[kPerfProbe] = perfEntries.start(req)
    this.inflight.set(q.id, req)
    // one socket object per connection where the router reports closes (the hub): the
    // server's timeout runs from the connection's first request (or its accept), as
    // node's from the connection's start, and the socket knows each of its requests
    // (its destroy() ends them)
    const s = this.keepsSockets ? this.sockets.get(q.connectionId) : undefined
    const own = this.ownConn(q.connectionId)
    if (own !== undefined && own.held === true) own.held = false // (CONN_HELD)
    if (s !== undefined && !s.destroyed) {
      nextRequest(s, Number(server.timeout) || 0)
      req[kSocket] = this.socketFor(req)
    } else if (server.timeout > 0) {
      req.socket.setTimeout(server.timeout)
    }

    // node's 'connection': the connection's socket object, before its first request
    if (server.listenerCount('connection') > 0 && !this.sockets.has(q.connectionId)) req[kSocket] = this.socketFor(req)

    if (requestStart.hasSubscribers) requestStart.publish({ request: req, response: res, socket: req.socket, server })

    // node's requireHostHeader (RFC 9112 3.2): an HTTP/1.1 request without Host gets 400
    // and a closed connection. The router that serves this server alone (the standalone
    // hub, which tells it of its connections: `own`) leaves the check to it, and it is
    // made here, after 'upgrade' took its requests, as node makes it: an upgrade request
    // without Host reaches the 'upgrade' listener. A shared router applies its own rule.
    if (this.own !== null && q.httpVersionMajor === 1 && q.httpVersionMinor === 1 && server.requireHostHeader !== false && !hasHost(req.rawHeaders)) {
      res.writeHead(400, ['Connection', 'close'])
      res.end()
      return
    }

    // maxRequestsPerSocket, counted per client connection as node counts per socket:
    // the last one says Connection: close, any after it get 503 and 'dropRequest'. On
    // a port the server owns, the connection stays open after them, as node's does (its
    // Connection: close is only said); a shared router closes it, as RFC 9112 9.6 asks.
    const maxRequests = server.maxRequestsPerSocket
    if (maxRequests > 0) {
      const n = (this.requestCounts.get(q.connectionId) || 0) + 1
      this.requestCounts.set(q.connectionId, n)
      res.maxRequestsOnConnectionReached = maxRequests <= n
      if (maxRequests <= n) {
        const conn = this.ownConn(q.connectionId)
        res[kState].lastKeepsOpen = conn !== undefined && conn.ownsPort === true
      }
      if (maxRequests < n) {
        server.emit('dropRequest', req, req.socket)
        res.writeHead(503)
        res.end()
        return
      }
    }

    // The router says what the Expect header asked for (only on HTTP/1.1, as node).
    // (while the app's listener runs, node's parser is still in this request: its
    // connection is not idle for closeIdleConnections(), answeredAll)
    this.dispatching = req
    try {
      if (q.expect === EXPECT_CONTINUE) dispatchContinue(server, req, res)
      else if (q.expect === EXPECT_OTHER) dispatchExpectation(server, req, res)
      else server.emit('request', req, res)
    } finally {
      this.dispatching = null
    }
  }

  /**
   * 'upgrade' (and 'connect'): the app gets the connection's bytes through an
   * UpgradeSocket, and those the router had read after the head as `head`.
   */
  upgrade (req, q, event) {
    req.upgrade = true
    const socket = new UpgradeSocket(this, q)
    req[kSocket] = socket
    this.tunnels.set(q.id, socket)
    req.push(null)
    this.server.emit(event, req, socket, q.head || NO_HEAD)
  }

  /** A CONNECT: 'connect' when the server listens for it; else, as node, the connection goes. */
  connect (req, q) {
    if (this.server.listenerCount('connect') > 0) return this.upgrade(req, q, 'connect')
    if (this.attachment !== null) this.attachment.cancel(q.id)
  }

  /**
   * An upgraded socket closed: the server's close() stops waiting for it. `reset`: not
   * a clean end of both sides (the app reset it, or ended it before answering), so the
   * client connection is reset.
   */
  tunnelGone (id, reset) {
    if (!this.tunnels.delete(id)) return
    if (reset && this.attachment !== null) this.attachment.cancel(id)
    this.maybeClosed()
  }

  onBody (id, chunk) {
    const req = this.inflight.get(id)
    if (req === undefined) {
      const t = this.tunnels.get(id)
      if (t !== undefined) tunnelData(t, chunk)
      return
    }
    if (req.destroyed) return
    const s = req[kSocket]
    if (s !== null) touch(s, chunk.length, 0)
    req.push(chunk)
  }

  onBodyEnd (id, trailers) {
    const req = this.inflight.get(id)
    if (req === undefined) {
      const t = this.tunnels.get(id)
      if (t !== undefined) tunnelEnd(t)
      return
    }
    if (req.destroyed) return
    if (trailers !== null && trailers !== undefined) req.rawTrailers = trailers
    req.complete = true
    req.push(null)
    const st = req[kResponse][kState]
    if (st.holding && st.finishState === 2) this.endHeld(req)
  }

  onAbort (id) {
    const req = this.inflight.get(id)
    if (req !== undefined) return this.abort(req)
    const t = this.tunnels.get(id)
    if (t !== undefined) tunnelAbort(t)
  }

  onDrain (id) {
    const req = this.inflight.get(id)
    if (req !== undefined) return req[kResponse]._onDrain()
    const t = this.tunnels.get(id)
    if (t !== undefined) tunnelDrain(t)
  }

  // The attachment ended: after our close() (the graceful end), or because the router
  // went away (err).
  onClose (err) {
    // the backend aborts what is in flight first; anything left is gone all the same
    for (const req of [...this.inflight.values()]) this.abort(req)
    for (const t of [...this.tunnels.values()]) tunnelAbort(t)
    this.tunnels.clear()
    // no word of these connections comes any more: for this server they are closed
    for (const sock of [...this.sockets.values()]) closeFromRouter(sock)
    this.sockets.clear()
    this.connections.clear()
    this.own = null
    this.detachWhenIdle = false
    this.stopChecker()
    if (this.adopted) {
      this.closed = true
      this.ended = true
      return
    }
    const closing = this.closing
    this.closing = true
    this.detached = true
    this.closed = true
    if (this.ended) return
    this.ended = true
    this.release()
    const server = this.server
    if (server[kHandle] === this) server[kHandle] = null
    server[kClosing].delete(this)
    forgetServer(server)
    if (!closing && err) server.emit('error', err)
    server.emit('close')
  }

  /** The ports the reservation bound go back now (node's close() frees its port at once). */
  release () {
    if (this.released) return
    this.released = true
    const r = this.reservation
    if (r !== null && typeof r.release === 'function') r.release()
  }

  // ---- http -> backend -----------------------------------------------------------

  readBody (req) {
    const a = this.attachment
    const id = req[kQueueRequest].id
    if (a !== null && this.inflight.get(id) === req) a.readBody(id)
  }

  respond (req, status, message, rawHeaders, body, flags) {
    const a = this.attachment
    if (a === null) return true
    const s = req[kSocket]
    if (s !== null) touch(s, 0, headBytes(status, message, rawHeaders) + (body !== null ? body.length : 0))
    const q = req[kQueueRequest]
    const ttl = status === 200 && q.method === 'GET' && this.cacheRules !== null ? cacheTtl(req, q, rawHeaders, this.cacheRules) : 0
    return a.respond(q.id, status, message, rawHeaders, body, flags, ttl)
  }

  sendBody (req, body, flags) {
    const a = this.attachment
    if (a === null) return true
    const s = req[kSocket]
    if (s !== null && body !== null) touch(s, 0, body.length)
    return a.sendBody(req[kQueueRequest].id, body, flags)
  }

  writeContinue (req) {
    const a = this.attachment
    const id = req[kQueueRequest].id
    if (a !== null && this.inflight.get(id) === req) a.writeContinue(id)
  }

  /** An interim response (writeProcessing, writeEarlyHints), where the router can send one. */
  writeInformational (req, status, reason, rawHeaders) {
    const a = this.attachment
    const id = req[kQueueRequest].id
    if (a !== null && this.inflight.get(id) === req) a.writeInformational(id, status, reason, rawHeaders)
  }

  /** The app resets the request (req/res/socket destroy): cancel it on the router. */
  cancel (req) {
    const id = req[kQueueRequest].id
    if (this.inflight.get(id) !== req) return
    if (this.attachment !== null) this.attachment.cancel(id)
    this.abort(req)
  }

  /**
   * The request is gone: node's order is req 'aborted', res 'close' (no 'finish'),
   * socket 'close', then req 'error' (if listened) and req 'close'.
   */
  abort (req) {
    const id = req[kQueueRequest].id
    if (this.inflight.get(id) !== req) return
    this.inflight.delete(id)
    if (!req.destroyed) req.destroy(new codes.ECONNRESET())
    req[kResponse]._onAbort()
    const s = req[kSocket]
    if (s !== null) {
      release(this, s, req)
      closeFromRouter(s)
    } else {
      // asked for later, req.socket and res.socket are a closed one, as node's after an
      // abort (express's sendFile() in an on-finished callback then gets ECONNABORTED)
      closeFromRouter(req[kSocket] = new RequestSocket(req[kQueueRequest], this))
    }
    this.maybeClosed()
  }

  /** The response went out completely (from ServerResponse, before its 'finish'). */
  finished (req) {
    if (responseFinish.hasSubscribers) responseFinish.publish({ request: req, response: req[kResponse], socket: req.socket, server: this.server })
    if (req[kPerfProbe] !== null) perfEntries.finish(req[kPerfProbe], req[kResponse])
    const st = req[kResponse][kState]
    if (st.holding) {
      // a response sent before its request's body was in (response-flow.js flush): if
      // the app reads the body, the request stays in flight until the body is in
      // (onBodyEnd), then the router hears that the response is complete (node's
      // resOnFinish decides the same way, at 'finish')
      if (req.complete || !(req._consuming || req._readableState.resumeScheduled || req.readableFlowing === true)) this.endHeld(req)
      return
    }
    this.letGo(req)
  }

  /** A response held for its request's body: the body is in, the response ends. */
  endHeld (req) {
    const st = req[kResponse][kState]
    if (!st.holding) return
    st.holding = false
    if (this.inflight.get(req[kQueueRequest].id) !== req) return // aborted meanwhile
    this.sendBody(req, null, st.heldFlags)
    this.letGo(req)
  }

  /** The request is done with: it leaves the in-flight set and its socket. */
  letGo (req) {
    const id = req[kQueueRequest].id
    if (this.inflight.get(id) === req) this.inflight.delete(id)
    // (the connection's socket object, where one stands for it, even if this request
    // never asked for it: its timeout moves on to the keep-alive wait)
    let s = req[kSocket]
    if (s === null && this.keepsSockets) s = this.sockets.get(req[kQueueRequest].connectionId) || null
    if (s !== null) {
      if (!req[kResponse].shouldKeepAlive) ended(s)
      release(this, s, req)
    }
    if (!req._consuming && !req._readableState.resumeScheduled) {
      // node discards a body nobody read (req._dump) so that 'end' and 'close' come.
      // The backend delivers nothing more once the response is complete, so what
      // was not received yet is discarded with it.
      if (!req.complete) {
        req.complete = true
        req.push(null)
      }
      req._dump()
    } else if (!req.complete && !req.destroyed) {
      // still reading a body the backend no longer delivers: end it as cut off
      req.destroy(new codes.ECONNRESET())
    }
    this.maybeClosed()
  }

  /** req.socket: the connection's object while a request on it is in flight. */
  socketFor (req) {
    const q = req[kQueueRequest]
    if (this.inflight.get(q.id) !== req) return new RequestSocket(q, this)
    let s = this.sockets.get(q.connectionId)
    if (s === undefined || s.destroyed) {
      s = new RequestSocket(q, this)
      s.on('timeout', onSocketTimeout)
      s.on('error', onSocketError)
      this.sockets.set(q.connectionId, s)
      // node emits 'connection' when it accepts; here a connection becomes known with
      // its first request to this server
      if (this.server.listenerCount('connection') > 0) this.server.emit('connection', s)
    }
    s[kRequests].push(req)
    return s
  }

  /**
   * A client connection was accepted (the router of this server's own port says so as it
   * happens, CONN_OPEN): node's 'connection', with the socket object its requests will share.
   * @param {object} conn the router's connection (id, addresses, family, tls)
   */
  accepted (conn) {
    if (this.own === null) this.own = new Map()
    this.own.set(conn.id, conn)
    // node counts a connection from its accept, one that sends nothing too
    // (getConnections()); a router that tells of it reports its close too
    // (onConnectionClose), and may tell of it before attach() has answered
    this.connections.add(conn.id)
    if (this.closing || this.sockets.has(conn.id)) return
    // node's server timeout runs from the accept: a connection that sends nothing times out too
    if (this.server.timeout > 0) this.connectionSocket(conn).setTimeout(this.server.timeout)
    // (an adopted stream was the app's 'connection' already)
    if (this.server.listenerCount('connection') > 0 && !this.adopted) this.server.emit('connection', this.connectionSocket(conn))
  }

  /**
   * The router's keep-alive wait on a connection of this server's own (its
   * keepAliveTimeout) ran out: as node's socket timeout, the connection's socket says
   * 'timeout' (onSocketTimeout: the server's 'timeout' listeners, else it is destroyed).
   * @returns {boolean} false: no socket object stands for it (the router closes it)
   */
  idleTimeout (connectionId) {
    let s = this.sockets.get(connectionId)
    // node's server has every connection's socket: its 'timeout' listeners get one
    // even where nothing asked for it before
    const conn = this.ownConn(connectionId)
    if (s === undefined && conn !== undefined && this.server.listenerCount('timeout') > 0) s = this.connectionSocket(conn)
    if (s === undefined || s.destroyed) return false
    s.emit('timeout')
    return true
  }

  /** A standalone server's own client connection (its router's, remote-connection.js), or undefined. */
  ownConn (connectionId) {
    return this.own !== null ? this.own.get(connectionId) : undefined
  }

  /** Whether the router is waiting for the next request of a connection of this server's own. */
  routerWaits (connectionId) {
    const conn = this.ownConn(connectionId)
    return conn !== undefined && conn.waitingForRequest === true
  }

  /**
   * Whether every request of a connection is in whole and its response ended by the app
   * (node's closeIdleConnections(): a request still being read, or whose 'request'
   * listener is still running, keeps its connection).
   */
  answeredAll (connectionId) {
    if (this.dispatching !== null && this.dispatching[kQueueRequest].connectionId === connectionId) return false
    for (const req of this.inflight.values()) {
      if (req[kQueueRequest].connectionId === connectionId && (!req.complete || !req[kResponse].writableEnded)) return false
    }
    return true
  }

  /** The socket object of a connection the router told this server of (accepted()). */
  connectionSocket (conn) {
    let s = this.sockets.get(conn.id)
    if (s !== undefined) return s
    s = new RequestSocket({
      connectionId: conn.id,
      remoteAddress: conn.remoteAddress,
      remotePort: conn.remotePort,
      remoteFamily: conn.family === 6 ? 'IPv6' : 'IPv4',
      localAddress: conn.localAddress,
      localPort: conn.localPort,
      encrypted: conn.secure === true,
      tls: null
    }, this)
    s.on('timeout', onSocketTimeout)
    s.on('error', onSocketError)
    this.sockets.set(conn.id, s)
    this.connections.add(conn.id)
    return s
  }

  /**
   * node's 'clientError': the router of this server's own port (a standalone process's own router)
   * could not parse a request on `conn`, or its head did not come in time. With
   * listeners, they get node's error and the connection's socket, whose writes go to
   * the client as they are (kDirect); without, the router answers as node does.
   * @returns {boolean} whether a listener took it
   */
  clientError (conn, err) {
    if (this.closing || this.server.listenerCount('clientError') === 0) return false
    const s = this.connectionSocket(conn)
    s[kDirect] = conn.direct
    this.server.emit('clientError', err, s)
    return true
  }

  /**
   * What the router of this server's own port could not parse on a connection (or a
   * head that did not come in time): 'clientError' as node makes it (clientError), else
   * node's own answer, and the connection ends.
   * @param {{status: number, reason: string, raw: Buffer}} e CONN_ERROR's content
   * @returns {boolean} false: no such connection here (the router closes it)
   */
  connectionError (connectionId, e) {
    const conn = this.ownConn(connectionId)
    if (conn === undefined) return false
    if (conn.ended) return true
    const err = clientErrorOf(e)
    if (this.clientError(conn, err)) return true
    // a body's error: node's socketOnError writes its 400 only while the response in
    // flight has not sent its head (its handler may have answered already), then
    // destroys the socket, and the request with it
    const res = this.responseOn(connectionId)
    if (res === null || !res[kState].sent) conn.direct.write(nodeClientError(err.code))
    if (res !== null) {
      conn.destroy()
      return true
    }
    // node's socketOnError ends with socket.destroy(err), the answer written just
    // before: the connection closes at once (not ended, to wait for the client's close:
    // the router reads nothing more from it), and its socket object, where the app has
    // one (its 'connection' listener), says 'error' with the error, then 'close'
    // (test-http-server-destroy-socket-on-client-error.js)
    const s = this.sockets.get(connectionId)
    if (s !== undefined && !s.destroyed) {
      s[kDirect] = conn.direct
      s.destroy(err)
    } else conn.destroy()
    return true
  }

  /** The response in flight on a connection (node's socket._httpMessage), or null. */
  responseOn (connectionId) {
    let res = null
    for (const req of this.inflight.values()) {
      if (req[kQueueRequest].connectionId === connectionId) res = req[kResponse]
    }
    return res
  }

  /**
   * The router's keep-alive wait on a connection of this server's own ran out: its
   * socket says 'timeout' (idleTimeout), and without a socket object it is destroyed.
   * @returns {boolean} false: no such connection here
   */
  connectionTimeout (connectionId) {
    const conn = this.ownConn(connectionId)
    if (conn === undefined) return false
    if (!this.idleTimeout(connectionId)) conn.destroy()
    return true
  }

  /**
   * Whether a connection's socket object outlives its requests: where the router reports
   * the connection's close (the hub), one object stands for the connection for as long as
   * it is open, as node's socket does; elsewhere, while a request of it is in flight.
   */
  get keepsSockets () {
    return this.attachment !== null && this.attachment.tellsConnectionClose === true
  }

  /**
   * The client sent its FIN (the router of a port this server owns says so at once):
   * as node's server reads one, the requests of that connection whose response the app
   * has not ended are aborted ('aborted', 'close'); ended ones still go out.
   */
  onConnectionFin (connectionId) {
    let gone = null
    for (const req of this.inflight.values()) {
      if (req[kQueueRequest].connectionId === connectionId && !req[kResponse].writableEnded) {
        if (gone === null) gone = []
        gone.push(req)
      }
    }
    if (gone !== null) for (const req of gone) this.abort(req)
  }

  /** The router says a client connection closed: its socket object says 'close'. */
  onConnectionClose (connectionId) {
    this.connections.delete(connectionId)
    this.requestCounts.delete(connectionId)
    if (this.own !== null) {
      this.own.delete(connectionId)
      if (this.detachWhenIdle && this.own.size === 0) this.detach()
    }
    const s = this.sockets.get(connectionId)
    if (s === undefined) return
    this.sockets.delete(connectionId)
    closeFromRouter(s)
  }

  // ---- lifecycle -----------------------------------------------------------------

  startChecker () {
    const server = this.server
    const every = Number(server.connectionsCheckingInterval)
    if (!(every > 0)) return
    this.checker = setInterval(checkRequests, every, this)
    this.checker.unref()
  }

  stopChecker () {
    if (this.checker !== null) {
      clearInterval(this.checker)
      this.checker = null
    }
  }

  /** server.close(): no new requests, let the ones in flight finish, then close. */
  beginClose () {
    if (this.closing) return
    this.closing = true
    forgetServer(this.server)
    stillClosing.add(this.server)
    this.release()
    if (this.attachment === null) return // attach() still pending: onAttached closes
    // an unref()ed server still finishes its close (node's closing handle keeps the
    // loop alive until its callback): the router's confirmation must be able to arrive
    if (typeof this.attachment.ref === 'function') this.attachment.ref()
    // a standalone server's open connections are still its own after close(), as
    // node's are: their requests (pipelined, or on their way) are served until the
    // router ends them once idle (or the app calls closeAllConnections())
    if (this.own !== null && this.own.size > 0) this.detachWhenIdle = true
    else this.detach()
  }

  /** The router sends no new requests; once those in flight are answered, close. */
  detach () {
    this.detachWhenIdle = false
    const done = () => {
      this.detached = true
      this.maybeClosed()
    }
    let p
    try {
      p = this.attachment.detach()
    } catch {
      p = null
    }
    Promise.resolve(p).then(done, done)
  }

  // Once closing, detached and idle, the attachment is closed; 'close' is emitted when
  // it has ended (onClose), so a process that exits on 'close' does not cut responses
  // the router is still delivering.
  maybeClosed () {
    // upgraded sockets too: node's close() waits for them as for every connection
    if (!this.closing || !this.detached || this.closed || this.inflight.size > 0 || this.tunnels.size > 0) return
    this.closed = true
    this.stopChecker()
    const server = this.server
    if (server[kHandle] === this) server[kHandle] = null
    const a = this.attachment
    if (a === null) return this.onClose(null)
    try {
      a.close()
    } catch {
      this.onClose(null)
    }
  }
}

// listening servers, for the preload's graceful stop
const listening = new Set()
// servers whose close() was called and that have not said 'close' yet (their requests
// in flight, or upgraded connections, keep them open): the stop waits for them too
const stillClosing = new Set()

function rememberServer (server) {
  listening.add(server)
}

function forgetServer (server) {
  listening.delete(server)
  if (server[kClosing].size === 0) stillClosing.delete(server)
}

function listeningServers () {
  return [...listening]
}

/** @returns {object[]} servers that are closing and have not emitted 'close' yet */
function closingServers () {
  return [...stillClosing]
}

function release (handle, socket, req) {
  const list = socket[kRequests]
  const i = list.indexOf(req)
  if (i !== -1) list.splice(i, 1)
  if (list.length === 0) {
    if (handle.keepsSockets && !socket.destroyed) {
      // (a pipelined response still to come: the router is not waiting yet, routerWaits)
      awaitNext(socket, Number(handle.server.keepAliveTimeout) > 0 && handle.ownConn(req[kQueueRequest].connectionId) !== undefined)
      return // until the router says the connection closed
    }
    idle(socket)
    const connectionId = req[kQueueRequest].connectionId
    if (handle.sockets.get(connectionId) === socket) handle.sockets.delete(connectionId)
  }
}

function hasHost (rawHeaders) {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]
    if (name.length === 4 && name.toLowerCase() === 'host') return true
  }
  return false
}

// node's Expect handling (https://nodejs.org/api/http.html#event-checkcontinue)
function dispatchContinue (server, req, res) {
  res._expect_continue = true
  if (server.listenerCount('checkContinue') > 0) {
    server.emit('checkContinue', req, res)
  } else {
    res.writeContinue()
    server.emit('request', req, res)
  }
}

function dispatchExpectation (server, req, res) {
  if (server.listenerCount('checkExpectation') > 0) {
    server.emit('checkExpectation', req, res)
  } else {
    res.writeHead(417)
    res.end()
  }
}

// node's socketOnError: an error on a connection's socket (the app's own emit, or its
// destroy(err)) goes to 'clientError' if anyone listens, else the connection is reset;
// it never crashes the process as an unhandled 'error' would
function onSocketError (err) {
  this.removeListener('error', onSocketError)
  if (this.listenerCount('error') === 0) this.on('error', noop)
  const server = this.server
  if (server === null || !server.emit('clientError', err, this)) this.destroy(err)
}

function noop () {}

// node's socketOnTimeout: the request (while incomplete), the response and the server
// hear of it; when nobody listens the connection is reset.
function onSocketTimeout () {
  let handled = false
  const reqs = this[kRequests]
  // node's: the request being read (the newest) while incomplete, the response being
  // written (the oldest unanswered: pipelined ones behind it wait), then the server
  const reading = reqs.length > 0 ? reqs[reqs.length - 1] : null
  const writing = reqs.length > 0 ? reqs[0][kResponse] : null
  if (reading !== null && !reading.complete && reading.emit('timeout', this)) handled = true
  if (writing && writing.emit('timeout', this)) handled = true
  if (this.server !== null && this.server.emit('timeout', this)) handled = true
  if (!handled) this.destroy()
}

// server.requestTimeout with one coarse timer per server (as node checks it every
// connectionsCheckingInterval): a request whose body has not fully arrived in time
// is answered 408 and its connection closed.
function checkRequests (handle) {
  handle.tick++
  // where the router does not say when a connection closes (HTTP.SYS), connections with
  // nothing in flight for a whole interval are most likely gone: their counts are
  // forgotten, so the map stays small; elsewhere they go with the close (onConnectionClose)
  if (!handle.keepsSockets && handle.requestCounts.size > 0) {
    for (const id of handle.requestCounts.keys()) if (!handle.sockets.has(id)) handle.requestCounts.delete(id)
  }
  const server = handle.server
  const limit = Number(server.requestTimeout)
  if (!(limit > 0)) return
  const every = Number(server.connectionsCheckingInterval)
  let expired = null
  for (const req of handle.inflight.values()) {
    if (!req.complete && (handle.tick - req[kStartTick]) * every >= limit) {
      if (expired === null) expired = []
      expired.push(req)
    }
  }
  if (expired === null) return
  for (const req of expired) {
    const res = req[kResponse]
    if (!res.headersSent && handle.attachment !== null) {
      handle.attachment.respond(req[kQueueRequest].id, 408, 'Request Timeout', ['Connection', 'close'], null, RESPONSE_CLOSE)
      handle.abort(req)
    } else {
      handle.cancel(req)
    }
  }
}

/**
 * Seconds the router may answer this request's URL from its output cache with this response.
 * The rules see the target the client sent (q.url, what the router keys on), not req.url:
 * an app's router rewrites that (express strips a mount point), and /account/static/x.css
 * would match a /static/ rule (docs/output-cache.md, issue 23).
 */
function cacheTtl (req, q, rawHeaders, rules) {
  // the response first: most say nothing that makes them cacheable (no rule, no
  // Cache-Control), and the request's headers are then never read. Without a rule only
  // Cache-Control can: a head src/http built says whether it has one (a raw response's
  // head, written to the socket, is read in full)
  const rule = ruleFor(rules, q.url)
  if (rule === null) {
    const st = req[kResponse][kState]
    if (!st.hijacked && (st.headBits & H_CACHE_CONTROL) === 0) return 0
  }
  const ttl = responseTtl(200, rawHeaders, rule)
  if (ttl === 0) return 0
  // a client certificate: private unless the app says public (as Authorization)
  const tls = q.tls
  if (tls && tls.peerCertificate && tls.peerCertificate.length > 0 && !publicResponse(rawHeaders)) return 0
  return storable(q.method, q.url, q.rawHeaders, q.hasBody, rules) === null ? 0 : ttl
}

module.exports = { ServerHandle, rememberServer, forgetServer, listeningServers, closingServers }
