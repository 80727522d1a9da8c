'use strict'

// The hub's end of one attachment (a worker process's socket to a queue): decodes the
// worker's frames, encodes frames for it into one FrameWriter and writes them once per
// tick, and tracks the requests the worker holds.
//
// Requests in flight live in a slot table: the wire id is slot | generation << 20, so
// a late frame for a finished request never reaches the slot's next occupant, and a
// lookup is an array index rather than a Map.

const P = require('../wire/protocol')

// WINDOW credit goes back in steps of at least this (sendWindow); it must stay well
// below the worker's response window (RESPONSE_WINDOW, 256 KiB)
const ACK_STEP = P.RESPONSE_WINDOW / 8
const { T } = P

const SLOT_BITS = 20
const SLOT_MASK = (1 << SLOT_BITS) - 1
const GEN_MASK = 0xfff

class AttachmentConnection {
  /**
   * @param {import('./hub').Hub} hub
   * @param {import('node:net').Socket} socket
   * @param {number} id
   */
  constructor (hub, socket, id) {
    this.hub = hub
    this.socket = socket
    this.id = id
    this.pid = 0
    this.queue = null
    this.helloSeen = false
    this.attached = false
    // Nothing is dispatched before the worker's first ACK: it grants the first receive
    // credit once its attach() promise has resolved, so the app holds the Attachment
    // before any request reaches it.
    this.ready = false
    this.detaching = false
    this.detachEmitted = false
    this.closed = false
    this.closeReason = null
    this.window = P.DEFAULT_RECEIVE_WINDOW
    this.sent = 0 // REQUEST frames sent
    this.acked = 0 // REQUEST frames the worker confirmed
    this.ackLow = 0 // the last cumulative u32 the worker sent
    this.inFlight = 0
    this.served = 0
    this.slots = []
    this.gens = []
    this.free = []
    this.unackedBodies = [] // dispatched requests with a body, until acknowledged
    this.writer = new P.FrameWriter()
    this.flushQueued = false
    this.flushBound = () => this.flush()
    this.reader = new P.FrameReader((type, fid, buf, start, end) => this.onFrame(type, fid, buf, start, end),
      (type, fid, pieces) => this.onPieces(type, fid, pieces))
    socket.on('data', (chunk) => {
      try {
        this.reader.push(chunk)
      } catch (err) {
        this.fail(err)
      }
    })
    socket.on('error', (err) => { this.closeReason = this.closeReason || err.code || 'error' })
    socket.on('close', () => this.onClose())
  }

  canTake () {
    return this.ready && !this.detaching && this.sent - this.acked < this.window && (this.free.length > 0 || this.slots.length <= SLOT_MASK)
  }

  // -------------------------------------------------------------------------
  // hub -> worker

  dispatch (req) {
    let slot
    if (this.free.length > 0) {
      slot = this.free.pop()
    } else {
      slot = this.slots.length
      this.slots.push(null)
      this.gens.push(0)
    }
    const id = ((this.gens[slot] << SLOT_BITS) | slot) >>> 0
    this.slots[slot] = req
    req.attachment = this
    req.wireId = id
    // the app's instances as they are now: an attach or a leave before its response is
    // complete keeps that response out of the output cache (output-cache.js)
    req.cacheEpoch = this.queue.cacheEpoch
    req.seq = ++this.sent
    this.inFlight++
    const head = req.head
    let flags = 0
    if (head.hasBody) {
      flags |= P.REQ_HAS_BODY
      req.replay = []
      this.unackedBodies.push(req)
    }
    if (req.keepAlive) flags |= P.REQ_KEEP_ALIVE
    if (req.conn.tls !== null) flags |= P.REQ_ENCRYPTED
    if (head.expectContinue) flags |= P.REQ_EXPECT_CONTINUE
    else if (head.expectOther) flags |= P.REQ_EXPECT_OTHER
    if (head.upgrade) flags |= P.REQ_UPGRADE
    if (req.grantsWindow) flags |= P.REQ_GRANTED_WINDOW
    // an upgrade's: the bytes read after its head, the app's `head` (client-connection.js)
    const after = head.upgrade && typeof req.conn.upgradeHead === 'function' ? req.conn.upgradeHead(req) : null
    this.writer.request(id, head, req.conn, flags, after)
    noteAttachment(req.conn.session || req.conn, this)
    this.schedule()
    if (req.abortOnDispatch) {
      // (hub-request.js withdraw: the app gets it, and hears at once that it is gone,
      // and that its connection is, when it closed before this worker heard of it)
      this.writer.empty(T.ABORT, id)
      if (req.conn.dead === true && req.conn.seen === this) this.writer.empty(T.CONN_CLOSED, req.conn.id)
      req.releaseWorker()
      return
    }
    // (its first WINDOW follows the REQUEST in the same write: what the app answers at
    // once goes out whole when the budget has room)
    if (req.grantsWindow) req.windowStarted()
    if (head.hasBody) req.onDispatched()
    // the client's FIN came while it waited for this worker (client-connection.js
    // armFinGrace): CONN_FIN follows the REQUEST
    if (req.conn.finPending === true) req.conn.finDispatched()
  }

  sendBody (req, chunk) {
    if (req.replay !== null) req.replay.push(chunk)
    this.writer.body(req.wireId, chunk)
    this.schedule()
  }

  sendBodyEnd (req) {
    this.writer.bodyEnd(req.wireId, req.head.trailers)
    this.schedule()
  }

  /**
   * The client connection `id`, which this worker has requests of, sent its FIN (a port
   * a standalone server owns): written at once, after what this tick queued already, so
   * the worker acts on it before the work its app scheduled meanwhile.
   */
  sendConnFin (id) {
    if (this.closed) return
    this.writer.empty(T.CONN_FIN, id)
    this.flush()
  }

  /** The client connection `id`, which this worker had requests of, has closed. */
  sendConnClosed (id) {
    if (this.closed) return
    this.writer.empty(T.CONN_CLOSED, id)
    this.schedule()
  }

  sendAbort (req) {
    this.writer.empty(T.ABORT, req.wireId)
    this.schedule()
  }

  /**
   * Response bytes of req the client took: the worker's window opens again. Returned in
   * steps of ACK_STEP, not per write: a WebSocket or SSE stream of small messages would
   * otherwise cost a WINDOW frame each. The worker still has its window less one step
   * to write into meanwhile, so it is never kept waiting for what is held back here.
   */
  sendWindow (req, n) {
    const pending = req.ackPending + n
    if (pending < ACK_STEP) {
      req.ackPending = pending
      return
    }
    req.ackPending = 0
    this.writer.u32(T.WINDOW, req.wireId, pending)
    this.schedule()
  }

  /** Response credit the hub grants (REQ_GRANTED_WINDOW): one WINDOW frame, now. */
  sendCredit (req, n) {
    this.writer.u32(T.WINDOW, req.wireId, n)
    this.schedule()
  }

  /** The request left this worker (response complete or aborted). */
  release (req) {
    const slot = req.wireId & SLOT_MASK
    if (this.slots[slot] !== req) return
    this.slots[slot] = null
    this.gens[slot] = (this.gens[slot] + 1) & GEN_MASK
    this.free.push(slot)
    this.inFlight--
    if (req.resDone) {
      this.served++
      if (this.queue !== null) this.queue.served++
    }
    if (req.replay !== null) {
      req.replay = null
      const i = this.unackedBodies.indexOf(req)
      if (i !== -1) this.unackedBodies.splice(i, 1)
    }
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

  sendJson (type, value, withVersion) {
    this.writer.json(type, 0, value, withVersion)
    this.flush()
  }

  // -------------------------------------------------------------------------
  // worker -> hub

  lookup (id) {
    const req = this.slots[id & SLOT_MASK]
    return req !== undefined && req !== null && req.wireId === id ? req : null
  }

  /** A large frame still in the pieces it arrived in (FrameReader): RES_BODY is taken as is. */
  onPieces (type, id, pieces) {
    const first = pieces[0]
    if (type !== T.RES_BODY || first.length <= P.HEADER_SIZE) return false
    const req = this.lookup(id)
    if (req === null) return true
    const body = P.payloadPieces(pieces, P.HEADER_SIZE + 1) // after the flags byte
    let n = 0
    for (let i = 0; i < body.length; i++) n += body[i].length
    req.onResBodyPieces(first[P.HEADER_SIZE], body, n)
    return true
  }

  onFrame (type, id, b, start, end) {
    switch (type) {
      case T.RESPONSE: {
        // Checked before anything is written: a malformed head must never reach a client.
        const bad = P.checkResponse(b, start, end)
        if (bad !== null) return this.fail(P.protocolError(bad))
        const req = this.lookup(id)
        if (req !== null) req.onResponse(b, start, end)
        return
      }
      case T.ACK: {
        if (end - start < 4) return this.fail(P.protocolError('ACK without its u32'))
        const n = b.readUInt32LE(start)
        const more = (n - this.ackLow) >>> 0
        // Acknowledging more than was sent would open the window without bound.
        if (this.acked + more > this.sent) return this.fail(P.protocolError(`ACK ${n} for ${this.sent} REQUEST frames sent`))
        this.acked += more
        this.ackLow = n
        if (!this.ready) this.ready = this.attached
        const ub = this.unackedBodies
        while (ub.length > 0 && ub[0].seq <= this.acked) ub.shift().replay = null
        if (this.queue !== null) this.queue.pump()
        return
      }
      case T.RES_BODY: {
        if (end === start) return this.fail(P.protocolError('RES_BODY without its flags byte'))
        const req = this.lookup(id)
        if (req !== null) req.onResBody(b, start, end)
        return
      }
      case T.READ: {
        if (end - start < 4) return this.fail(P.protocolError('READ without its u32'))
        const req = this.lookup(id)
        if (req !== null) req.onRead(b.readUInt32LE(start))
        return
      }
      case T.CONTINUE: {
        const req = this.lookup(id)
        if (req !== null) req.onContinue()
        return
      }
      case T.INFO: {
        const bad = P.checkInfo(b, start, end)
        if (bad !== null) return this.fail(P.protocolError(bad))
        const req = this.lookup(id)
        if (req !== null) req.onInfo(b, start, end)
        return
      }
      case T.CONN_END:
        this.hub.endConnection(this, id)
        return
      // the worker aborted what its app had not answered of a connection that sent
      // its FIN (version 6): the connection ends after the answered responses
      case T.CONN_FIN: {
        const conn = this.hub.connsById.get(id)
        if (conn !== undefined && typeof conn.finAnswered === 'function') conn.finAnswered()
        return
      }
      // a worker's verdicts on connections of a port its server owns (version 6): this
      // hub calls the server in its process instead (settings.onClientError, ...) and
      // sends no CONN_OPEN
      case T.CONN_WRITE:
      case T.CONN_DESTROY:
        return
      case T.CONN_IDLE:
        if (end - start !== 1) return this.fail(P.protocolError(`CONN_IDLE payload of ${end - start} bytes is not 1`))
        return
      case T.CANCEL: {
        const req = this.lookup(id)
        if (req !== null) req.conn.destroy()
        return
      }
      case T.HELLO: {
        if (this.attached || this.helloSeen) return this.fail(P.protocolError('HELLO sent twice'))
        this.helloSeen = true
        const { version, value } = P.decodeJson(b, start, end, true)
        if (version !== P.VERSION) {
          const reason = `the worker speaks protocol version ${version}, the hub version ${P.VERSION}`
          this.sendJson(T.HELLO_ERR, { code: 'ERR_HTTPSYS_PROTOCOL', details: { reason } })
          this.socket.end()
          this.hub.log.warn({ pid: value && value.pid, reason }, 'worker protocol mismatch')
          return
        }
        this.hub.onHello(this, value || {})
        return
      }
      case T.DETACH:
        this.detaching = true
        this.writer.empty(T.DETACH_OK, 0)
        this.flush()
        this.hub.attachmentDetached(this, 'detach')
        return
      default:
        this.fail(P.protocolError(`unknown frame type ${type}`))
    }
  }

  /** HELLO accepted: the worker is now attached to queue. */
  attach (queue, window) {
    this.queue = queue
    this.attached = true
    if (Number.isInteger(window) && window > 0) this.window = Math.min(window, 65536)
  }

  /** The hub ends this worker (queue deleted, hub closing). */
  closeByHub (reason) {
    if (this.closed) return
    this.closeReason = reason
    this.writer.json(T.CLOSE, 0, { code: 'ERR_HTTPSYS_QUEUE_CLOSED', reason })
    this.flush()
    this.socket.end()
  }

  /**
   * The worker broke the protocol: it is dropped as if it had died (attachmentClosed: what
   * it acknowledged and did not answer gets 502, the rest is re-queued).
   */
  fail (err) {
    this.hub.log.warn({ err, code: err.code, workerId: this.id, pid: this.pid, queue: this.queue && this.queue.name }, 'worker broke the hub protocol; dropping it')
    this.closeReason = 'protocol'
    this.ready = false
    this.reader.stopped = true
    this.socket.destroy()
  }

  destroy () {
    this.socket.destroy()
  }

  /** @returns {object[]} requests this worker holds, in dispatch order */
  inFlightRequests () {
    const out = []
    for (const r of this.slots) if (r !== null && r !== undefined) out.push(r)
    out.sort((a, b) => a.seq - b.seq)
    return out
  }

  onClose () {
    if (this.closed) return
    this.closed = true
    this.reader.stopped = true
    this.hub.attachmentClosed(this)
  }
}

// The workers a client connection's requests went to (usually one): they hear of its
// close (CONN_CLOSED). One comparison per request on the common path.
function noteAttachment (conn, a) {
  const seen = conn.seen
  if (seen === a) return
  if (seen === null || seen === undefined) conn.seen = a
  else if (seen instanceof Set) seen.add(a)
  else conn.seen = new Set([seen, a])
}

module.exports = { AttachmentConnection, ACK_STEP }
