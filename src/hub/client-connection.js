'use strict'

// One client TCP connection: feeds bytes to the HTTP/1.1 parser, routes each request
// (not each connection) to its queue, and writes responses back in request order
// (pipelining) even when the requests went to different workers: a later response is
// held until every earlier one is complete.
//
// Reading stops (socket paused, parser paused, the unparsed rest kept) when a request
// body outruns its worker's credit, too many requests are in flight on this
// connection, or the response bytes it may make the hub hold pass HELD_BUDGET, so
// nothing is buffered without bound.

const { RequestParser } = require('./http-parser')
const { HubRequest, BODY_HOLD, CONTINUE_WANTED, CONTINUE_SENT } = require('./hub-request')
const responses = require('./responses')
const { after } = require('./clock')
const { RESPONSE_WINDOW, INITIAL_BODY_WINDOW } = require('../wire/protocol')
const { canonicalizeTarget } = require('../urlprefix')
const { Tunnel } = require('./tunnel')

// Requests parsed ahead of their responses on one connection before reading stops.
const MAX_PIPELINE = 32

// Response bytes one connection may make the hub hold. A response waiting behind an
// earlier one on its connection (pipelining) is held in the hub, and its worker may
// send a whole response window (RESPONSE_WINDOW, wire-protocol.md "Flow control")
// before any credit comes back: so a request waiting in line is charged a window (or
// what it holds, when more) from the moment it is parsed, a finished one what it
// holds, and the bytes node's socket buffers for the first count too. Past the budget
// no further request head is read until the client takes bytes: a client that
// pipelines and never reads costs the hub about this much, not 32 windows, and its
// workers wait in their response window (sendBody() false, onDrain later). node holds
// a few MB for such a client (its res.write() buffers); this keeps us below that.
const HELD_BUDGET = 4 * RESPONSE_WINDOW

const PAUSE_BODY = 1
const PAUSE_PIPELINE = 2
const PAUSE_HELD = 4
// an upgrade request was read: nothing after it is parsed until its answer says
// whether the connection switches protocols (then the bytes are the tunnel's)
const PAUSE_UPGRADE = 8

// What the connection's one deadline means (HTTP_TIMEOUT_LIMIT_INFO has HTTP.SYS's
// timers: https://learn.microsoft.com/windows/win32/api/http/ns-http-http_timeout_limit_info).
// The hub's 1 s clock checks it (hub.sweep); no timer per connection or request.
const IDLE = 0 // between requests: keepAliveTimeout (IdleConnection)
const HEADERS = 1 // a head is awaited or arriving: headersTimeout (HeaderWait)
// Requests in flight. While a request body is arriving and the hub reads it, each
// chunk gives the client another bodyTimeout (EntityBody); otherwise no deadline: a
// slow app, or a body the app does not read yet, is not the client's fault.
const ACTIVE = 2
const ENDING = 3 // our FIN is sent; destroy if the peer lingers
// Every response is out, the rest of a body nobody reads is being discarded:
// drainTimeout in all (DrainEntityBody), however the bytes trickle in.
const DRAIN = 4
// Upgraded (tunnel.js): no deadline; the app's protocol has its own (WebSocket pings).
const TUNNEL = 5

const LINGER_MS = 5000

// The most of what the hub read after an upgrade's head that goes with its REQUEST as
// the app's `head` (node hands over the rest of one read, at most 64 KiB); more comes
// through the tunnel after the 101.
const MAX_UPGRADE_HEAD = INITIAL_BODY_WINDOW

// Stands in for a head when the hub answers input that never became a request.
const NO_HEAD = Object.freeze({
  method: 'GET',
  url: '/',
  versionMajor: 1,
  versionMinor: 1,
  rawHeaders: [],
  host: undefined,
  contentLength: 0,
  chunked: false,
  keepAlive: false,
  expectContinue: false,
  expectOther: false,
  upgrade: false,
  hasBody: false
})

class ClientConnection {
  /**
   * @param {import('./hub').Hub} hub
   * @param {import('node:net').Socket} socket
   * @param {number} id
   * @param {number} port the listener's port
   * @param {Buffer|null} [tls] a TLS connection's session, encoded for REQUEST frames
   *   (protocol.encodeTlsInfo); the socket is then the decrypted side (tls.TLSSocket)
   */
  constructor (hub, socket, id, port, tls = null, settings = null) {
    this.hub = hub
    this.socket = socket
    this.id = id
    this.localPort = port
    // the connection's timeouts and head rules: a standalone server's own (hub.portSettings,
    // from its createServer options), else the hub's
    this.settings = settings || (hub.portSettings !== undefined && hub.portSettings.get(port)) || hub
    this.tls = tls
    this.secure = tls !== null
    // the certificate entry the handshake used (TlsStore.judge), and the last Host
    // checked against it (hub.route: 421 for another entry's host)
    this.tlsSlot = null
    this.tlsHost = null
    this.localAddress = socket.localAddress || ''
    this.remoteAddress = socket.remoteAddress || ''
    this.remotePort = socket.remotePort || 0
    this.family = socket.remoteFamily === 'IPv6' ? 6 : 4
    this.first = null // oldest request whose response is not complete
    this.last = null
    this.pending = 0
    this.unsafeInLine = 0 // requests of unsafe methods among first..last
    this.deferred = 0 // requests parsed but not routed yet (onHead, RFC 9112 9.3.2)
    this.current = null // the request whose body is being parsed
    this.held = 0 // response bytes charged against HELD_BUDGET by requests behind the first
    this.pauseMask = 0
    this.leftover = null
    this.inExecute = false
    this.stopped = false // no more requests are read
    this.closing = false // answer what is in flight with Connection: close, then end
    this.endWhenIdle = false // its port closed: end once what is in flight is answered
    this.keepReading = false // ... reading the requests still on their way meanwhile
    this.readEnded = false
    this.finTimer = null // the FIN grace (FIN_GRACE_MS) while requests are unanswered
    this.dead = false
    this.seen = null // the attachments its requests went to (attachment-connection.js noteAttachment)
    this.fixedQueue = null // a standalone listen(path): every request goes to this queue (hub.onPathSocket)
    this.tunnel = null // after a 101: the relay that owns the socket's bytes (tunnel.js)
    this.upgradeWaiting = null // an upgrade head read during execute(): routed after it (feed)
    this.feeding = null // the bytes execute() is parsing (node's err.rawPacket)
    this.errorTaken = null // the error a 'clientError' listener took (clientErrorAgain)
    this.finSent = false // its workers heard of the client's FIN (CONN_FIN, armFinGrace)
    this.finWait = 0 // ... and have not answered yet
    this.finPending = false // ... once its requests waiting for a worker went to it
    this.phase = HEADERS
    this.deadline = after(this.settings.headersTimeout)

    // a standalone server that listened on this port owns it as node's server does: its
    // requests keep the target and Host as sent (the port alone routes them)
    this.ownsPort = this.settings.ownsPort === true
    // ... and node's parser rules: CONNECT is served, insecureHTTPParser honoured
    this.parser = new RequestParser(
      {
        maxHeaderSize: this.settings.maxHeaderSize,
        maxBodySize: hub.maxBodySize,
        requireHost: this.settings.requireHostHeader !== false,
        strictHost: !this.ownsPort,
        connect: this.ownsPort,
        lenient: this.ownsPort && this.settings.insecureHTTPParser === true
      },
      {
        onHead: (head) => this.onHead(head),
        onBody: (chunk) => { if (this.current !== null) this.current.onBodyChunk(chunk) },
        onComplete: () => this.onComplete(),
        onError: (err) => this.onParseError(err)
      }
    )
    socket.on('data', (chunk) => this.onData(chunk))
    socket.on('end', () => this.onEnd())
    socket.on('drain', () => this.onDrain())
    // an error ends the connection: a TLS socket raises some (ERR_TLS_SESSION_ATTACK) and
    // leaves closing to its owner, as node's http server closes it (socketOnError)
    socket.on('error', () => socket.destroy())
    socket.on('close', () => this.onClose())
  }

  // -------------------------------------------------------------------------
  // reading

  onData (chunk) {
    if (this.tunnel !== null) return this.tunnel.req.onBodyChunk(chunk)
    if (this.stopped) {
      if (this.errorTaken !== null && !this.dead) this.clientErrorAgain(chunk)
      return
    }
    if (this.phase === IDLE) {
      this.phase = HEADERS
      this.deadline = after(this.settings.headersTimeout)
    } else if (this.current !== null && this.phase === ACTIVE && this.pauseMask === 0) {
      this.deadline = after(this.hub.bodyTimeout)
    }
    if (this.current === null) this.checkHeld()
    if (this.leftover !== null || this.parser.paused) {
      this.leftover = this.leftover === null ? chunk : Buffer.concat([this.leftover, chunk])
      this.socket.pause()
      return
    }
    this.feed(chunk)
  }

  feed (buf) {
    for (;;) {
      this.inExecute = true
      this.feeding = buf
      let n
      try {
        n = this.parser.execute(buf)
      } finally {
        this.inExecute = false
        this.feeding = null
      }
      // (an upgrade head read in this execute() is routed once what follows it is known:
      // the app's `head`, upgradeHead; its answer may feed what is kept, so return after)
      if (this.stopped || this.dead) {
        this.leftover = null
        if (this.upgradeWaiting !== null) this.routeUpgrade()
        return
      }
      if (n >= buf.length) {
        if (this.upgradeWaiting !== null) this.routeUpgrade()
        return
      }
      buf = buf.subarray(n)
      if (this.parser.paused) {
        this.leftover = buf
        this.socket.pause()
        if (this.upgradeWaiting !== null) this.routeUpgrade()
        return
      }
      if (this.upgradeWaiting !== null) {
        this.routeUpgrade()
        if (this.stopped || this.dead || this.parser.paused) return
      }
      if (n === 0) return // the parser refuses input without having said why: never spin
    }
  }

  routeUpgrade () {
    const req = this.upgradeWaiting
    this.upgradeWaiting = null
    if (this.dead || req.aborted) return
    if (this.ownsPort) this.hub.route(this, req, routingPath(req.head.url))
    else this.hub.route(this, req)
  }

  /**
   * The bytes read after an upgrade request's head, as it goes to a worker (REQUEST
   * REQ_HEAD): node hands them to 'upgrade' and 'connect' as `head`. They stay here: a
   * 101 (or a CONNECT's 2xx) skips them (startTunnel), any other answer parses them as
   * HTTP, as node does for a server without an 'upgrade' listener.
   * @returns {Buffer|null}
   */
  upgradeHead (req) {
    const rest = this.leftover
    if (req !== this.last || rest === null || rest.length === 0) {
      req.headBytes = 0
      return null
    }
    const head = rest.length > MAX_UPGRADE_HEAD ? rest.subarray(0, MAX_UPGRADE_HEAD) : rest
    req.headBytes = head.length
    return head
  }

  onHead (head) {
    if (this.stopped) return
    // An upgrade takes over the bytes after the head (node's parser hands them to
    // 'upgrade' as they are): a request that also has a body is served as a plain one.
    if (head.upgrade && head.hasBody) head.upgrade = false
    const req = new HubRequest(this, head)
    const behind = this.last !== null
    if (req.unsafe) this.unsafeInLine++
    if (this.last === null) {
      this.first = req
    } else {
      this.last.next = req
      this.charge(req)
    }
    this.last = req
    this.pending++
    this.phase = ACTIVE
    this.deadline = head.hasBody && this.pauseMask === 0 ? after(this.hub.bodyTimeout) : 0
    if (head.hasBody) this.current = req
    if (this.pending >= MAX_PIPELINE) this.pause(PAUSE_PIPELINE)
    // an upgrade (no body) is routed once execute() returns, with the bytes after it
    const later = head.upgrade && this.inExecute
    if (this.ownsPort) {
      if (later) {
        this.upgradeWaiting = req
        return
      }
      // node's server gets the target as sent; the port's one queue takes any path
      this.hub.route(this, req, routingPath(head.url))
      return
    }
    // The app sees the target the router routes on (urlprefix.js canonicalizeTarget):
    // origin-form, dot segments resolved, and the Host an absolute-form target names.
    const host = canonicalizeTarget(head)
    if (host === null) {
      req.respondLocal(400, 'url', false)
      return
    }
    if (host !== '') head.host = host
    // RFC 9112 9.3.2: pipelined requests are processed in parallel only when all of them
    // are safe. A request behind an unsafe one, or an unsafe one behind any, is routed
    // once it is the first of the line (done): an app never handles a GET before the
    // POST sent ahead of it has been answered. (A standalone server's own port keeps
    // node's order above: each 'request' as soon as it is parsed.)
    if (behind && (req.unsafe || this.unsafeInLine > 0 || this.deferred > 0)) {
      req.routeLater = true
      this.deferred++
      return
    }
    if (later) {
      this.upgradeWaiting = req
      return
    }
    this.hub.route(this, req)
  }

  onComplete () {
    const req = this.current
    if (req !== null) {
      this.current = null
      req.onBodyComplete()
      if (this.first === null && (this.phase === ACTIVE || this.phase === DRAIN)) {
        this.phase = IDLE
        this.deadline = after(this.settings.keepAliveTimeout)
      } else if (this.phase === ACTIVE) {
        this.deadline = 0
      }
    }
    // After a request that does not keep the connection, nothing more is read, unless
    // it may switch protocols: what follows is then the tunnel's (node's CONNECT client
    // says Connection: close), or, once it is refused, unread (its answer closes).
    const last = this.last
    const ending = this.closing || (this.endWhenIdle && !this.keepReading)
    if (last !== null && last.head.upgrade && !last.resDone && !ending) this.pause(PAUSE_UPGRADE)
    else if ((last !== null && !last.keepAlive) || ending) this.stopReading()
    else this.checkHeld()
  }

  onParseError (err) {
    const status = err && err.status ? err.status : 400
    // debug, not warn: clients control this, and a log line per bad request is a lever
    this.hub.log.debug({ status, reason: err && err.reason, remoteAddress: this.remoteAddress }, 'bad request')
    const req = this.current
    this.current = null
    this.stopReading()
    // a head the server's own port could not parse, nothing else on the connection:
    // node's 'clientError' (or node's answer), not the router's page
    if (this.ownsPort && req === null && this.first === null) return this.clientError(parseErrorOf(err, this.feeding))
    if (req !== null && !req.resDone && !req.aborted) {
      // The body of a routed request turned out malformed.
      if (req.headSent) return this.destroy()
      req.withdraw()
      req.respondLocal(status, null, true)
      return
    }
    const bad = new HubRequest(this, NO_HEAD)
    if (this.last === null) this.first = bad
    else this.last.next = bad
    this.last = bad
    this.pending++
    bad.respondLocal(status, null, true)
  }

  /** A request's body exceeded its queue's maxBodySize. */
  bodyTooLarge (req) {
    this.current = null
    this.stopReading()
    if (req.headSent) return this.destroy()
    req.withdraw()
    req.respondLocal(413, null, true)
  }

  stopReading () {
    if (this.stopped) return
    this.stopped = true
    this.leftover = null
    this.parser.pause()
  }

  pause (reason) {
    if (this.pauseMask === 0) this.parser.pause()
    this.pauseMask |= reason
    if (this.phase === ACTIVE) this.deadline = 0
  }

  unpause (reason) {
    if ((this.pauseMask & reason) === 0) return
    this.pauseMask &= ~reason
    if (this.pauseMask !== 0 || this.stopped || this.dead) return
    if (this.current !== null && this.phase === ACTIVE) this.deadline = after(this.hub.bodyTimeout)
    this.parser.resume()
    // Inside execute the parser simply carries on; otherwise feed what was kept.
    if (this.inExecute) return
    const rest = this.leftover
    if (rest !== null) {
      this.leftover = null
      this.feed(rest)
    }
    if (this.parser.paused || this.stopped || this.dead) return
    if (this.readEnded) this.endInput()
    else this.socket.resume()
  }

  // -------------------------------------------------------------------------
  // the held-response budget (HELD_BUDGET)

  /** Charges (or re-charges) a request behind the first for what it may make us hold. */
  charge (req) {
    // (a port a standalone server owns: what it holds, as node reads every pipelined head
    // and holds what its app writes for them; the bytes are its own process's)
    const c = req.resDone || req.outBytes > RESPONSE_WINDOW || this.ownsPort ? req.outBytes : RESPONSE_WINDOW
    this.held += c - req.charge
    req.charge = c
  }

  /**
   * Stops reading request heads while the budget is spent, and reads on once it is not.
   * Only at a request boundary: a body being read is never held up by it (its response
   * may depend on it).
   */
  checkHeld () {
    if (this.held + this.socket.writableLength >= HELD_BUDGET) {
      if ((this.pauseMask & PAUSE_HELD) === 0 && this.current === null && !this.stopped) this.pause(PAUSE_HELD)
    } else if ((this.pauseMask & PAUSE_HELD) !== 0) {
      this.unpause(PAUSE_HELD)
    }
  }

  pauseForBody () {
    // a tunnel's bytes are not parsed: holding them back is pausing the socket
    if (this.tunnel !== null) this.socket.pause()
    else this.pause(PAUSE_BODY)
  }

  resumeForBody (req) {
    if (this.tunnel !== null) {
      if (this.socket.isPaused()) this.socket.resume()
    } else if (req === this.current || this.current === null) {
      this.unpause(PAUSE_BODY)
    }
  }

  // The client's FIN: it sends nothing more but may still read (a half-close: RFC 9293
  // 3.6 lets the side that closed go on receiving). Every complete request it sent is
  // answered, in order, the last with Connection: close (mustClose), and then the
  // connection ends, whatever the requests asked for. node answers what its app had
  // answered by the time it reads the FIN; behind a router every answer comes later
  // than that, so the hub answers them all. Bytes kept while reading was paused are
  // parsed first. A request the FIN cut short is a bad request (node: 400 after the
  // answers before it), answered in its turn; one whose head was routed is withdrawn
  // from its worker first (onParseError). A client that is really gone is noticed when
  // a write to it fails (then onClose aborts what is left); a reset at once.
  onEnd () {
    this.readEnded = true
    if (this.tunnel !== null) return this.tunnel.clientEnd()
    if (this.stopped) {
      if (this.first === null) this.endSocket()
      else this.armFinGrace()
      return
    }
    if (this.leftover === null && !this.parser.paused) this.endInput()
  }

  /**
   * The client sent its FIN with requests unanswered. node and HTTP.SYS take a FIN as
   * the client going away and abort them (node answers only what its handler answered
   * synchronously, before it read the FIN). Across a process boundary nothing is
   * synchronous, so the app gets hub.finGrace ms (100; a standalone server's own port
   * its settings.finGrace, 10), renewed while response bytes
   * flow, before what is left is aborted: a fast answer still reaches a client that
   * half-closed after its request (nc -N, HTTP/1.0 tools), and a long poll hears of
   * its client leaving.
   */
  armFinGrace () {
    if (this.dead || this.first === null) return
    if (this.finTimer !== null) {
      this.finTimer.refresh()
      return
    }
    if (this.ownsPort) {
      // node's server.httpAllowHalfOpen: every request the client sent is answered, the
      // last response ends the connection (mustClose), however long the app takes
      if (this.settings.allowHalfOpen === true) return
      // A port a standalone server owns: its worker hears of the FIN at once (CONN_FIN)
      // and aborts what its app has not answered, as node does when it reads one; the
      // grace then only lets the answered responses out.
      // The workers say when they have (CONN_FIN back, finAnswered): no timer then.
      if (this.finWait > 0 || this.finPending) return
      // a request still waits for a worker (its server attaching): CONN_FIN once it
      // went (finDispatched), so the worker reads the request first, as node does
      for (let r = this.first; r !== null; r = r.next) {
        if (r.waiting && !r.resDone) {
          this.finPending = true
          return
        }
      }
      if (!this.finSent) {
        this.finSent = true
        this.finWait = this.hub.connectionFin(this)
        if (this.finWait > 0) return
      }
    }
    const grace = this.settings.finGrace !== undefined ? this.settings.finGrace : this.hub.finGrace
    this.finTimer = setTimeout(() => this.finGraceOver(), grace)
    this.finTimer.unref()
  }

  /** A request of it went to its worker after the client's FIN: CONN_FIN once none waits. */
  finDispatched () {
    this.finPending = false
    if (!this.dead) this.armFinGrace()
  }

  /** A worker aborted what its app had not answered of this connection (CONN_FIN back). */
  finAnswered () {
    if (this.finWait === 0 || this.dead) return
    if (--this.finWait > 0) return
    // the answered responses came before the answer (one stream): the first of the
    // line still waiting was dropped, and what is behind it with it
    const first = this.first
    if (first !== null) {
      this.first = this.last = null
      this.pending = 0
      this.abortFrom(first)
    }
    this.endSocket()
  }

  finGraceOver () {
    this.finTimer = null
    if (this.dead || this.first === null) return
    this.hub.log.debug({ remoteAddress: this.remoteAddress, pending: this.pending }, 'the client closed its side with requests unanswered: aborted')
    this.destroy()
  }

  // No more input will come and everything received has been parsed.
  endInput () {
    const err = this.parser.finish()
    const cur = this.current
    // A body cut short after its request was answered needs no answer of its own.
    if (err !== null && (cur === null || !cur.resDone)) return this.onParseError(err)
    this.current = null
    this.stopReading()
    if (this.first === null) this.endSocket()
    else this.armFinGrace()
  }

  // -------------------------------------------------------------------------
  // writing (in request order)

  /**
   * Response bytes for req: written now when req is first in line, else held.
   * @param {Buffer|Buffer[]} buf a Buffer, or a list of them (a large frame's pieces: one writev)
   * @param {number} ack body bytes in buf to acknowledge to the worker once written
   */
  write (req, buf, ack) {
    if (this.dead) return
    if (this.finTimer !== null) this.finTimer.refresh()
    const list = Array.isArray(buf)
    if (req === this.first) {
      let ok
      if (list) {
        const s = this.socket
        s.cork()
        for (let i = 0; i < buf.length; i++) ok = s.write(buf[i])
        s.uncork()
      } else {
        ok = this.socket.write(buf)
      }
      if (ack > 0 && req.attachment !== null) {
        if (ok) req.attachment.sendWindow(req, ack)
        else req.unacked += ack
      }
      return
    }
    if (req.out === null) req.out = []
    if (list) {
      for (let i = 0; i < buf.length; i++) {
        req.out.push(buf[i])
        req.outBytes += buf[i].length
      }
    } else {
      req.out.push(buf)
      req.outBytes += buf.length
    }
    req.heldAck += ack
    this.charge(req)
  }

  /** write() for a head and a body that is not copied into it: one writev. */
  write2 (req, head, body, ack) {
    if (this.dead) return
    if (this.finTimer !== null) this.finTimer.refresh()
    if (req === this.first) {
      const s = this.socket
      s.cork()
      s.write(head)
      const ok = s.write(body)
      s.uncork()
      if (ack > 0 && req.attachment !== null) {
        if (ok) req.attachment.sendWindow(req, ack)
        else req.unacked += ack
      }
      return
    }
    if (req.out === null) req.out = []
    req.out.push(head, body)
    req.heldAck += ack
    req.outBytes += head.length + body.length
    this.charge(req)
  }

  writeContinue (req) {
    if (req === this.first) {
      req.continueState = CONTINUE_SENT
      this.socket.write(responses.CONTINUE)
    } else {
      req.continueState = CONTINUE_WANTED
    }
  }

  onDrain () {
    const req = this.first
    if (req !== null && req.unacked > 0 && req.attachment !== null) {
      const n = req.unacked
      req.unacked = 0
      req.attachment.sendWindow(req, n)
    }
    if ((this.pauseMask & PAUSE_HELD) !== 0) this.checkHeld()
  }

  /** req's response is complete: move the line on. */
  done (req) {
    if (this.dead) return
    if (req !== this.first) {
      // finished behind the first: charged what it holds now, not a window
      if (req.charge !== 0) {
        this.charge(req)
        this.checkHeld()
      }
      return
    }
    let r = req
    while (r !== null && r.resDone) {
      this.pending--
      if (r.unsafe) this.unsafeInLine--
      if (r.close) {
        this.first = this.last = null
        this.abortFrom(r.next)
        this.stopReading()
        this.endSocket()
        return
      }
      r = r.next
      this.first = r
      if (r === null) this.last = null
      else this.flushHeld(r)
    }
    // the request now first of the line may go to its app (onHead)
    const next = this.first
    if (next !== null && next.routeLater) {
      next.routeLater = false
      this.deferred--
      this.hub.route(this, next)
    }
    if (this.pending < MAX_PIPELINE) this.unpause(PAUSE_PIPELINE)
    // the upgrade request was answered without switching: HTTP goes on
    if (this.first === null) this.unpause(PAUSE_UPGRADE)
    this.checkHeld()
    if (this.first === null) {
      if (this.readEnded || this.closing || (this.endWhenIdle && this.idle)) {
        this.endSocket()
      } else if (this.current === null && (this.leftover !== null || this.parser.inHead())) {
        // a pipelined head has begun: it gets the head timeout, not the idle one
        this.phase = HEADERS
        this.deadline = after(this.settings.headersTimeout)
      } else if (this.current === null) {
        this.phase = IDLE
        this.deadline = after(this.settings.keepAliveTimeout)
      } else if (this.current.discard) {
        this.phase = DRAIN
        this.deadline = after(this.hub.drainTimeout)
      }
    }
  }

  /**
   * The worker answered an upgrade request 101: from now on the connection carries its
   * protocol (tunnel.js). Nothing after the upgrade request was parsed (PAUSE_UPGRADE):
   * the bytes kept meanwhile are the tunnel's first.
   * @param {Buffer} head the 101 head as it goes out, with any bytes the frame carried
   * @param {number} ack those bytes, acknowledged to the worker once written
   */
  startTunnel (req, head, ack) {
    const t = new Tunnel(this, req)
    req.tunnel = t
    // the client's bytes are the request's body from now on (tunnel.js)
    req.bodyDone = false
    req.credit = INITIAL_BODY_WINDOW
    this.tunnel = t
    this.phase = TUNNEL
    this.deadline = 0
    if (this.finTimer !== null) {
      clearTimeout(this.finTimer)
      this.finTimer = null
    }
    // what the worker had as the upgrade's `head` (upgradeHead) is not sent again
    let rest = this.leftover
    if (rest !== null && req.headBytes > 0) rest = rest.length > req.headBytes ? rest.subarray(req.headBytes) : null
    this.leftover = null
    this.stopped = true
    this.pauseMask = 0
    this.write(req, head, ack)
    if (rest !== null) req.onBodyChunk(rest)
    if (this.readEnded) t.clientEnd()
    else if (req.bodyBufBytes < BODY_HOLD) this.socket.resume()
  }

  /** r is first now: what it holds goes to the socket, and off the budget. */
  flushHeld (r) {
    this.held -= r.charge
    r.charge = 0
    r.outBytes = 0
    if (r.continueState === CONTINUE_WANTED && !r.headSent) {
      r.continueState = CONTINUE_SENT
      this.socket.write(responses.CONTINUE)
    }
    const out = r.out
    if (out === null) return
    r.out = null
    let ok = true
    const s = this.socket
    if (out.length > 1) s.cork()
    for (let i = 0; i < out.length; i++) ok = s.write(out[i])
    if (out.length > 1) s.uncork()
    const n = r.heldAck
    r.heldAck = 0
    if (n > 0 && r.attachment !== null) {
      if (ok) r.attachment.sendWindow(r, n)
      else r.unacked += n
    }
  }

  abortFrom (r) {
    while (r !== null) {
      r.abort()
      r = r.next
    }
  }

  endSocket () {
    if (this.dead || this.phase === ENDING) return
    this.phase = ENDING
    this.deadline = after(LINGER_MS)
    // Normally the peer closes after our FIN; a closing hub does not wait for it.
    this.socket.end(() => { if (this.hub.closing) this.destroy() })
  }

  /** hub.close(): no new requests; in-flight ones are answered with Connection: close. */
  shutdown () {
    this.closing = true
    this.stopReading()
    if (this.phase === ENDING ? this.socket.writableFinished : this.first === null) this.destroy()
  }

  /**
   * Its port stopped listening (the app closed its server): an idle connection ends
   * now, a busy one once its responses are out (with Connection: close). Requests
   * after those are not read.
   */
  closeWhenIdle (keepReading = false) {
    if (this.dead || this.closing || this.endWhenIdle) return
    // the responses in flight go out as the app made them (node's close() does not
    // touch a busy connection's response either); the connection ends after them.
    // keepReading (a standalone server's own connection): requests already on their
    // way are still read and served first, as node serves them after close().
    this.endWhenIdle = true
    this.keepReading = keepReading
    if (this.current === null && !keepReading) this.stopReading() // else once its body is in (onComplete)
    if (this.phase === ENDING) return
    if (this.idle) this.endSocket()
  }

  /**
   * closeIdleConnections(): ended if idle, or between requests when `answered` (the
   * server's requests of it are all in whole and ended by the app).
   */
  closeIfIdle (answered) {
    if (this.idle || (this.betweenRequests && answered)) this.closeWhenIdle()
  }

  /** No request in flight and none begun: what closeIdleConnections() ends. */
  get idle () {
    return this.first === null && this.current === null && this.leftover === null && !this.parser.inHead()
  }

  /** No response in flight, and every byte written to the client's socket has left it. */
  get nothingToWrite () {
    return this.first === null && this.tunnel === null && this.socket.writableLength === 0
  }

  /** Between keep-alive requests: everything answered, the keepAliveTimeout running. */
  get waitingForRequest () {
    return this.phase === IDLE && !this.dead
  }

  /**
   * No request is being read (its head or body still coming) and none waits unread:
   * node's parser calls such a connection idle even while responses are still going
   * out; its closeIdleConnections() ends it once the app has ended each of them.
   */
  get betweenRequests () {
    return this.current === null && this.leftover === null && this.tunnel === null && !this.parser.inHead()
  }

  /** The coarse clock says this connection's deadline passed. */
  timeout () {
    // node answers a request head that did not arrive in time 408 (its headersTimeout);
    // a standalone server's connections do the same, a router's close silently
    if (this.phase === HEADERS && this.first === null && this.settings.answersTimeouts === true && !this.dead) {
      this.stopReading()
      if (this.ownsPort) return this.clientError(requestTimeoutError())
      this.socket.end(responses.REQUEST_TIMEOUT)
      this.phase = ENDING
      this.deadline = after(LINGER_MS)
      return
    }
    // a standalone server's keepAliveTimeout is its socket's timeout (node): the socket
    // object the app holds for this connection says 'timeout', and the server's
    // 'timeout' listeners (else the socket's destroy()) decide what becomes of it
    if (this.phase === IDLE && !this.dead && typeof this.settings.onIdleTimeout === 'function') {
      this.deadline = 0
      let taken = false
      try {
        taken = this.settings.onIdleTimeout(this) === true
      } catch (err) {
        process.nextTick(() => { throw err }) // the app's listener threw: as from node's socket
        taken = true
      }
      if (taken) return
    }
    this.destroy()
  }

  destroy () {
    if (this.dead) return
    this.socket.destroy()
    this.onClose()
  }

  /**
   * node's socketOnError, on a port a standalone server owns: the server's 'clientError'
   * listeners get `err` and the connection's socket (what they write goes to the client
   * as they write it: ends() and destroy() are theirs), else node's own answer (400, 431,
   * 408 or 413 with Connection: close) and the connection ends.
   */
  clientError (err) {
    const handler = this.settings.onClientError
    if (typeof handler === 'function' && handler(this, err) === true) {
      this.phase = TUNNEL // the app's to end: no deadline of ours
      this.deadline = 0
      this.errorTaken = err
      return
    }
    this.phase = ENDING
    this.deadline = after(LINGER_MS)
    // (node answers unless a response in flight has begun: none is, here)
    this.socket.end(responses.nodeClientError(err.code))
  }

  /**
   * More bytes on a connection whose 'clientError' a listener took and left open: node's
   * parser stays failed, so each read is that error again, with its own bytes.
   */
  clientErrorAgain (chunk) {
    const first = this.errorTaken
    const err = new Error(first.message)
    err.code = first.code
    err.reason = first.reason
    err.bytesParsed = 0
    err.rawPacket = Buffer.from(chunk)
    this.errorTaken = null
    this.clientError(err)
  }

  /** Raw access for a 'clientError' listener (src/http's socket for this connection). */
  get direct () {
    return {
      write: (buf, cb) => this.dead ? false : this.socket.write(buf, cb),
      end: () => this.endSocket(),
      destroy: () => this.destroy()
    }
  }

  onClose () {
    if (this.dead) return
    this.dead = true
    if (this.finTimer !== null) {
      clearTimeout(this.finTimer)
      this.finTimer = null
    }
    this.stopped = true
    this.leftover = null
    const first = this.first
    this.first = this.last = null
    this.abortFrom(first)
    const cur = this.current
    if (cur !== null) {
      this.current = null
      cur.abort()
    }
    this.hub.connectionClosed(this)
  }
}

/**
 * The path a target is routed on where the server owns the port: its canonical form
 * (routing by prefix needs one), else the root, which the port's one queue covers.
 */
function routingPath (url) {
  const probe = { url, rawHeaders: [] }
  return canonicalizeTarget(probe) === null ? '/' : probe.url
}

// The error node's parser gives 'clientError' for what the hub's parser refused (llhttp's
// codes; the closest one where the two parsers name things differently).
const HPE = [
  [/method/, 'HPE_INVALID_METHOD'],
  [/version/i, 'HPE_INVALID_VERSION'],
  [/request-target/, 'HPE_INVALID_URL'],
  [/several different Content-Length/, 'HPE_UNEXPECTED_CONTENT_LENGTH'],
  [/Content-Length/, 'HPE_INVALID_CONTENT_LENGTH'],
  [/Transfer-Encoding/, 'HPE_INVALID_TRANSFER_ENCODING'],
  [/chunk extensions too large/, 'HPE_CHUNK_EXTENSIONS_OVERFLOW'],
  [/chunk/, 'HPE_INVALID_CHUNK_SIZE'],
  [/bare CR/, 'HPE_LF_EXPECTED'],
  [/header name|header value|Host|malformed line|colon|line folding/, 'HPE_INVALID_HEADER_TOKEN']
]

function parseErrorOf (err, packet = null) {
  const reason = (err && err.reason) || 'malformed request'
  let code = 'HPE_INVALID_CONSTANT'
  if (err && err.status === 431) code = 'HPE_HEADER_OVERFLOW'
  else for (const [re, c] of HPE) if (re.test(reason)) { code = c; break }
  const e = new Error(`Parse Error: ${reason}`)
  e.code = code
  e.reason = reason
  e.bytesParsed = 0
  // (node's: the bytes it was parsing when it failed; the chunk being parsed here)
  e.rawPacket = packet !== null ? Buffer.from(packet) : undefined
  return e
}

function requestTimeoutError () {
  const e = new Error('Request timeout')
  e.code = 'ERR_HTTP_REQUEST_TIMEOUT'
  return e
}

module.exports = { ClientConnection, MAX_PIPELINE, HELD_BUDGET }
