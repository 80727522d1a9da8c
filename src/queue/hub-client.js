'use strict'

// The queue backend for Linux and macOS: a worker's side of the hub protocol
// (src/hub/PROTOCOL.md). Implements src/queue/contract.js.
//
// Frames are batched both ways: everything the app answers during one tick goes out in
// one socket write, together with the ACK for the requests that arrived in the last
// read (sent after they were handed to onRequest, so the hub knows what this worker
// has seen when it dies).

const net = require('node:net')
const P = require('../hub/protocol')
const { T } = P
const { codes } = require('../errors')
const { RESPONSE_MORE, RESPONSE_CLOSE, withDefaultHandlers, callHandler, raiseThrown } = require('./contract')

// Bodies above this go out as RESPONSE + RES_BODY pieces, so neither side ever holds a
// frame larger than this in one piece.
const MAX_PIECE = 1024 * 1024
const BODY_WINDOW = P.INITIAL_BODY_WINDOW
const GRANT_STEP = BODY_WINDOW / 4

/** Per request the worker holds: body credit and response window. */
class ReqState {
  constructor (hasBody, expectContinue) {
    this.bodyDone = !hasBody
    this.expectContinue = expectContinue
    this.granted = BODY_WINDOW // the hub starts every request with this much credit
    this.received = 0
    this.readSent = false
    this.responded = false
    this.outstanding = 0 // response body bytes the hub has not acknowledged yet
    this.blocked = false
  }
}

class Attachment {
  constructor (socket, handlers, socketPath) {
    this.info = null
    this.socket = socket
    this.handlers = handlers
    this.socketPath = socketPath
    this.live = new Map()
    this.writer = new P.FrameWriter()
    this.reader = new P.FrameReader((type, id, b, start, end) => this.onFrame(type, id, b, start, end))
    this.flushQueued = false
    this.flushBound = () => this.flush()
    this.receivedCount = 0 // REQUEST frames received (the ACK value)
    this.batchCount = 0
    this.attached = false
    this.userClosed = false
    this.closed = false
    this.closeNote = null // what the hub said in its CLOSE frame
    this.failure = null
    this.connectError = null
    this.detachWaiters = null
    this.pendingAttach = null // { resolve, reject } until HELLO_OK / HELLO_ERR
    this.thrown = null // errors handlers threw during this read
  }

  /** The consumer wants more of the request body. */
  readBody (id) {
    const st = this.live.get(id)
    if (st === undefined || st.bodyDone) return
    let grant = st.received + BODY_WINDOW - st.granted
    if (grant < 0) grant = 0
    // The hub answers Expect: 100-continue on the first read, so that one always goes out.
    const first = st.expectContinue && !st.readSent
    if (!first && (grant < GRANT_STEP && !(grant > 0 && st.received >= st.granted))) return
    st.readSent = true
    st.granted += grant
    this.writer.u32(T.READ, id, grant)
    this.schedule()
  }

  /**
   * @returns {boolean} false when the response window is full (wait for onDrain)
   */
  respond (id, statusCode, statusMessage, rawHeaders, body, flags = 0, cacheTtl = 0) {
    const st = this.live.get(id)
    if (st === undefined || st.responded) return true
    st.responded = true
    const reason = statusMessage === undefined || statusMessage === null ? '' : String(statusMessage)
    const headers = rawHeaders || []
    let n
    let size = 0
    if (typeof body === 'string') {
      if (body.length > MAX_PIECE / 3) body = Buffer.from(body, 'utf8')
      else size = body.length
    }
    if (body && typeof body !== 'string') size = body.length
    if (size > MAX_PIECE) {
      this.writer.response(id, statusCode, (flags | RESPONSE_MORE) & ~RESPONSE_CLOSE, cacheTtl, reason, headers, null)
      n = this.pieces(id, body, flags)
    } else {
      n = this.writer.response(id, statusCode, flags, cacheTtl, reason, headers, body)
    }
    this.schedule()
    return this.afterSend(id, st, n, flags)
  }

  /** @returns {boolean} false when the response window is full */
  sendBody (id, chunk, flags = 0) {
    const st = this.live.get(id)
    if (st === undefined || !st.responded) return true
    if (typeof chunk === 'string' && chunk.length > MAX_PIECE / 3) chunk = Buffer.from(chunk, 'utf8')
    const n = chunk && chunk.length > MAX_PIECE
      ? this.pieces(id, chunk, flags)
      : this.writer.resBody(id, flags & (RESPONSE_MORE | RESPONSE_CLOSE), chunk)
    this.schedule()
    return this.afterSend(id, st, n, flags)
  }

  writeContinue (id) {
    if (!this.live.has(id)) return
    this.writer.empty(T.CONTINUE, id)
    this.schedule()
  }

  cancel (id) {
    if (!this.live.delete(id)) return
    this.writer.empty(T.CANCEL, id)
    this.schedule()
  }

  /** Stops receiving new requests; resolves once the hub confirmed. */
  detach () {
    if (this.detachWaiters === null) {
      this.detachWaiters = []
      if (!this.closed) {
        this.writer.empty(T.DETACH, 0)
        this.flush()
      }
    }
    if (this.closed) return Promise.resolve()
    return new Promise((resolve) => this.detachWaiters.push(resolve))
  }

  /** Ends the attachment now; requests still in flight are cancelled. */
  close () {
    if (this.closed || this.userClosed) return
    this.userClosed = true
    this.flush()
    this.socket.end()
  }

  // -------------------------------------------------------------------------

  pieces (id, buf, flags) {
    const last = flags & (RESPONSE_MORE | RESPONSE_CLOSE)
    for (let off = 0; off < buf.length; off += MAX_PIECE) {
      const end = Math.min(off + MAX_PIECE, buf.length)
      this.writer.resBody(id, end === buf.length ? last : RESPONSE_MORE, buf.subarray(off, end))
    }
    return buf.length
  }

  afterSend (id, st, n, flags) {
    if ((flags & RESPONSE_MORE) === 0) {
      this.live.delete(id)
      return true
    }
    st.outstanding += n
    if (st.outstanding >= P.RESPONSE_WINDOW) {
      st.blocked = true
      return false
    }
    return true
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

  onData (chunk) {
    this.batchCount = 0
    try {
      this.reader.push(chunk)
    } catch (err) {
      if (err && err.code === 'ERR_HTTPSYS_PROTOCOL') {
        this.fail(err)
        if (this.thrown !== null) this.raise()
        return
      }
      throw err
    }
    if (this.batchCount > 0) {
      this.receivedCount = (this.receivedCount + this.batchCount) >>> 0
      this.writer.u32(T.ACK, 0, this.receivedCount)
      this.schedule()
    }
    if (this.thrown !== null) this.raise()
  }

  // Every handler call goes through here: a handler that throws (an app's request
  // listener throwing synchronously) must not cut the read short, or the frames after
  // it, the partial frame the reader holds and this read's ACK would be lost.
  call (fn, a, b) {
    callHandler(this, fn, a, b)
  }

  // The ACK and the answers so far are written before the errors go on: a worker that
  // dies of one has acknowledged the request, so the hub answers 502 instead of handing
  // the same poison request to the next worker.
  raise () {
    this.flush()
    raiseThrown(this)
  }

  onFrame (type, id, b, start, end) {
    const h = this.handlers
    switch (type) {
      case T.REQUEST: {
        const req = P.decodeRequest(id, b, start)
        this.live.set(id, new ReqState(req.hasBody, req.expectContinue))
        this.batchCount++
        this.call(h.onRequest, req)
        return
      }
      case T.BODY: {
        const st = this.live.get(id)
        if (st === undefined || st.bodyDone) return
        st.received += end - start
        this.call(h.onBody, id, b.subarray(start, end))
        return
      }
      case T.BODY_END: {
        const st = this.live.get(id)
        if (st === undefined || st.bodyDone) return
        st.bodyDone = true
        this.call(h.onBodyEnd, id)
        return
      }
      case T.WINDOW: {
        const st = this.live.get(id)
        if (st === undefined) return
        st.outstanding -= b.readUInt32LE(start)
        if (st.outstanding < 0) st.outstanding = 0
        if (st.blocked && st.outstanding < P.RESPONSE_WINDOW) {
          st.blocked = false
          this.call(h.onDrain, id)
        }
        return
      }
      case T.ABORT:
        if (this.live.delete(id)) this.call(h.onAbort, id)
        return
      case T.DETACH_OK: {
        const waiters = this.detachWaiters || []
        this.detachWaiters = []
        for (const resolve of waiters) resolve()
        return
      }
      case T.CLOSE:
        this.closeNote = P.decodeJson(b, start, end, false)
        return
      case T.HELLO_OK: {
        const { version, value } = P.decodeJson(b, start, end, true)
        if (version !== P.VERSION) {
          return this.fail(new codes.ERR_HTTPSYS_PROTOCOL({ reason: `the hub speaks protocol version ${version}, this worker version ${P.VERSION}` }))
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
        return
      }
      case T.HELLO_ERR: {
        const value = P.decodeJson(b, start, end, false)
        const Coded = codes[value.code]
        const err = Coded ? new Coded(value.details || {}) : new Error(value.message)
        if (!Coded) err.code = value.code
        return this.fail(err)
      }
      default:
        this.fail(P.protocolError(`unknown frame type ${type}`))
    }
  }

  fail (err) {
    this.reader.stopped = true
    const p = this.pendingAttach
    this.pendingAttach = null
    if (p !== null) p.reject(err)
    this.failure = err
    this.socket.destroy()
  }

  onClose () {
    if (this.closed) return
    this.closed = true
    this.reader.stopped = true
    const p = this.pendingAttach
    if (p !== null) {
      this.pendingAttach = null
      p.reject(new codes.ERR_HTTPSYS_HUB_UNREACHABLE({ path: this.socketPath, cause: this.connectError || undefined }))
      return
    }
    if (!this.attached) return
    const ids = [...this.live.keys()]
    this.live.clear()
    const h = this.handlers
    for (const id of ids) this.call(h.onAbort, id)
    if (this.thrown !== null) this.raise()
    for (const resolve of this.detachWaiters || []) resolve()
    this.detachWaiters = []
    let err = null
    if (!this.userClosed) {
      err = this.failure && this.failure.code === 'ERR_HTTPSYS_PROTOCOL'
        ? this.failure
        : new codes.ERR_HTTPSYS_QUEUE_CLOSED({ queue: this.info.queue, reason: this.closeNote && this.closeNote.reason })
    }
    h.onClose(err)
  }
}

/**
 * Attaches to a queue on the hub.
 * @param {object} options
 * @param {string} [options.queue] queue name (under the supervisor)
 * @param {string[]} [options.urls] prefixes to register when the queue has none
 * @param {object} options.handlers see contract.js
 * @param {string} [options.socketPath=process.env.HTTPSYS_HUB]
 * @param {number} [options.receiveWindow=128] REQUEST frames the hub may send ahead of our ACKs
 * @returns {Promise<Attachment>}
 */
function attach ({ queue, urls, handlers, socketPath = process.env.HTTPSYS_HUB, receiveWindow = P.DEFAULT_RECEIVE_WINDOW } = {}) {
  if (!handlers || typeof handlers.onRequest !== 'function') {
    return Promise.reject(new codes.ERR_INVALID_ARG_TYPE({ name: 'handlers.onRequest', expected: 'a function', actual: handlers && handlers.onRequest }))
  }
  if (typeof socketPath !== 'string' || socketPath === '') {
    return Promise.reject(new codes.ERR_HTTPSYS_HUB_UNREACHABLE({ path: '(HTTPSYS_HUB is not set)' }))
  }
  return new Promise((resolve, reject) => {
    const socket = net.connect(socketPath)
    const a = new Attachment(socket, withDefaultHandlers(handlers), socketPath)
    a.pendingAttach = { resolve, reject }
    socket.on('connect', () => {
      a.writer.json(T.HELLO, 0, { queue, urls: urls || [], pid: process.pid, window: receiveWindow }, true)
      a.flush()
    })
    socket.on('data', (chunk) => a.onData(chunk))
    socket.on('error', (err) => { if (!a.attached) a.connectError = err })
    socket.on('close', () => a.onClose())
  })
}

module.exports = { attach }
