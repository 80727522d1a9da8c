'use strict'

// Wine's HTTP.SYS, the Linux test bed for the Windows backend, lacks two calls: it has
// no HttpSendResponseEntityBody (a stub that aborts) and no HttpCancelHttpRequest
// (docs/wine.md 2.3, 2.4). This attachment works around both and is used only where
// the addon detected Wine (platform.wine); on Windows these paths never run.
//
// - A response sent in pieces is held here and goes out in one HttpSendHttpResponse at
//   its end (the one send Wine supports); src/http's chunked framing is undone so the
//   one complete send carries a length instead.
// - cancel() ends the exchange with a 500 and a connection close instead.
// - Wine writes a Content-Length of its own into every response (docs/wine.md 2.1), so
//   no response goes out with a Transfer-Encoding beside it.

const { STATUS_CODES } = require('node:http')
const { RESPONSE_MORE, RESPONSE_CLOSE, RESPONSE_OPAQUE } = require('../../wire/contract')
const { kRespond, kSendBody, kCancel } = require('../attachment-base')
const { HttpSysAttachment, unframed, without } = require('./attachment')

class WineAttachment extends HttpSysAttachment {
  [kRespond] (id, st, statusCode, reason, headers, body, flags, cacheTtl) {
    if (this.platform.features.streaming || (flags & RESPONSE_OPAQUE) !== 0) {
      return super[kRespond](id, st, statusCode, reason, headers, body, flags, cacheTtl)
    }
    st.held = { statusCode, reason, headers, chunks: body !== null ? [body] : [], cacheTtl, close: flags & RESPONSE_CLOSE }
    if ((flags & RESPONSE_MORE) === 0) this.sendHeld(id, st, flags)
    return 0
  }

  [kSendBody] (id, st, chunk, flags) {
    if (st.held === undefined || st.held === null) return super[kSendBody](id, st, chunk, flags)
    if (chunk !== null) st.held.chunks.push(chunk)
    if ((flags & RESPONSE_MORE) === 0) this.sendHeld(id, st, flags)
    return 0
  }

  [kCancel] (id, st) {
    if (this.platform.features.cancel) return super[kCancel](id, st)
    // Not answered yet (or held): end the exchange and ask for the close.
    if (!st.responded || st.held) {
      this.issued(id, this.native.respond(id, 500, STATUS_CODES[500], ['Content-Length', '0'], null, RESPONSE_CLOSE, 0), 0)
    }
  }

  sendHeld (id, st, flags) {
    const held = st.held
    st.held = null
    let headers = held.headers
    let body = held.chunks.map(toBuffer)
    const bare = unframed(headers, Buffer.concat(body))
    if (bare !== null) {
      headers = bare.headers
      body = [bare.body]
    } else {
      // nothing to unframe (a HEAD or 204 answer declared chunked has no body): the
      // header goes anyway, since Wine's Content-Length beside it makes the response
      // one clients refuse (node: HPE_INVALID_CONTENT_LENGTH)
      headers = without(headers, 'transfer-encoding')
    }
    const bytes = body.reduce((n, b) => n + b.length, 0)
    this.issued(id, this.native.respond(id, held.statusCode, held.reason, headers, body, (flags | held.close) & RESPONSE_CLOSE, held.cacheTtl), bytes)
  }
}

function toBuffer (chunk) {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
}

module.exports = { WineAttachment }
