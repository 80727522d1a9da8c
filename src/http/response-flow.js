'use strict'

// How a ServerResponse's bytes reach the backend: write() queues, the next tick (or
// end(), uncork(), a drain) flushes; the first flush completes the head (out-head.js)
// and calls respond(), later ones sendBody(). Callbacks, 'drain', 'finish' and 'close'
// are emitted here in node's order. See response.js for the design.

const Stream = require('node:stream')
const { isUint8Array } = require('node:util').types
const { codes } = require('../errors')
const { RESPONSE_MORE, RESPONSE_CLOSE } = require('../wire/contract')
const { frame } = require('./body-frame')
const { H_TE, H_CONN_CLOSE, R_CONTENT_LENGTH } = require('./out-head')
const { kHandle, kState } = require('./symbols')

const HIGH_WATER_MARK = typeof Stream.getDefaultHighWaterMark === 'function'
  ? Stream.getDefaultHighWaterMark(false)
  : 16384

function nop () {}

function writeChunk (res, chunk, encoding, callback, fromEnd) {
  if (typeof callback !== 'function') callback = null
  let len
  if (chunk === null) {
    throw new codes.ERR_STREAM_NULL_VALUES()
  } else if (typeof chunk === 'string') {
    len = -1 // measured only when something needs the byte count
    if (encoding && encoding !== 'utf8' && encoding !== 'utf-8') {
      chunk = Buffer.from(chunk, encoding)
      len = chunk.length
    }
  } else if (Buffer.isBuffer(chunk)) {
    len = chunk.length
  } else if (isUint8Array(chunk)) {
    // the contract takes Buffers: a view over the same memory, no copy
    chunk = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    len = chunk.length
  } else {
    throw new codes.ERR_INVALID_ARG_TYPE({ name: 'chunk', expected: 'of type string or an instance of Buffer or Uint8Array', actual: chunk })
  }

  let err = null
  if (res.finished) err = new codes.ERR_STREAM_WRITE_AFTER_END()
  else if (res.destroyed) err = new codes.ERR_STREAM_DESTROYED({ method: 'write' })
  if (err !== null) {
    if (!res.destroyed) onError(res, err, callback || nop)
    else if (callback !== null) process.nextTick(callback, err)
    return false
  }

  const st = res[kState]
  if (st.head === null) {
    if (fromEnd) {
      // node's end(data): the length is known before the head is made
      st.endHead = true
      st.endLength = len >= 0 ? len : Buffer.byteLength(chunk)
    }
    res._implicitHeader()
  }
  if (!st.hasBody) {
    // HEAD, 204, 304, 1xx: node ignores the body silently, or throws when asked to
    if (st.rejectBody) throw new codes.ERR_HTTP_BODY_NOT_ALLOWED()
    if (callback !== null) process.nextTick(callback)
    return true
  }
  if (res.strictContentLength) {
    if (len < 0) len = Buffer.byteLength(chunk)
    if (strictLength(res, st) && (fromEnd
      ? st.bytesWritten + len !== st.contentLength
      : st.bytesWritten + len > st.contentLength)) {
      throw new codes.ERR_HTTP_CONTENT_LENGTH_MISMATCH({ actual: st.bytesWritten + len, expected: st.contentLength })
    }
    st.bytesWritten += len
  }

  if (st.pending === null) st.pending = [chunk]
  else st.pending.push(chunk)
  st.pendingSize += chunk.length
  // node counts a chunk's framing ("<hex length>\r\n" ... "\r\n") as written too
  if (res.chunkedEncoding && chunk.length > 0) st.pendingSize += chunkFraming(len >= 0 ? len : (typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length))
  if (callback !== null) {
    if (st.callbacks === null) st.callbacks = [callback]
    else st.callbacks.push(callback)
  }
  if (!fromEnd && st.windowOpen && !st.flushQueued && st.corked === 0) {
    st.flushQueued = true
    process.nextTick(flushNT, res)
  }
  return st.windowOpen && st.pendingSize < st.highWaterMark
}

// "<hex length>\r\n" and the "\r\n" after the data
function chunkFraming (n) {
  return (n < 0x10 ? 1 : n < 0x100 ? 2 : n < 0x1000 ? 3 : n < 0x10000 ? 4 : n.toString(16).length) + 4
}

function strictLength (res, st) {
  return res.strictContentLength && st.contentLength >= 0 && st.hasBody &&
    (st.removed & R_CONTENT_LENGTH) === 0 && !res.chunkedEncoding && (st.headBits & H_TE) === 0
}

function flushNT (res) {
  const st = res[kState]
  if (!st.flushQueued) return
  st.flushQueued = false
  if (st.pending !== null && !res.finished && st.corked === 0) flush(res, false, false)
}

/**
 * Hands what is pending to the backend.
 * @param {boolean} final end() ran: this is the last of the response
 * @param {boolean} headOnly flushHeaders(): send the head even without body bytes
 */
function flush (res, final, headOnly) {
  const st = res[kState]
  st.flushQueued = false
  const handle = res[kHandle]
  if (res.destroyed || handle === null || st.finalSent || !st.windowOpen || st.hijacked) return
  const parts = st.pending
  st.pending = null
  st.pendingSize = 0
  const cbs = st.callbacks
  st.callbacks = null
  const req = res.req
  // A request body that has not all arrived (the app answered first): every byte of
  // the response goes out now, and the router hears that the response is complete only
  // when 'finish' comes (server-handle.js finished), once the body is in if the app
  // reads it by then, as node reads a body after its response. A router discards the
  // unread rest of a body once a response is complete. A response made outside a server
  // (written to the socket assignSocket() gave it) has no router to hold back: it ends
  // now, its last empty write included, as node's does.
  const hold = final && !st.direct && !req.complete && !req.destroyed

  let ok
  if (!st.sent) {
    if (parts === null && !final && !headOnly) return
    st.sent = true
    let flags = st.headFlags
    const body = st.hasBody ? frame(parts, res.chunkedEncoding, final ? st.trailer : null) : null
    if (hold) st.heldFlags = flags & RESPONSE_CLOSE
    if (!final || hold) flags |= RESPONSE_MORE
    ok = handle.respond(req, st.status, st.reason, st.head, body, flags)
  } else {
    const body = st.hasBody ? frame(parts, res.chunkedEncoding, final ? st.trailer : null) : null
    if (body === null && !final) return
    let flags = final ? 0 : RESPONSE_MORE
    // (HTTP/2: the connection carries other streams; the head said so already)
    if (final && req.httpVersionMajor < 2 && (!res.shouldKeepAlive || (st.headBits & H_CONN_CLOSE) !== 0)) flags |= RESPONSE_CLOSE
    if (hold) {
      st.heldFlags = flags
      flags |= RESPONSE_MORE
    }
    ok = hold && body === null ? true : handle.sendBody(req, body, flags)
  }
  if (hold) st.holding = true
  if (cbs !== null) process.nextTick(runCallbacks, cbs)
  if (final) {
    st.finalSent = true
    res.emit('prefinish')
    if (st.finishState === 0) {
      st.finishState = 1
      process.nextTick(finishNT, res)
    }
  } else if (ok === false) {
    st.windowOpen = false
  } else if (st.needDrain) {
    process.nextTick(drainNT, res)
  }
}

function runCallbacks (cbs) {
  for (let i = 0; i < cbs.length; i++) cbs[i]()
}

function drainNT (res) {
  const st = res[kState]
  if (st.needDrain && st.windowOpen && st.pending === null && !res.finished && !res.destroyed) {
    st.needDrain = false
    res.emit('drain')
  }
}

function finishNT (res) {
  const st = res[kState]
  if (res._closed) return
  st.finishState = 2
  // the handle lets go first (node's resOnFinish runs before the app's listeners):
  // in a 'finish' listener res.socket is already null, as on node
  const handle = res[kHandle]
  if (handle !== null) handle.finished(res.req)
  st.detached = true
  res.emit('finish')
  process.nextTick(closeNT, res)
}

function closeNT (res) {
  if (!res._closed) {
    res.destroyed = true
    res._closed = true
    res.emit('close')
  }
}

function onError (res, err, callback) {
  if (res.destroyed) return
  process.nextTick(emitErrorNT, res, err, callback)
}

function emitErrorNT (res, err, callback) {
  callback(err)
  if (!res._closed) res.emit('error', err)
}

module.exports = { writeChunk, strictLength, flush, onError, nop, HIGH_WATER_MARK }
