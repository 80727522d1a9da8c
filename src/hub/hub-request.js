'use strict'

// One request inside the hub, from its head on a client connection until its response
// is complete: which queue and worker hold it, its body flow control (the worker's
// credit), and its response bytes. A plain class with a stable shape: it is created
// per request on the hot path.

const { RESPONSE_MORE, RESPONSE_CLOSE, RESPONSE_OPAQUE, RESPONSE_KEEP_OPEN } = require('../wire/contract')
const { INITIAL_BODY_WINDOW, RES_HAS_CONNECTION } = require('../wire/protocol')
const responses = require('./responses')
const clock = require('./clock')

// Request-body bytes the hub holds for one request before it stops reading the client.
const BODY_HOLD = INITIAL_BODY_WINDOW
// Response bodies below this are copied into the head's buffer; larger ones are not.
const INLINE_BODY = 4096

// RFC 9110 9.2.1
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])

const CONTINUE_NONE = 0
const CONTINUE_WANTED = 1 // send when this request's turn to write comes
const CONTINUE_SENT = 2

class HubRequest {
  constructor (conn, head) {
    this.conn = conn
    this.head = head
    this.next = null // the next request on this connection (responses go out in order)
    this.arrived = clock.now() // for the queue timeout
    this.queue = null
    this.waiting = false // in queue.waiting
    this.attachment = null
    this.wireId = 0
    this.seq = 0 // the worker's REQUEST frame number (compared with its ACK)
    this.aborted = false
    this.isHead = head.method === 'HEAD'
    this.keepAlive = head.keepAlive
    // request body
    this.bodyDone = !head.hasBody
    this.bodyEndSent = false
    this.discard = false
    this.credit = 0
    this.bodyBuf = null
    this.bodyBufBytes = 0
    this.bodyBytes = 0
    this.replay = null // body chunks the worker may not have seen yet (until its ACK)
    this.continueState = CONTINUE_NONE
    // response
    this.headSent = false
    this.noBody = false
    this.resDone = false
    this.close = false
    this.out = null // response bytes held while an earlier response is still going out
    this.outBytes = 0 // bytes in out
    this.charge = 0 // what this request counts against its connection's HELD_BUDGET
    this.heldAck = 0
    this.unacked = 0
    this.ackPending = 0 // WINDOW credit not yet returned (attachment-connection.js sendWindow)
    this.grantsWindow = false // the hub grants its response window (h2-request.js, REQ_GRANTED_WINDOW)
    this.tunnel = null // after a 101: the upgraded connection's relay (tunnel.js)
    this.headBytes = 0 // an upgrade's: the bytes after its head its worker got as `head`
    // a port a standalone server owns: withdrawn while it waited for a worker, it still
    // reaches its app (node emitted 'request' when it read the head) and is aborted there
    this.abortOnDispatch = false
    this.cacheEpoch = 0 // its queue's instance generation when it went to a worker (output-cache.js)
    this.cap = null // its response, being copied into the output cache
    // pipelining (client-connection.js onHead): an unsafe method, and routed only once
    // it is the first of its connection's line
    this.unsafe = !SAFE_METHODS.has(head.method)
    this.routeLater = false
  }

  // -------------------------------------------------------------------------
  // request body (client -> worker)

  onBodyChunk (chunk) {
    this.bodyBytes += chunk.length
    if (this.discard) return
    const q = this.queue
    // (an upgraded connection's bytes are not a body: no limit)
    if (q !== null && this.bodyBytes > q.maxBodySize && this.tunnel === null) {
      this.conn.bodyTooLarge(this)
      return
    }
    if (this.attachment !== null && this.bodyBuf === null && this.credit >= chunk.length) {
      this.credit -= chunk.length
      this.attachment.sendBody(this, chunk)
      return
    }
    if (this.bodyBuf === null) this.bodyBuf = []
    this.bodyBuf.push(chunk)
    this.bodyBufBytes += chunk.length
    if (this.attachment !== null) this.pumpBody()
    if (this.bodyBufBytes >= BODY_HOLD) this.conn.pauseForBody()
  }

  onBodyComplete () {
    this.bodyDone = true
    if (this.attachment !== null && this.bodyBuf === null && !this.bodyEndSent && !this.discard) {
      this.bodyEndSent = true
      this.attachment.sendBodyEnd(this)
    }
  }

  /** Sends held body bytes within the worker's credit. */
  pumpBody () {
    const w = this.attachment
    const buf = this.bodyBuf
    if (buf !== null) {
      while (this.credit > 0 && buf.length > 0) {
        let chunk = buf[0]
        if (chunk.length > this.credit) {
          buf[0] = chunk.subarray(this.credit)
          chunk = chunk.subarray(0, this.credit)
        } else {
          buf.shift()
        }
        this.credit -= chunk.length
        this.bodyBufBytes -= chunk.length
        w.sendBody(this, chunk)
      }
      if (buf.length === 0) this.bodyBuf = null
      if (this.bodyBufBytes < BODY_HOLD) this.conn.resumeForBody(this)
    }
    if (this.bodyDone && this.bodyBuf === null && !this.bodyEndSent) {
      this.bodyEndSent = true
      w.sendBodyEnd(this)
      if (this.tunnel !== null) this.tunnel.maybeDone()
    }
  }

  /** The worker granted body credit (its readBody). */
  onRead (n) {
    this.credit += n
    // HTTP.SYS sends 100 Continue on the first body read, so a worker that reads
    // without calling writeContinue never leaves the client waiting.
    if (this.head.expectContinue && this.continueState === CONTINUE_NONE && !this.headSent && !this.bodyDone) {
      this.conn.writeContinue(this)
    }
    if (!this.discard) this.pumpBody()
  }

  onContinue () {
    if (this.continueState === CONTINUE_NONE && !this.headSent && !this.bodyDone) this.conn.writeContinue(this)
  }

  /**
   * An INFO frame (checked): an interim response (102, 103) before the final one, as the
   * worker wrote it, in order with the rest of the connection's responses. Never to an
   * HTTP/1.0 client (RFC 9110 15.2) or once the final head went out.
   */
  onInfo (b, p, end) {
    if (this.headSent || this.resDone) return
    if (this.head.versionMajor === 1 && this.head.versionMinor === 0) return
    this.conn.write(this, responses.interim(b, p, end), 0)
  }

  /** Dispatched to a worker: start with the initial window and send what is held. */
  onDispatched () {
    this.credit = INITIAL_BODY_WINDOW
    if (this.bodyBuf !== null || (this.bodyDone && this.head.hasBody)) this.pumpBody()
  }

  /** Its worker died before acknowledging it: make it new again for the next worker. */
  resetForRequeue () {
    this.attachment = null
    this.bodyEndSent = false
    if (this.replay !== null) {
      const sent = this.replay
      this.replay = null
      if (this.bodyBuf !== null) for (const c of this.bodyBuf) sent.push(c)
      let bytes = 0
      for (const c of sent) bytes += c.length
      this.bodyBuf = sent.length > 0 ? sent : null
      this.bodyBufBytes = bytes
    }
  }

  // -------------------------------------------------------------------------
  // response (worker -> client)

  /** A RESPONSE frame; payload at b[p, end). */
  onResponse (b, p, end) {
    if (this.headSent) return
    const status = b.readUInt16LE(p)
    const flags = b[p + 2]
    const rlen = b.readUInt16LE(p + 8)
    const bodyStart = p + 14 + rlen + b.readUInt32LE(p + 10 + rlen)
    // (a 101 without the switch, on a port a standalone server owns, goes out as the app
    // wrote it, and HTTP goes on, as from node's server without an 'upgrade' listener)
    if ((flags & RESPONSE_OPAQUE) !== 0 || (status === 101 && this.conn.ownsPort !== true)) {
      // A 101 switches the connection to the worker's protocol (tunnel.js): only as the
      // answer to a request that asked to upgrade (an HTTP/1.1 one: h2-request.js has
      // its own onResponse), with the OPAQUE flag. So does a 2xx to a CONNECT, which
      // only a port a standalone server owns lets through (the parser's `connect`).
      const tunnels = status === 101 || (status >= 200 && status < 300 && this.head.method === 'CONNECT' && this.conn.ownsPort === true)
      if (tunnels && (flags & RESPONSE_OPAQUE) !== 0 && this.head.upgrade) {
        this.headSent = true
        this.conn.startTunnel(this, responses.fromFrame(b, p, bodyStart, end, responses.ADD_NONE), end - bodyStart)
        return
      }
      this.attachment.sendAbort(this)
      this.releaseWorker()
      this.respondLocal(501, 'opaque', true)
      return
    }
    this.headSent = true
    this.noBody = this.isHead || status < 200 || status === 204 || status === 304
    const more = (flags & RESPONSE_MORE) !== 0
    // (KEEP_OPEN: a head saying Connection: close that leaves the connection open, as
    // node's maxRequestsPerSocket does; only on a port a standalone server owns)
    const asked = (flags & RESPONSE_CLOSE) !== 0 || ((flags & RESPONSE_KEEP_OPEN) !== 0 && this.conn.ownsPort !== true)
    const close = this.mustClose(asked)
    this.close = close
    let add = responses.ADD_NONE
    if ((flags & RES_HAS_CONNECTION) === 0) {
      if (close) add = responses.ADD_CLOSE
      else if (this.head.versionMinor === 0 && this.head.versionMajor === 1) add = responses.ADD_KEEP_ALIVE
    } else if (close && !asked) {
      // the worker said keep-alive and the hub closes anyway: its Connection lines go
      // (a worker that asked to close said so in its own header, which stays where it is)
      add = responses.ADD_REPLACE_CLOSE
    }
    const bodyLen = end - bodyStart
    const ttl = b.readUInt32LE(p + 4)
    if (ttl !== 0 && this.queue !== null && this.queue.outputCache !== null) this.cap = this.queue.outputCache.begin(this, b, p, bodyStart, end, ttl)
    // A small body goes out in the head's buffer (one write, one small copy); a large
    // one is written from the frame as it is, after the head.
    const inline = this.noBody || bodyLen < INLINE_BODY
    const head = responses.fromFrame(b, p, bodyStart, inline && !this.noBody ? end : bodyStart, add)
    let ack = 0
    if (more) {
      if (this.noBody) {
        if (bodyLen > 0) this.dropBody(bodyLen)
      } else {
        ack = bodyLen
      }
    } else {
      this.finish()
    }
    if (inline) this.conn.write(this, head, ack)
    else this.conn.write2(this, head, b.subarray(bodyStart, end), ack)
    if (!more) this.conn.done(this)
  }

  /** A RES_BODY frame: u8 flags, bytes. */
  onResBody (b, start, end) {
    const n = end - start - 1
    this.resBody(b[start], n > 0 ? b.subarray(start + 1, end) : null, n)
  }

  /** A large RES_BODY frame still in the pieces it arrived in (attachment-connection.js). */
  onResBodyPieces (flags, pieces, n) {
    this.resBody(flags, pieces, n)
  }

  /** body: n bytes as one Buffer, a list of them, or null (n = 0). */
  resBody (flags, body, n) {
    if (!this.headSent || this.resDone) return
    const more = (flags & RESPONSE_MORE) !== 0
    if (this.tunnel !== null) return this.tunnel.fromWorker(body, n, more)
    if ((flags & RESPONSE_CLOSE) !== 0) this.close = true
    if (n > 0) {
      if (this.cap !== null && !this.cap.queue.outputCache.append(this.cap, body)) this.cap = null
      if (this.noBody) {
        if (more && this.attachment !== null) this.dropBody(n)
      } else {
        this.writeBody(body, more ? n : 0)
      }
    }
    if (!more) this.bodyEnded()
  }

  /** Body bytes of a response that has none (HEAD, 204, 304): dropped, and the worker's window reopens. */
  dropBody (n) {
    this.attachment.sendWindow(this, n)
  }

  /** Response body bytes to the client; `ack` bytes of window go back as it takes them. */
  writeBody (body, ack) {
    this.conn.write(this, body, ack)
  }

  /** The worker's last RES_BODY: the response is complete. */
  bodyEnded () {
    this.finish()
    this.conn.done(this)
  }

  mustClose (asked) {
    const conn = this.conn
    if (asked || !this.keepAlive || conn.closing) return true
    // The client half-closed and this is the last request it sent: the connection ends
    // after it (earlier ones must not close it: the requests behind them are answered).
    if (conn.readEnded && conn.stopped && this.next === null) return true
    // The client waits for 100 Continue that will never come: it may or may not send
    // the body, so the connection cannot be reused safely.
    return !this.bodyDone && this.head.expectContinue && this.continueState !== CONTINUE_SENT
  }

  /** The response is complete: the worker is done with this request. */
  finish () {
    this.resDone = true
    if (this.cap !== null) {
      const cap = this.cap
      this.cap = null
      cap.queue.outputCache.commit(cap)
    }
    this.releaseWorker()
    if (!this.bodyDone) this.startDiscard()
  }

  releaseWorker () {
    const w = this.attachment
    if (w !== null) {
      this.attachment = null
      w.release(this)
    }
  }

  startDiscard () {
    this.discard = true
    this.bodyBuf = null
    this.bodyBufBytes = 0
    this.conn.resumeForBody(this)
  }

  /**
   * The hub answers this request itself (400, 404, 413, 502, 503, ...).
   * @param {number} status
   * @param {string|null} variant a page variant (responses.js)
   * @param {boolean} close close the connection after it
   * @param {string} [extra] more header lines ("Name: value\r\n"), e.g. a Location
   */
  respondLocal (status, variant, close, extra) {
    if (this.headSent) return
    this.headSent = true
    this.resDone = true
    this.close = close || this.mustClose(false)
    const add = this.ownConnection()
    if (!this.bodyDone) this.startDiscard()
    this.conn.write(this, responses.local(status, variant, this.isHead, add, extra), 0)
    this.conn.done(this)
  }

  /**
   * Answered from the output cache (output-cache.js): the entry's full 200 (entry set),
   * or a 206, 304 or 416 from it (lines: its header lines, body: the bytes to send).
   */
  respondFromCache (status, reason, lines, body, entry = null, age = 0) {
    if (this.headSent) return
    this.headSent = true
    this.resDone = true
    this.close = this.mustClose(false)
    const add = this.ownConnection()
    if (entry !== null) {
      const bytes = entry.bytes(age, add, this.isHead)
      if (this.isHead || entry.joins(add)) this.conn.write(this, bytes, 0)
      else this.conn.write2(this, bytes, entry.body, 0)
    } else {
      const h = Buffer.from('HTTP/1.1 ' + status + ' ' + reason + '\r\n' + lines + responses.CONNECTION_LINES[add] + '\r\n', 'latin1')
      if (body === null || this.isHead) this.conn.write(this, h, 0)
      else this.conn.write2(this, h, body, 0)
    }
    this.conn.done(this)
  }

  /** The Connection header of a response the hub makes itself, once this.close is set. */
  ownConnection () {
    if (this.close) return responses.ADD_CLOSE
    return this.head.versionMajor === 1 && this.head.versionMinor === 0 ? responses.ADD_KEEP_ALIVE : responses.ADD_NONE
  }

  /** The client connection is gone, or the hub gives up on this request. */
  abort () {
    if (this.aborted) return
    this.aborted = true
    this.withdraw()
    this.out = null
  }

  /** Takes the request back from its queue or worker (the hub answers it instead). */
  withdraw () {
    if (this.waiting) {
      if (this.conn.ownsPort === true) this.abortOnDispatch = true
      else this.queue.forget(this)
    }
    const w = this.attachment
    if (w !== null && !this.resDone) {
      w.sendAbort(this)
      this.releaseWorker()
    }
    this.bodyBuf = null
    this.bodyBufBytes = 0
  }
}

module.exports = { HubRequest, BODY_HOLD, CONTINUE_NONE, CONTINUE_WANTED, CONTINUE_SENT }
