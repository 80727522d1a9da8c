'use strict'

// One HTTP/2 stream as a hub request. Everything before the response is HubRequest's
// (routing, queueing, the worker's body credit): an h2 stream is an ordinary queue
// request, so an HTTP/1.1-only app is served over h2 unchanged. What differs is the
// way out: the worker's RESPONSE frame becomes a HEADERS frame through node's http2
// (RFC 9113 8.3.2: :status and no reason phrase; 8.2.2: no connection-specific header
// fields), its body DATA frames, and a stream ends without ever closing the connection.
//
// The worker frames nothing for h2 (src/http/out-head.js finishHttp2Head): no chunked
// framing, no Connection header. A raw worker that sends them anyway has them dropped
// here rather than breaking the stream.
//
// The held-bytes budget (issue 23): a connection's streams together may make the hub
// hold about HELD_BUDGET (1 MiB, HTTP/1.1's per connection), not 100 response windows
// (25 MB for a client that opens 100 streams and never reads). The hub grants each
// stream's response window itself (REQ_GRANTED_WINDOW, docs/wire-protocol.md "Flow
// control"): the worker starts with GRANTED_WINDOW_START and sends nothing beyond what
// it was granted. A stream's window (`win`: what its worker may send plus what its
// stream still buffers) starts at START_WINDOW while the budget has room and grows,
// by what the client took, up to RESPONSE_WINDOW, again as far as the budget goes; the
// connection's total (`charged`) is the sum of its streams' windows. Every stream keeps
// GRANTED_WINDOW_START whatever the others hold, so none waits for another (a client
// may stall some streams and read the rest: RFC 9113 5.2 windows are per stream).

const http2 = require('node:http2')
const { HubRequest, CONTINUE_SENT } = require('./hub-request')
const { RESPONSE_MORE, RESPONSE_OPAQUE } = require('../wire/contract')
const { RESPONSE_WINDOW, GRANTED_WINDOW_START } = require('../wire/protocol')
const { HELD_BUDGET } = require('./client-connection')
const { ACK_STEP } = require('./attachment-connection')
const responses = require('./responses')
const clock = require('./clock')

const { NGHTTP2_NO_ERROR, NGHTTP2_INTERNAL_ERROR } = http2.constants

// RFC 9113 8.2.2 (and :-prefixed names a worker must not set)
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'http2-settings'])

// A stream's first window while its connection's budget has room: most responses go out
// whole at once (the WINDOW follows the REQUEST in the same write).
const START_WINDOW = 64 * 1024

class H2Request extends HubRequest {
  /**
   * @param {import('./h2-connection').H2StreamConn} conn this stream's side of its connection
   * @param {object} head what onHead gets from the HTTP/1.1 parser, built from the HEADERS frame
   */
  constructor (conn, head) {
    super(conn, head)
    this.stream = conn.stream
    this.grantsWindow = true
    this.resCredit = 0 // response bytes its worker may still send (its granted window)
    this.win = 0 // resCredit + held may reach this (the budget, above)
    this.held = 0 // bytes its stream buffers (writableLength): not sent to the client yet
    this.sentBound = () => this.track()
  }

  /** An INFO frame: an interim HEADERS frame on the stream (RFC 9113 8.1). */
  onInfo (b, p, end) {
    if (this.headSent || this.resDone || this.stream.destroyed || this.stream.closed) return
    const status = b.readUInt16LE(p)
    const rlen = b.readUInt16LE(p + 8)
    const bs = p + 14 + rlen
    try {
      this.stream.additionalHeaders(headersOf(b.latin1Slice(bs, bs + b.readUInt32LE(p + 10 + rlen)), status))
    } catch {}
  }

  /** A RESPONSE frame; payload at b[p, end). */
  onResponse (b, p, end) {
    if (this.headSent) return
    const status = b.readUInt16LE(p)
    const flags = b[p + 2]
    if ((flags & RESPONSE_OPAQUE) !== 0 || status === 101) {
      // RFC 9113 8.6: no 101 in HTTP/2 (an h2 request never asks to upgrade)
      this.attachment.sendAbort(this)
      this.releaseWorker()
      this.respondLocal(501, 'opaque', true)
      return
    }
    this.headSent = true
    this.noBody = this.isHead || status < 200 || status === 204 || status === 304
    const more = (flags & RESPONSE_MORE) !== 0
    const rlen = b.readUInt16LE(p + 8)
    const bs = p + 14 + rlen
    const bodyStart = bs + b.readUInt32LE(p + 10 + rlen)
    const headers = headersOf(b.latin1Slice(bs, bodyStart), status)
    const body = bodyStart < end ? b.subarray(bodyStart, end) : null
    const ttl = b.readUInt32LE(p + 4)
    if (ttl !== 0 && this.queue !== null && this.queue.outputCache !== null) this.cap = this.queue.outputCache.begin(this, b, p, bodyStart, end, ttl)
    const stream = this.stream
    if (stream.destroyed || stream.closed) {
      if (!more) this.finish()
      return
    }
    const endStream = this.noBody || (!more && body === null)
    try {
      stream.respond(headers, { endStream })
    } catch (err) {
      // a header node's http2 refuses (the worker's block is opaque until here)
      this.conn.session.hub.log.debug({ err, status }, 'an h2 response head was refused; the stream is reset')
      if (this.attachment !== null) this.attachment.sendAbort(this)
      this.finish()
      stream.close(NGHTTP2_INTERNAL_ERROR)
      return
    }
    if (more) {
      if (body !== null) {
        if (this.noBody) this.dropBody(body.length)
        else this.writeBody(body, body.length)
      }
      return
    }
    this.finish()
    if (!endStream) {
      if (body !== null && !this.noBody) this.writeBody(body, 0)
      stream.end()
    }
    this.closeIfBodyLeft()
  }

  dropBody (n) {
    this.attachment.sendCredit(this, n) // (granted at once: not held)
  }

  /** The worker's last RES_BODY (HubRequest.resBody): the stream ends. */
  bodyEnded () {
    this.finish()
    if (!this.noBody && !this.stream.destroyed) this.stream.end()
    this.closeIfBodyLeft()
  }

  /**
   * Body bytes (a Buffer or a list of them) to the stream; `ack` of them used the
   * worker's credit, which comes back as the client takes bytes (track).
   */
  writeBody (body, ack) {
    this.resCredit -= ack
    const stream = this.stream
    if (stream.destroyed) return
    if (Array.isArray(body)) {
      for (let i = 0; i < body.length; i++) stream.write(body[i], this.sentBound)
    } else {
      stream.write(body, this.sentBound)
    }
    this.track()
  }

  // -------------------------------------------------------------------------
  // the held-bytes budget (the file's head)

  /** Dispatched (attachment-connection.js): the worker has GRANTED_WINDOW_START, and more while the budget has room. */
  windowStarted () {
    this.resCredit = GRANTED_WINDOW_START
    this.win = GRANTED_WINDOW_START
    this.recharge()
    const more = Math.min(START_WINDOW - GRANTED_WINDOW_START, HELD_BUDGET - this.conn.session.charged)
    if (more > 0) {
      this.win += more
      this.resCredit += more
      this.recharge()
      this.attachment.sendCredit(this, more)
    }
  }

  /**
   * Its stream's buffer changed: a write, or bytes went to the client's socket (a write's
   * callback: node's http2 stream calls it once nghttp2 sent the DATA). What was sent
   * grows the window as far as the budget goes, and the worker gets its credit back.
   */
  track () {
    const stream = this.stream
    const held = stream.destroyed ? 0 : stream.writableLength
    const sent = stream.destroyed ? 0 : this.held - held
    this.held = held
    const w = this.attachment
    if (sent > 0 && w !== null && this.win < RESPONSE_WINDOW) {
      const room = HELD_BUDGET - this.conn.session.charged
      const g = Math.min(sent, RESPONSE_WINDOW - this.win, room)
      if (g > 0) this.win += g
    }
    this.recharge()
    if (sent > 0 && w !== null) {
      // credit goes back in steps of at least ACK_STEP (or half a small window): a stream
      // of small messages (SSE) costs no WINDOW frame each
      const want = this.win - this.held - this.resCredit
      if (want > 0 && want >= Math.min(ACK_STEP, this.win >> 1)) {
        this.resCredit += want
        w.sendCredit(this, want)
      }
    }
  }

  /** Its charge against the connection's budget: its window while at a worker, else what its stream holds. */
  recharge () {
    const c = this.attachment !== null && this.win > this.held ? this.win : this.held
    this.conn.session.charged += c - this.charge
    this.charge = c
  }

  releaseWorker () {
    super.releaseWorker()
    this.recharge()
  }

  mustClose () {
    return false // a response never closes an h2 connection: other streams share it
  }

  /**
   * The hub answers this stream itself (400, 404, 413, 431, 502, 503, ...): the same
   * page as on HTTP/1.1, as HEADERS + DATA. `close` has no meaning on h2 (the stream
   * ends, the connection stays).
   */
  respondLocal (status, variant) {
    if (this.headSent) return
    this.headSent = true
    this.resDone = true
    const stream = this.stream
    if (!this.bodyDone) this.startDiscard()
    if (stream.destroyed || stream.closed) return
    const page = responses.page(status, variant)
    const headers = {
      ':status': status,
      'content-type': 'text/html; charset=us-ascii',
      server: 'httpsys',
      date: clock.date(),
      'content-length': page.body.length
    }
    if (status === 503) headers['retry-after'] = '1'
    try {
      stream.respond(headers, { endStream: this.isHead })
      if (!this.isHead) stream.end(page.body)
    } catch {
      stream.close(NGHTTP2_INTERNAL_ERROR)
      return
    }
    this.closeIfBodyLeft()
  }

  /** Answered from the output cache (output-cache.js): HEADERS (+ DATA), as HubRequest's. */
  respondFromCache (status, reason, lines, body, entry = null, age = 0) {
    if (this.headSent) return
    this.headSent = true
    this.resDone = true
    const stream = this.stream
    if (stream.destroyed || stream.closed) return
    if (entry !== null) {
      lines = entry.lines + 'Content-Length: ' + entry.body.length + '\r\nAge: ' + age + '\r\n'
      body = entry.body
    }
    const headers = headersOf(lines, status)
    const end = body === null || this.isHead
    try {
      stream.respond(headers, { endStream: end })
      if (!end) stream.end(body)
    } catch {
      stream.close(NGHTTP2_INTERNAL_ERROR)
    }
  }

  // The response is complete and the client is still sending a body nobody will read:
  // RST_STREAM(NO_ERROR) once the response is out stops the upload (RFC 9113 8.1: a
  // server may answer before the request is complete and then reset the stream with
  // NO_ERROR). node's close() sends it after the DATA already queued.
  closeIfBodyLeft () {
    if (this.bodyDone || this.stream.destroyed) return
    this.stream.close(NGHTTP2_NO_ERROR)
  }

  startDiscard () {
    this.discard = true
    this.bodyBuf = null
    this.bodyBufBytes = 0
    this.conn.resumeForBody(this)
  }
}

/**
 * A header block ("Name: value\r\n" lines, latin1: the worker's, or an output cache
 * entry's) as node's http2 headers object: names lower case (RFC 9113 8.2.2), repeats
 * as arrays, connection-specific fields dropped.
 */
function headersOf (text, status) {
  const headers = { ':status': status }
  let ls = 0
  while (ls < text.length) {
    let le = text.indexOf('\r\n', ls)
    if (le === -1) le = text.length
    const colon = text.indexOf(':', ls)
    if (colon > ls && colon < le) {
      const name = text.slice(ls, colon).toLowerCase()
      const value = text.slice(colon + 1, le).trim()
      if (!CONNECTION_SPECIFIC.has(name) && name[0] !== ':') {
        const prev = headers[name]
        if (prev === undefined) headers[name] = value
        else if (Array.isArray(prev)) prev.push(value)
        else headers[name] = [prev, value]
      }
    }
    ls = le + 2
  }
  return headers
}

module.exports = { H2Request, headersOf, CONTINUE_SENT }
