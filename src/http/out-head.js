'use strict'

// The response head as node builds it (lib/_http_outgoing.js, _storeHeader): raw
// header pairs from the setHeader() store or from writeHead()'s argument, the headers
// node interprets on the way (Content-Length, Transfer-Encoding, Connection, Date,
// Trailer), and, at the first flush, the Date and framing headers node would add.

const { codes } = require('../errors')
const { RESPONSE_CLOSE, RESPONSE_KEEP_OPEN } = require('../wire/contract')
const { validateHeaderName, validateHeaderValue, utcDate } = require('./headers')
const { kState, kHandle } = require('./symbols')

// node's own patterns for the headers it interprets
const RE_CONN_CLOSE = /(?:^|\W)close(?:$|\W)/i
const RE_TE_CHUNKED = /(?:^|\W)chunked(?:$|\W)/i

// head bits gathered while the head is built (node's _storeHeader state)
const H_CONTENT_LENGTH = 1
const H_TE = 2
const H_TE_CHUNKED = 4
const H_DATE = 8
const H_CONNECTION = 16
const H_CONN_CLOSE = 32
const H_TRAILER = 64
const H_KEEP_ALIVE = 128 // the app set Keep-Alive itself: node adds none (_defaultKeepAlive)
// a Cache-Control header: without a config rule for its path, a response with none is
// never cached (src/cache/rules.js responseTtl), and its headers are not looked at again
const H_CACHE_CONTROL = 256

// removeHeader() of these stops node adding them itself
const R_CONNECTION = 1
const R_CONTENT_LENGTH = 2
const R_TE = 4

/**
 * Completes the head as node's _storeHeader does when the head is made (writeHead(),
 * or implicitly by the first write() or by end()): Date, Connection, Keep-Alive and
 * the framing. Only a head end() made knows the body (st.endLength): Content-Length.
 * @returns {number} respond() flags (RESPONSE_CLOSE, RESPONSE_KEEP_OPEN or 0)
 */
function finishHead (res, st) {
  const raw = st.head
  const bits = st.headBits
  if (res.sendDate && (bits & H_DATE) === 0) raw.push('Date', utcDate())
  if (res.req && res.req.httpVersionMajor >= 2) return finishHttp2Head(res, st, raw, bits)
  // 204/304 with an app-set chunked Transfer-Encoding: node drops the zero chunk and
  // closes, so that a proxy is never confused about where the message ends
  if ((bits & H_TE_CHUNKED) !== 0 && (res.statusCode === 204 || res.statusCode === 304)) res.shouldKeepAlive = false
  // a removed Connection header is only not said: the connection stays as it would (node)
  let close = !res.shouldKeepAlive || (bits & H_CONN_CLOSE) !== 0
  let keepOpen = 0

  // node's keep-alive header (_storeHeader): said unless the app set or removed one
  if ((bits & H_CONNECTION) === 0 && (st.removed & R_CONNECTION) === 0) {
    const keepAlive = res.shouldKeepAlive && ((bits & H_CONTENT_LENGTH) !== 0 || res.useChunkedEncodingByDefault)
    if (keepAlive && res.maxRequestsOnConnectionReached) {
      raw.push('Connection', 'close')
      if (!st.lastKeepsOpen) close = true
      else if (!close) keepOpen = RESPONSE_KEEP_OPEN
    } else if (keepAlive) {
      raw.push('Connection', 'keep-alive')
      const timeout = (bits & H_KEEP_ALIVE) === 0 ? keepAliveSeconds(res) : 0
      if (timeout > 0) raw.push('Keep-Alive', `timeout=${timeout}${maxRequestsOf(res)}`)
    } else {
      raw.push('Connection', 'close')
      close = true
    }
  }

  // framing, in node's order: no body; the app's Content-Length or Transfer-Encoding;
  // HTTP/1.0 (the end of the connection ends the body); a length only when end()
  // itself made the head (its whole body known); else chunked
  if (!st.hasBody) {
    res.chunkedEncoding = false
  } else if ((bits & H_CONTENT_LENGTH) !== 0) {
    res.chunkedEncoding = false
  } else if ((bits & H_TE) !== 0) {
    res.chunkedEncoding = (bits & H_TE_CHUNKED) !== 0
    if (!res.chunkedEncoding) close = true
  } else if (!res.useChunkedEncodingByDefault) {
    close = true
  } else if (st.endHead && (bits & H_TRAILER) === 0 && (st.removed & R_CONTENT_LENGTH) === 0) {
    raw.push('Content-Length', String(st.endLength))
  } else if ((st.removed & R_TE) === 0) {
    raw.push('Transfer-Encoding', 'chunked')
    res.chunkedEncoding = true
  } else {
    close = true
  }
  // a Trailer header needs chunked framing to carry the trailers (node throws)
  if ((bits & H_TRAILER) !== 0 && res.chunkedEncoding !== true) throw new codes.ERR_HTTP_TRAILER_INVALID()
  if (close) res.shouldKeepAlive = false
  return close ? RESPONSE_CLOSE : keepOpen
}

// ", max=N" of the Keep-Alive header when the server limits requests per connection
function maxRequestsOf (res) {
  const handle = res[kHandle]
  const max = handle && handle.server ? handle.server.maxRequestsPerSocket : 0
  return max > 0 ? `, max=${max}` : ''
}

// Keep-Alive: timeout=N, from the server's keepAliveTimeout (node: only for a response
// of a server; one made outside a server says none)
function keepAliveSeconds (res) {
  const handle = res[kHandle]
  const server = handle && handle.server
  if (!server) return 0
  const ms = Number(server.keepAliveTimeout)
  return ms > 0 ? Math.floor(ms / 1000) : 0
}

// RFC 9113 8.2.2: connection-specific header fields are malformed in HTTP/2 (HTTP.SYS
// negotiates h2 on https bindings and serves an HTTP/1.1 app's response over it).
const CONNECTION_SPECIFIC = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'])

/**
 * HTTP/2 (and 3): the router frames the body in DATA frames, so there is no chunked
 * framing and no Connection header; an app's own ones are dropped rather than sent
 * malformed. A length is still given when the whole body is known. A connection carries
 * other streams: a response never asks to close it.
 */
function finishHttp2Head (res, st, raw, bits) {
  for (let i = raw.length - 2; i >= 0; i -= 2) {
    if (CONNECTION_SPECIFIC.has(String(raw[i]).toLowerCase())) raw.splice(i, 2)
  }
  res.chunkedEncoding = false
  if (st.hasBody && st.endHead && (bits & (H_CONTENT_LENGTH | H_TRAILER)) === 0 && (st.removed & R_CONTENT_LENGTH) === 0) {
    raw.push('Content-Length', String(st.endLength))
  }
  return 0
}

/**
 * Raw pairs from the setHeader() store, with node's rules: arrays become repeated
 * headers, except a cookie array which is joined with '; '.
 * @returns {number} head bits
 */
function storedHeaders (res, raw, headers) {
  let bits = 0
  const keys = Object.keys(headers)
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]
    const entry = headers[key]
    const name = entry[0]
    const value = entry[1]
    if (Array.isArray(value)) {
      if (value.length < 2 || (key !== 'cookie' && !isUnique(res, key))) {
        for (let i = 0; i < value.length; i++) {
          raw.push(name, String(value[i]))
          bits |= matchHeader(res, key, value[i])
        }
        continue
      }
      raw.push(name, value.join('; '))
    } else {
      raw.push(name, String(value))
    }
    bits |= matchHeader(res, key, value)
  }
  return bits
}

// what a response head takes on the wire ("HTTP/1.1 200 OK\r\n", "Name: value\r\n"
// each, the blank line): req.socket.bytesWritten and res.writableLength count it, as node's
function headBytes (status, message, rawHeaders) {
  let n = 17 + (message ? message.length : 0)
  for (let i = 0; i < rawHeaders.length; i++) n += String(rawHeaders[i]).length + 2
  return n
}

// the server's uniqueHeaders option: several values of these go out on one line
function isUnique (res, key) {
  const unique = res[kState].unique
  return unique !== null && unique.has(key)
}

/** Raw pairs from writeHead(status, headers) alone: an object, [k, v, ...] or [[k, v]]. */
function givenHeaders (res, raw, obj) {
  let bits = 0
  if (Array.isArray(obj)) {
    if (obj.length > 0 && Array.isArray(obj[0])) {
      for (let i = 0; i < obj.length; i++) bits |= given(res, raw, obj[i][0], obj[i][1])
    } else {
      if (obj.length % 2 !== 0) throw new codes.ERR_INVALID_ARG_VALUE({ name: 'headers', value: obj })
      for (let i = 0; i < obj.length; i += 2) bits |= given(res, raw, obj[i], obj[i + 1])
    }
    return bits
  }
  for (const key in obj) {
    if (Object.prototype.hasOwnProperty.call(obj, key)) bits |= given(res, raw, key, obj[key])
  }
  return bits
}

function given (res, raw, name, value) {
  validateHeaderName(name)
  let bits = 0
  if (Array.isArray(value)) {
    if (value.length < 2 || ((name.length !== 6 || name.toLowerCase() !== 'cookie') && !isUnique(res, name.toLowerCase()))) {
      for (let i = 0; i < value.length; i++) {
        validateHeaderValue(name, value[i])
        raw.push(name, String(value[i]))
        bits |= matchHeader(res, null, value[i], name)
      }
      return bits
    }
    value = value.join('; ')
  }
  validateHeaderValue(name, value)
  raw.push(name, String(value))
  return matchHeader(res, null, value, name)
}

/**
 * The headers node interprets while storing the head.
 * @param {string|null} key lower-cased name when known
 * @returns {number} head bits
 */
function matchHeader (res, key, value, name) {
  if (key === null) {
    if (name.length < 4 || name.length > 17) return 0
    key = name.toLowerCase()
  }
  const st = res[kState]
  switch (key) {
    case 'content-length':
      st.removed &= ~R_CONTENT_LENGTH
      st.contentLength = Number(value)
      return H_CONTENT_LENGTH
    case 'transfer-encoding':
      st.removed &= ~R_TE
      return RE_TE_CHUNKED.test(value) ? H_TE | H_TE_CHUNKED : H_TE
    case 'connection':
      st.removed &= ~R_CONNECTION
      if (RE_CONN_CLOSE.test(value)) return H_CONNECTION | H_CONN_CLOSE
      res.shouldKeepAlive = true
      return H_CONNECTION
    case 'date':
      return H_DATE
    case 'trailer':
      return H_TRAILER
    case 'keep-alive':
      return H_KEEP_ALIVE
    case 'cache-control':
      return H_CACHE_CONTROL
    default:
      return 0
  }
}

module.exports = {
  storedHeaders,
  givenHeaders,
  finishHead,
  headBytes,
  RE_TE_CHUNKED,
  H_TE,
  H_CONN_CLOSE,
  H_CACHE_CONTROL,
  R_CONNECTION,
  R_CONTENT_LENGTH,
  R_TE
}
