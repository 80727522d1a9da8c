'use strict'

// The queue backend for Linux and macOS: a worker's side of the hub protocol
// (docs/wire-protocol.md). The lifecycle is attachment-base.js's; this file is the
// transport: frames out, frames in.
//
// Frames are batched both ways: everything the app answers during one tick goes out in
// one socket write, together with the ACK for the requests that arrived in the last
// read (sent after they were handed to onRequest, so the hub knows what this worker
// has seen when it dies).

const net = require('node:net')
const P = require('../wire/protocol')
const { codes } = require('../errors')
const { withPortOwner } = require('../port-owner')
const { ENV } = require('../worker-interface')
const { reserveFromEnv } = require('./reserve')
const { hubGate, gatedHandlers } = require('./auth-gate')
const { RemoteConnection } = require('./remote-connection')
const { RESPONSE_MORE, RESPONSE_CLOSE, EXPECT_CONTINUE } = require('../wire/contract')
const {
  AttachmentBase, RequestState, kReadBody, kRespond, kSendBody, kContinue, kInfo, kEndConnection, kCancel, kDetach,
  kClose, kRef, kFlush
} = require('./attachment-base')

const { T } = P

// Bodies above this go out as RESPONSE + RES_BODY pieces, so neither side ever holds a
// frame larger than this in one piece.
const MAX_PIECE = 1024 * 1024
const SEPARATE_BODY = 64 * 1024
const BODY_WINDOW = P.INITIAL_BODY_WINDOW
// What a reading consumer keeps granted beyond what arrived: the router starts a request
// with BODY_WINDOW of credit, and the first readBody() tops it up to this. At 64 KiB a
// 1 MB upload waited for a READ round trip (a wake-up of both processes) every 16-32
// KiB; at 512 KiB it flows (bench/results/router-profile.md, round 3). A consumer that
// stops reading stops granting: at most this much more arrives.
const BODY_TARGET = 512 * 1024
const GRANT_STEP = BODY_TARGET / 4

/** A request in flight, plus its request-body credit with the hub. */
class HubRequestState extends RequestState {
  constructor (req) {
    super(req)
    this.granted = BODY_WINDOW // the hub starts every request with this much credit
    this.readSent = false
    // response body bytes it may send now: the hub grants them (REQ_GRANTED_WINDOW), or
    // there is no limit but the window's (attachment-base.js)
    this.credit = Infinity
    this.waiting = null // [flags, chunk, ...] beyond the credit, until WINDOW
  }
}

class HubAttachment extends AttachmentBase {
  constructor (socket, handlers, socketPath) {
    super(handlers, { window: P.RESPONSE_WINDOW })
    this.socket = socket
    this.socketPath = socketPath
    this.writer = new P.FrameWriter()
    this.reader = new P.FrameReader((type, id, b, start, end) => this.onFrame(type, id, b, start, end),
      (type, id, pieces) => this.onPieces(type, id, pieces))
    this.memo = P.decodeMemo() // the strings of the last REQUEST (decodeRequest)
    this.flushQueued = false
    this.flushBound = () => this.flush()
    this.receivedCount = 0 // REQUEST frames received (the ACK value)
    this.batchCount = 0
    this.inBatch = false // onData is delivering a read
    this.tickFlushQueued = false
    this.endAfterBatch = false // close() came during a read: end once its ACK is written
    this.attached = false
    this.closeNote = null // what the hub said in its CLOSE frame
    this.failure = null
    this.connectError = null
    this.pendingAttach = null // { resolve, reject } until HELLO_OK / HELLO_ERR
    this.waiting = new Map() // id -> HubRequestState with response bytes waiting for credit
    // connections it sent CONN_IDLE answered 1 for (closeIdleConnections(), close()),
    // until the router says it kept one (CONN_KEPT): a REQUEST of one before that was
    // unread at close(), and node never serves such a request (issue 25 "idle race")
    this.idleAsked = new Set()
  }

  // ---- transport: worker -> hub -------------------------------------------------

  [kReadBody] (id, st) {
    let grant = st.received + BODY_TARGET - st.granted
    if (grant < 0) grant = 0
    // The hub answers Expect: 100-continue on the first read, so that one always goes out.
    const first = st.expect === EXPECT_CONTINUE && !st.readSent
    if (!first && (grant < GRANT_STEP && !(grant > 0 && st.received >= st.granted))) return
    st.readSent = true
    st.granted += grant
    this.writer.u32(T.READ, id, grant)
    this.schedule()
  }

  [kRespond] (id, st, statusCode, reason, headers, body, flags, cacheTtl) {
    let size = 0
    if (typeof body === 'string') {
      // a long string goes as bytes (pieces() slices it); a short one is encoded into
      // the frame, even where its utf8 form is larger than SEPARATE_BODY
      if (body.length >= SEPARATE_BODY) body = Buffer.from(body, 'utf8')
      else size = body.length
    }
    if (body !== null && typeof body !== 'string') size = body.length
    else if (size > 0 && st.credit !== Infinity) size = Buffer.byteLength(body)
    let n
    if (size >= SEPARATE_BODY || size > st.credit) {
      // the head alone, then the body in RES_BODY frames: a large RES_BODY reaches the
      // client from the hub's read buffers without a copy (FrameReader's onPieces)
      this.writer.response(id, statusCode, (flags | RESPONSE_MORE) & ~RESPONSE_CLOSE, cacheTtl, reason, headers, null)
      n = this.sendWithin(id, st, body, flags)
    } else {
      n = this.writer.response(id, statusCode, flags, cacheTtl, reason, headers, body)
      st.credit -= n
    }
    this.schedule()
    return n
  }

  [kSendBody] (id, st, chunk, flags) {
    const n = this.sendWithin(id, st, chunk, flags)
    this.schedule()
    return n
  }

  /**
   * Body bytes within the request's credit: where the hub grants the window
   * (REQ_GRANTED_WINDOW, an h2 stream) what does not fit waits here for its WINDOW, so
   * a client that does not read costs its app's process the bytes, not the hub (as
   * node's own server holds what res.write() was given).
   * @returns {number} the chunk's bytes (now in flight for attachment-base.js)
   */
  sendWithin (id, st, chunk, flags) {
    if (st.credit === Infinity) return this.sendChunk(id, chunk, flags)
    if (typeof chunk === 'string') chunk = Buffer.from(chunk, 'utf8')
    const n = chunk === null ? 0 : chunk.length
    if (st.waiting === null) {
      if (n <= st.credit) {
        st.credit -= n
        return this.sendChunk(id, chunk, flags)
      }
      st.waiting = []
      this.waiting.set(id, st)
    }
    st.waiting.push(flags, chunk)
    this.sendWaiting(id, st)
    return n
  }

  /** What waits for credit, in order, as far as the credit goes (the rest of a chunk stays). */
  sendWaiting (id, st) {
    const q = st.waiting
    let i = 0
    while (i < q.length) {
      const chunk = q[i + 1]
      const n = chunk === null ? 0 : chunk.length
      if (n > st.credit) {
        if (st.credit > 0) {
          this.sendChunk(id, chunk.subarray(0, st.credit), RESPONSE_MORE)
          q[i + 1] = chunk.subarray(st.credit)
          st.credit = 0
        }
        break
      }
      st.credit -= n
      this.sendChunk(id, chunk, q[i])
      i += 2
    }
    if (i === q.length) {
      st.waiting = null
      this.waiting.delete(id)
    } else if (i > 0) {
      q.splice(0, i)
    }
    this.schedule()
  }

  sendChunk (id, chunk, flags) {
    if (typeof chunk === 'string' && chunk.length > MAX_PIECE / 3) chunk = Buffer.from(chunk, 'utf8')
    return chunk !== null && chunk.length > MAX_PIECE
      ? this.pieces(id, chunk, flags)
      : this.writer.resBody(id, flags & (RESPONSE_MORE | RESPONSE_CLOSE), chunk)
  }

  [kContinue] (id) {
    this.writer.empty(T.CONTINUE, id)
    this.schedule()
  }

  [kEndConnection] (connectionId) {
    this.writer.empty(T.CONN_END, connectionId)
    this.schedule()
  }

  /**
   * The router waits for the worker's verdict on a connection (CONN_ERROR,
   * CONN_TIMEOUT): a handler that knows nothing of it (or none) gets it destroyed.
   */
  askHandler (fn, id, e) {
    let known = false
    if (typeof fn === 'function') this.deliver((a, b) => { known = fn(a, b) === true }, id, e)
    if (!known) this.connFrame(T.CONN_DESTROY, id, null)
  }

  /** A frame about a connection of a port the server owns (remote-connection.js; CONN_FIN's answer). */
  connFrame (type, connectionId, buf) {
    if (this.closed) return
    if (type === T.CONN_IDLE && buf[0] === 1) this.idleAsked.add(connectionId)
    if (buf === null) this.writer.empty(type, connectionId)
    else this.writer.bytes(type, connectionId, buf, 0, buf.length, -1)
    // node acts on its socket at once (closeIdleConnections(), destroy()): the router
    // hears it in this tick, before a client answered meanwhile could send more (a
    // setImmediate flush would let a poll of the event loop come first)
    if (type === T.CONN_IDLE || type === T.CONN_DESTROY) this.flushThisTick()
    else this.schedule()
  }

  flushThisTick () {
    if (this.tickFlushQueued) return
    this.tickFlushQueued = true
    process.nextTick(() => {
      this.tickFlushQueued = false
      if (!this.closed && !this.socket.destroyed) this.writer.writeTo(this.socket)
    })
  }

  [kInfo] (id, st, status, reason, headers) {
    this.writer.info(id, status, reason, headers)
    this.schedule()
  }

  [kCancel] (id) {
    this.waiting.delete(id)
    this.writer.empty(T.CANCEL, id)
    this.schedule()
  }

  [kDetach] () {
    this.writer.empty(T.DETACH, 0)
    this.flush()
  }

  // A close() from a handler (the app answers, then closes its server) comes before
  // this read's ACK is written; the hub takes a request it never saw acknowledged as
  // lost and hands it to another worker, so the ACK goes out first.
  [kClose] () {
    if (this.inBatch) {
      this.endAfterBatch = true
      return
    }
    this.flush()
    this.socket.end()
  }

  [kRef] (refed) {
    // (an in-memory stream holds no handle: nothing to keep the process alive with)
    if (typeof this.socket.ref !== 'function') return
    if (refed) this.socket.ref()
    else this.socket.unref()
  }

  [kFlush] () {
    this.flush()
  }

  pieces (id, buf, flags) {
    const last = flags & (RESPONSE_MORE | RESPONSE_CLOSE)
    for (let off = 0; off < buf.length; off += MAX_PIECE) {
      const end = Math.min(off + MAX_PIECE, buf.length)
      this.writer.resBody(id, end === buf.length ? last : RESPONSE_MORE, buf.subarray(off, end))
    }
    return buf.length
  }

  schedule () {
    if (!this.flushQueued) {
      this.flushQueued = true
      setImmediate(this.flushBound)
    }
  }

  flush () {
    this.flushQueued = false
    if (!this.closed && !this.socket.destroyed) this.writer.writeTo(this.socket)
  }

  // ---- transport: hub -> worker ------------------------------------------------

  onData (chunk) {
    this.batchCount = 0
    this.inBatch = true
    try {
      this.reader.push(chunk)
    } catch (err) {
      this.inBatch = false
      if (err && err.code === 'ERR_HTTPSYS_PROTOCOL') {
        this.fail(err)
        this.endBatch()
        return
      }
      throw err
    }
    this.inBatch = false
    if (this.batchCount > 0) {
      this.receivedCount = (this.receivedCount + this.batchCount) >>> 0
      this.writer.u32(T.ACK, 0, this.receivedCount)
      this.schedule()
    }
    if (this.endAfterBatch) {
      this.endAfterBatch = false
      this[kClose]()
    }
    this.endBatch()
  }

  /** A large frame still in the pieces it arrived in (FrameReader): BODY is taken as is. */
  onPieces (type, id, pieces) {
    if (type !== T.BODY) return false
    for (const piece of P.payloadPieces(pieces, P.HEADER_SIZE)) this.body(id, piece)
    return true
  }

  onFrame (type, id, b, start, end) {
    switch (type) {
      case T.REQUEST: {
        const req = P.decodeRequest(id, b, start, this.memo)
        this.batchCount++
        if (this.idleAsked.size > 0 && this.idleAsked.delete(req.connectionId)) {
          // the router read it before it heard of the close: node's socket.destroy()
          // (the router aborts it; its BODY frames name no live request)
          this.connFrame(T.CONN_DESTROY, req.connectionId, null)
          return
        }
        const st = new HubRequestState(req)
        if ((b[start] & P.REQ_GRANTED_WINDOW) !== 0) {
          // what the hub has not granted yet counts as in flight (attachment-base.js),
          // so the window opens as its WINDOW frames come
          st.credit = P.GRANTED_WINDOW_START
          st.outstanding = this.window - P.GRANTED_WINDOW_START
        }
        this.received(req, st)
        return
      }
      case T.BODY:
        this.body(id, b.subarray(start, end))
        return
      case T.BODY_END:
        this.bodyEnd(id, P.decodeTrailers(b, start, end))
        return
      case T.WINDOW: {
        const n = b.readUInt32LE(start)
        // (a response already complete may still wait for credit: it is no longer live)
        const st = this.waiting.get(id) || this.live.get(id)
        if (st !== undefined && st.credit !== Infinity) {
          st.credit += n
          if (st.waiting !== null) this.sendWaiting(id, st)
        }
        this.acknowledged(id, n)
        return
      }
      case T.ABORT:
        this.waiting.delete(id)
        this.aborted(id)
        return
      case T.DETACH_OK:
        this.detachConfirmed()
        return
      case T.CONN_CLOSED:
        this.idleAsked.delete(id)
        this.connectionClosed(id)
        return
      case T.CONN_FIN:
        // node reads a FIN in an I/O callback of its own: after the microtasks of the
        // requests read before it (an app that answers in a promise's then() has ended
        // them by then), and before the callbacks of what other sockets read later in
        // the same turn of the loop (a proxy's upstream answer that came after the FIN
        // finds its response closed, no 'finish': test-http-writable-true-after-close.js).
        // So not setImmediate: once this read's microtasks are drained, a tick of the
        // same callback (node's processTicksAndRejections runs the ticks queued in
        // microtasks before it returns to the loop)
        queueMicrotask(() => process.nextTick(() => {
          this.connectionFin(id)
          this.endBatch()
          // its app dropped what it had not answered: the router ends the connection
          // after the answered ones, without a timer of its own
          this.connFrame(T.CONN_FIN, id, null)
        }))
        return
      case T.CONN_OPEN: {
        const info = P.decodeConnOpen(b, start, end)
        if (info === null) return this.fail(P.protocolError('CONN_OPEN payload is short'))
        if (typeof this.handlers.onConnectionOpen === 'function') this.deliver(this.handlers.onConnectionOpen, new RemoteConnection(this, id, info))
        return
      }
      case T.CONN_ERROR: {
        const e = P.decodeConnError(b, start, end)
        if (e === null) return this.fail(P.protocolError('CONN_ERROR payload is short'))
        this.askHandler(this.handlers.onConnectionError, id, e)
        return
      }
      case T.CONN_TIMEOUT:
        this.askHandler(this.handlers.onConnectionTimeout, id, undefined)
        return
      case T.CONN_HELD:
        if (typeof this.handlers.onConnectionHeld === 'function') this.deliver(this.handlers.onConnectionHeld, id)
        return
      case T.CONN_KEPT:
        // its next request was begun when the router heard of the close: served
        this.idleAsked.delete(id)
        return
      case T.CLOSE:
        this.closeNote = P.decodeJson(b, start, end, false)
        return
      case T.HELLO_OK:
        return this.onHelloOk(b, start, end)
      case T.HELLO_ERR: {
        const value = P.decodeJson(b, start, end, false)
        const Coded = codes[value.code]
        // a taken port the router could not name the holder of: this process looks
        const err = Coded ? withPortOwner(new Coded(value.details || {})) : new Error(value.message)
        if (!Coded) err.code = value.code
        return this.fail(err)
      }
      default:
        this.fail(P.protocolError(`unknown frame type ${type}`))
    }
  }

  onHelloOk (b, start, end) {
    const { version, value } = P.decodeJson(b, start, end, true)
    if (version !== P.VERSION) {
      return this.fail(new codes.ERR_HTTPSYS_PROTOCOL({ reason: `the router speaks protocol version ${version}, this worker version ${P.VERSION}` }))
    }
    this.info = { queue: value.queue, urls: value.urls, ports: value.ports }
    this.attached = true
    const p = this.pendingAttach
    this.pendingAttach = null
    if (p !== null) p.resolve(this)
    // The first ACK opens the receive window; sent after the promise callbacks ran,
    // so no request reaches the app before it holds the Attachment.
    setImmediate(() => {
      if (this.closed) return
      this.writer.u32(T.ACK, 0, this.receivedCount)
      this.flush()
    })
  }

  fail (err) {
    this.reader.stopped = true
    const p = this.pendingAttach
    this.pendingAttach = null
    if (p !== null) p.reject(err)
    this.failure = err
    this.socket.destroy()
  }

  onSocketClose () {
    this.reader.stopped = true
    this.waiting.clear()
    const p = this.pendingAttach
    if (p !== null) {
      this.pendingAttach = null
      this.closed = true
      p.reject(new codes.ERR_HTTPSYS_HUB_UNREACHABLE({ path: this.socketPath, cause: this.connectError || undefined }))
      return
    }
    if (!this.attached) {
      this.closed = true
      return
    }
    const err = this.failure && this.failure.code === 'ERR_HTTPSYS_PROTOCOL'
      ? this.failure
      : new codes.ERR_HTTPSYS_QUEUE_CLOSED({ queue: this.info.queue, reason: this.closeNote && this.closeNote.reason })
    this.ended(err)
  }
}

/**
 * Attaches to a queue on the hub.
 * @param {object} options
 * @param {string} [options.queue] queue name (under the supervisor)
 * @param {string[]} [options.urls] prefixes to register when the queue has none
 * @param {object} options.handlers see src/wire/contract.js
 * @param {string} [options.socketPath=process.env.HTTPSYS_HUB]
 * @param {string} [options.token=process.env.HTTPSYS_QUEUE_TOKEN] the app's queue token
 * @param {number} [options.receiveWindow=128] REQUEST frames the hub may send ahead of our ACKs
 * @param {object} [options.tls] an https server's key material (key, cert, pfx,
 *   passphrase, ca, requestCert, rejectUnauthorized): the hub terminates TLS for the
 *   queue's https prefixes with it unless the config gives a certificate (contract.js)
 * @param {import('node:stream').Duplex} [options.stream] a connected stream to a hub in
 *   this process (an in-memory pair: standalone-hub.js adopt), instead of socketPath
 * @returns {Promise<HubAttachment>}
 */
function attach ({ queue, urls, handlers, socketPath = process.env[ENV.HUB], token = process.env[ENV.QUEUE_TOKEN], receiveWindow = P.DEFAULT_RECEIVE_WINDOW, tls, stream = null } = {}) {
  if (!handlers || typeof handlers.onRequest !== 'function') {
    return Promise.reject(new codes.ERR_INVALID_ARG_TYPE({ name: 'handlers.onRequest', expected: 'a function', actual: handlers && handlers.onRequest }))
  }
  if (stream === null && (typeof socketPath !== 'string' || socketPath === '')) {
    return Promise.reject(new codes.ERR_HTTPSYS_HUB_UNREACHABLE({ path: `(${ENV.HUB} is not set)` }))
  }
  // Windows authentication on the hub: a development identity, or no attach (auth-gate.js)
  try {
    handlers = gatedHandlers(handlers, hubGate())
  } catch (err) {
    return Promise.reject(err)
  }
  return new Promise((resolve, reject) => {
    const socket = stream || net.connect(socketPath)
    const a = new HubAttachment(socket, handlers, stream === null ? socketPath : '(in-process)')
    a.pendingAttach = { resolve, reject }
    const hello = () => {
      const material = P.encodeTlsOptions(tls)
      a.writer.json(T.HELLO, 0, { queue, urls: urls || [], pid: process.pid, window: receiveWindow, token: token || undefined, tls: material || undefined }, true)
      a.flush()
    }
    if (stream !== null) process.nextTick(hello)
    else socket.on('connect', hello)
    socket.on('data', (chunk) => a.onData(chunk))
    socket.on('error', (err) => { if (!a.attached) a.connectError = err })
    socket.on('close', () => a.onSocketClose())
  })
}

/**
 * What listen() can know before attach() completes (contract.js reserve()): the
 * supervisor's queue and its prefixes, or the port asked for (reserve.js).
 */
function reserve (options) {
  return reserveFromEnv(options)
}

module.exports = { attach, reserve }
