'use strict'

// Header rules shared by IncomingMessage and ServerResponse: node's token/value
// validation (same codes and messages as node's http module), node's rules for folding
// repeated request headers into `req.headers`, and the cached Date header value.
// https://nodejs.org/api/http.html#messageheaders

const { codes } = require('../errors')

// RFC 9110 5.6.2 token; node's http module accepts exactly this set.
const TOKEN = /^[\^_`a-zA-Z\-0-9!#$%&'*+.|~]+$/
// RFC 9110 5.5 field-value: HTAB, visible ASCII, space, obs-text.
const INVALID_VALUE_CHAR = /[^\t\x20-\x7e\x80-\xff]/

function isToken (s) {
  return TOKEN.test(s)
}

/** @returns {boolean} true when the value holds a character a header may not carry */
function hasInvalidChar (value) {
  return INVALID_VALUE_CHAR.test(value)
}

function validateHeaderName (name, label = 'Header name') {
  if (typeof name !== 'string' || name === '' || !TOKEN.test(name)) {
    throw new codes.ERR_INVALID_HTTP_TOKEN({ label, value: name })
  }
}

function validateHeaderValue (name, value) {
  if (value === undefined) {
    throw new codes.ERR_HTTP_INVALID_HEADER_VALUE({ value, header: name })
  }
  if (INVALID_VALUE_CHAR.test(value)) {
    throw new codes.ERR_INVALID_CHAR({ field: 'header content', header: name })
  }
}

function validateString (value, name) {
  if (typeof value !== 'string') {
    throw new codes.ERR_INVALID_ARG_TYPE({ name, expected: 'of type string', actual: value })
  }
}

// How node folds a repeated request header into req.headers (see message.headers in
// the docs): these keep their first value, set-cookie becomes an array, cookie is
// joined with '; ', everything else with ', '.
const DROP = 1
const SET_COOKIE = 2
const COOKIE = 3
const FOLD = { __proto__: null, 'set-cookie': SET_COOKIE, cookie: COOKIE }
for (const name of [
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from',
  'host', 'if-modified-since', 'if-unmodified-since', 'last-modified', 'location',
  'max-forwards', 'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent'
]) FOLD[name] = DROP

/**
 * req.headers from raw pairs, with node's folding rules.
 * @param {string[]} raw [name, value, ...]
 * @param {boolean} joinDuplicates createServer({ joinDuplicateHeaders }): join even
 *   the single-valued ones with ', '
 * @returns {object} a plain object, as node's (not null-prototype)
 */
function buildHeaders (raw, joinDuplicates) {
  const out = {}
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase()
    const value = raw[i + 1]
    const kind = FOLD[name]
    // typeof checks (not `in`) so names such as "constructor" behave as in node
    if (kind === SET_COOKIE) {
      const prev = out[name]
      if (Array.isArray(prev)) prev.push(value)
      else out[name] = [value]
    } else if (typeof out[name] !== 'string') {
      out[name] = value
    } else if (kind === COOKIE) {
      out[name] += '; ' + value
    } else if (kind !== DROP || joinDuplicates) {
      out[name] += ', ' + value
    }
  }
  return out
}

/** req.headersDistinct: every value of every header, as arrays. */
function buildDistinct (raw) {
  const out = Object.create(null)
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase()
    const prev = out[name]
    if (prev === undefined) out[name] = [raw[i + 1]]
    else prev.push(raw[i + 1])
  }
  return out
}

// The Date header changes once a second; formatting it per response would cost more
// than the rest of a hello-world response head.
let dateCache = ''

function utcDate () {
  if (dateCache === '') {
    const now = Date.now()
    dateCache = new Date(now).toUTCString()
    setTimeout(resetDate, 1000 - (now % 1000)).unref()
  }
  return dateCache
}

function resetDate () {
  dateCache = ''
}

module.exports = {
  isToken,
  hasInvalidChar,
  validateHeaderName,
  validateHeaderValue,
  validateString,
  buildHeaders,
  buildDistinct,
  utcDate
}
