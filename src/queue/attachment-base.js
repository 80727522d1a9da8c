'use strict'

// What every queue backend's Attachment has in common (src/wire/contract.js), so the hub
// client and the HTTP.SYS attachment cannot drift apart: the requests in flight and
// their state, the response window and onDrain, detach waiters, abort-all and one
// onClose at the end, ref/unref, and handler isolation (a throwing handler costs the
// rest of a batch nothing). A backend subclasses it and supplies only its transport,
// through the k* methods below; it reports what its router says through the protected
// methods (received, body, bodyEnd, acknowledged, aborted, detachConfirmed,
// ended). close() and detach() are safe to call any number of times; errors
// reach the app one way, as onClose(err).

const { STATUS_CODES } = require('node:http')
const { HANDLERS, RESPONSE_MORE, RESPONSE_OPAQUE } = require('../wire/contract')
const { processStats } = require('./request-stats')

// What a transport implements. The base has already checked that the id is in flight
// (and, for responses, in the right phase) and passes its RequestState.
/** (id, st): ask the router for more request body */
const kReadBody = Symbol('httpsys.attachment.readBody')
/** (id, st, status, reason, rawHeaders, body, flags, cacheTtl) -> bytes now in flight */
const kRespond = Symbol('httpsys.attachment.respond')
/** (id, st, chunk, flags) -> bytes now in flight */
const kSendBody = Symbol('httpsys.attachment.sendBody')
/** (id, st): send 100 Continue */
const kContinue = Symbol('httpsys.attachment.continue')
/** (id, st): reset the request; st is no longer in flight */
const kCancel = Symbol('httpsys.attachment.cancel')
/** (): stop receiving; the transport calls detachConfirmed() once the router confirmed */
const kDetach = Symbol('httpsys.attachment.detach')
/** (): end the attachment; the transport calls ended() once it has ended */
const kClose = Symbol('httpsys.attachment.close')
/** (refed: boolean): keep the process alive or not */
const kRef = Symbol('httpsys.attachment.ref')
/** (connectionId): optional: end a client connection (the router then reports its close) */
const kEndConnection = Symbol('httpsys.attachment.endConnection')
/** (id, st, status, reason, rawHeaders): optional: send an interim (1xx) response */
const kInfo = Symbol('httpsys.attachment.info')
/** (): optional: write what is pending before a handler's error is rethrown */
const kFlush = Symbol('httpsys.attachment.flush')

/** A request in flight. Transports extend it with their own fields. */
class RequestState {
  constructor (req) {
    this.bodyDone = !req.hasBody
    this.expect = req.expect || null
    this.received = 0 // request body bytes delivered
    this.responded = false
    this.outstanding = 0 // response bytes the router has not taken yet
    this.blocked = false // respond()/sendBody() returned false; onDrain is owed
    this.status = 0
    this.startedAt = 0 // request-stats.js clock, set when received
    this.counted = false // request-stats.js has it (an upgrade, counted at its 101)
    this.opaque = false // answered 101 with RESPONSE_OPAQUE: a byte stream both ways
    this.writeEnded = false // opaque: the worker's side has ended (its last sendBody)
  }
}

class AttachmentBase {
  /**
   * @param {object} handlers as given to attach() (contract.js)
   * @param {object} options
   * @param {number} options.window response bytes in flight per request before
   *   respond()/sendBody() return false
   */
  constructor (handlers, { window }) {
    this.info = null
    this.handlers = withDefaultHandlers(handlers)
    this.live = new Map() // id -> RequestState
    this.window = window
    this.userClosed = false
    this.closed = false
    this.detached = false
    this.detachWaiters = null
    this.refed = true
    this.thrown = null // errors handlers threw during the batch being delivered
    this.stats = processStats()
    this.stats.start()
  }

  // ---- the contract (src/http calls these) ----------------------------------------

  readBody (id) {
    const st = this.live.get(id)
    if (st !== undefined && !st.bodyDone) this[kReadBody](id, st)
  }

  /** @returns {boolean} false when the response window is full (wait for onDrain) */
  respond (id, statusCode, statusMessage, rawHeaders, body, flags = 0, cacheTtl = 0) {
    const st = this.live.get(id)
    if (st === undefined || st.responded) return true
    st.responded = true
    st.status = statusCode
    if ((flags & RESPONSE_OPAQUE) !== 0) {
      // the connection now carries opaque bytes: the client's arrive as onBody, its FIN
      // as onBodyEnd (src/wire/contract.js "Upgrades")
      st.opaque = true
      st.bodyDone = false
    }
    const reason = statusMessage === undefined || statusMessage === null || statusMessage === ''
      ? (STATUS_CODES[statusCode] || '')
      : String(statusMessage)
    const n = this[kRespond](id, st, statusCode, reason, rawHeaders || [], body === undefined ? null : body, flags, cacheTtl)
    return this.sent(id, st, n, flags)
  }

  /** @returns {boolean} false when the response window is full */
  sendBody (id, chunk, flags = 0) {
    const st = this.live.get(id)
    if (st === undefined || !st.responded) return true
    const n = this[kSendBody](id, st, chunk === undefined ? null : chunk, flags)
    return this.sent(id, st, n, flags)
  }

  writeContinue (id) {
    const st = this.live.get(id)
    if (st !== undefined) this[kContinue](id, st)
  }

  /** Whether the router reports the close of client connections (onConnectionClose). */
  get tellsConnectionClose () {
    return typeof this[kEndConnection] === 'function'
  }

  /** Ends a client connection after what is in flight on it, where the router can. */
  endConnection (connectionId) {
    if (!this.closed && typeof this[kEndConnection] === 'function') this[kEndConnection](connectionId)
  }

  /**
   * An interim response (102, 103) before the final one; dropped where the transport
   * cannot send one (HTTP.SYS) or once the response started.
   */
  writeInformational (id, status, reason, rawHeaders) {
    const st = this.live.get(id)
    if (st !== undefined && !st.responded && typeof this[kInfo] === 'function') this[kInfo](id, st, status, reason, rawHeaders)
  }

  cancel (id) {
    const st = this.live.get(id)
    if (st === undefined) return
    this.live.delete(id)
    this.lost(st)
    this[kCancel](id, st)
  }

  /** Stops receiving new requests; resolves once the router confirmed (or on close). */
  detach () {
    if (this.closed || this.detached) return Promise.resolve()
    const first = this.detachWaiters === null
    if (first) this.detachWaiters = []
    const done = new Promise((resolve) => this.detachWaiters.push(resolve))
    if (first) this[kDetach]()
    return done
  }

  /** Ends the attachment: unanswered requests are aborted, then onClose(null). */
  close () {
    if (this.closed || this.userClosed) return
    this.userClosed = true
    this[kClose]()
  }

  ref () {
    if (this.closed || this.refed) return
    this.refed = true
    this[kRef](true)
  }

  unref () {
    if (this.closed || !this.refed) return
    this.refed = false
    this[kRef](false)
  }

  // ---- the transport reports (protected) --------------------------------------------

  /** A request arrived: it is in flight from now on. */
  received (req, st) {
    st.startedAt = this.stats.begin()
    this.live.set(req.id, st)
    this.deliver(this.handlers.onRequest, req)
  }

  body (id, chunk) {
    const st = this.live.get(id)
    if (st === undefined || st.bodyDone) return
    st.received += chunk.length
    this.deliver(this.handlers.onBody, id, chunk)
  }

  bodyEnd (id, trailers = null) {
    const st = this.live.get(id)
    if (st === undefined || st.bodyDone) return
    st.bodyDone = true
    // an upgraded stream is over once both sides have ended
    if (st.opaque && st.writeEnded) this.live.delete(id)
    this.deliver(this.handlers.onBodyEnd, id, trailers)
  }

  /** The router took `bytes` of a response in flight: the window may reopen. */
  acknowledged (id, bytes) {
    const st = this.live.get(id)
    if (st === undefined) return
    st.outstanding -= bytes
    if (st.outstanding < 0) st.outstanding = 0
    if (st.blocked && st.outstanding < this.window) {
      st.blocked = false
      this.deliver(this.handlers.onDrain, id)
    }
  }

  /** The client went away or the router ended the request. */
  aborted (id) {
    const st = this.live.get(id)
    if (st === undefined) return
    this.live.delete(id)
    this.lost(st)
    this.deliver(this.handlers.onAbort, id)
  }

  /** A client connection this attachment had requests of has closed. */
  connectionClosed (connectionId) {
    this.deliver(this.handlers.onConnectionClose, connectionId)
  }

  /** A client connection this attachment has requests of sent its FIN (CONN_FIN). */
  connectionFin (connectionId) {
    this.deliver(this.handlers.onConnectionFin, connectionId)
  }

  /** The router sends nothing new: detach() waiters resolve. */
  detachConfirmed () {
    this.detached = true
    const waiters = this.detachWaiters || []
    this.detachWaiters = []
    for (const resolve of waiters) resolve()
  }

  /**
   * The attachment has ended (after close(), or the router went away): every request
   * still in flight is aborted, detach waiters resolve, and onClose is called once.
   * @param {Error|null} err why, when it was not close(); ignored after close()
   */
  ended (err) {
    if (this.closed) return
    this.closed = true
    const states = [...this.live]
    this.live.clear()
    for (const [id, st] of states) {
      this.lost(st)
      this.deliver(this.handlers.onAbort, id)
    }
    this.detachConfirmed()
    this.deliver(this.handlers.onClose, this.userClosed ? null : (err || null))
    this.endBatch()
  }

  /**
   * Calls a handler while delivering a batch: a throw is kept instead of cutting the
   * batch short (the frames or events after it, and the batch's acknowledgement, would
   * be lost). endBatch() hands the errors on.
   */
  deliver (fn, a, b) {
    try {
      fn(a, b)
    } catch (err) {
      if (this.thrown === null) this.thrown = []
      this.thrown.push(err)
    }
  }

  /**
   * After a batch: rethrows what handlers threw, one tick each as node reports each
   * throwing listener, so node's behaviour is unchanged (a crash, or the app's
   * 'uncaughtException' listener). Whatever the transport has pending is written
   * first: a worker that dies of the error has acknowledged the request, so the router
   * answers 502 instead of handing the same poison request to the next worker.
   */
  endBatch () {
    if (this.thrown === null) return
    const errors = this.thrown
    this.thrown = null
    if (typeof this[kFlush] === 'function') this[kFlush]()
    for (const err of errors) process.nextTick(rethrow, err)
  }

  // ---- private -------------------------------------------------------------------

  /** A request left the flight without a complete response (unless already counted). */
  lost (st) {
    if (st.counted) return
    st.counted = true
    this.stats.aborted()
  }

  sent (id, st, n, flags) {
    if ((flags & (RESPONSE_MORE | RESPONSE_OPAQUE)) === 0) {
      if (!st.opaque) {
        this.live.delete(id)
        if (!st.counted) this.stats.done(st.startedAt, st.status)
        return true
      }
      // the worker's side of an upgraded stream ended; the client's may still send
      st.writeEnded = true
      if (st.bodyDone) this.live.delete(id)
    }
    // an upgrade (101) counts once answered: what follows is the connection's life
    if ((flags & RESPONSE_OPAQUE) !== 0 && !st.counted) {
      st.counted = true
      this.stats.done(st.startedAt, st.status)
    }
    st.outstanding += n
    if (st.outstanding >= this.window) {
      st.blocked = true
      return false
    }
    return true
  }
}

function noop () {}

function rethrow (err) {
  throw err
}

/**
 * The handlers a backend calls, with the missing optional ones as no-ops; present ones
 * keep their `this`.
 */
function withDefaultHandlers (h) {
  const out = {}
  for (const name of HANDLERS) out[name] = typeof h[name] === 'function' ? h[name].bind(h) : noop
  return out
}

/** @returns {number} bytes a body takes on the wire (strings are utf8) */
function byteLength (body) {
  if (body === null || body === undefined) return 0
  return typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length
}

module.exports = {
  kInfo,
  kEndConnection,
  AttachmentBase,
  RequestState,
  byteLength,
  kReadBody,
  kRespond,
  kSendBody,
  kContinue,
  kCancel,
  kDetach,
  kClose,
  kRef,
  kFlush
}
