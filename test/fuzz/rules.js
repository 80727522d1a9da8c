'use strict'

// What the fuzzer checks on any parser's events, independently of the parser: the
// README's router rules and the parser's documented decisions, read again from each
// accepted head's rawHeaders (checkHead), and the order of events (checkEvents). Used
// for the Go parser (go-driver.js).

const { METHODS: HTTP_METHODS } = require('node:http')

const STATUSES = new Set([400, 413, 431, 505])
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const VCHARS = /^[\x21-\x7e]+$/
// field-value after OWS trimming: field-vchar (obs-text included), SP and HTAB inside
const FIELD_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\x20-\x7e\x80-\xff\t]*[\x21-\x7e\x80-\xff])?)?$/
// the same for a lenient parser (node's insecureHTTPParser): any byte but CR and LF
const FIELD_VALUE_LENIENT = /^(?:[^\r\n \t](?:[^\r\n]*[^\r\n \t])?)?$/
const HOST_VALUE = /^[0-9A-Za-z\-._~%!$&'()*+,;=:[\]]*$/
// the Host port rule (issue 23, RFC 3986 3.2.3 port = *DIGIT): digits after an IP
// literal's "]" or after the first ":", nothing else; for Host and an absolute-form
// target's authority alike
const HOST_PORT = /^(?:\[[^\]]*\](?::[0-9]*)?|(?!\[)[^:]*(?::[0-9]*)?)$/
const hostPortOk = (host) => HOST_PORT.test(host)
// the authority of a `scheme://` target: to the first "/", "?" or "#" after the "//"
const authorityOf = (url) => /^[^:]*:\/\/([^/?#]*)/.exec(url)[1]
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+\-.]*:\/\//

class InvariantError extends Error {
  constructor (kind, message, details) {
    super(`${kind}: ${message}`)
    this.kind = kind
    this.details = details
  }
}

function fail (kind, message, details) {
  throw new InvariantError(kind, message, details)
}

/** Splits `len` bytes into [start, end) pieces. */
const Splits = {
  whole: (len) => [[0, len]],
  bytes (len) {
    const out = []
    for (let i = 0; i < len; i++) out.push([i, i + 1])
    return out.length ? out : [[0, 0]]
  },
  random (len, rng, maxPiece) {
    const out = []
    let i = 0
    while (i < len) {
      const n = Math.min(len - i, rng.range(1, maxPiece))
      out.push([i, i + n])
      i += n
    }
    return out.length ? out : [[0, 0]]
  },
  cuts (len, rng, k) {
    const points = new Set()
    for (let j = 0; j < k; j++) points.add(rng.int(len + 1))
    const sorted = [0, ...[...points].sort((a, b) => a - b), len]
    const out = []
    for (let j = 1; j < sorted.length; j++) if (sorted[j] > sorted[j - 1]) out.push([sorted[j - 1], sorted[j]])
    return out.length ? out : [[0, 0]]
  }
}

function checkFields (fields, what, lenient = false) {
  if (!Array.isArray(fields) || fields.length % 2 !== 0) fail('head-shape', `${what} fields are not [name, value, ...]`)
  const value = lenient ? FIELD_VALUE_LENIENT : FIELD_VALUE
  for (let i = 0; i < fields.length; i += 2) {
    if (typeof fields[i] !== 'string' || !TOKEN.test(fields[i])) fail('head-shape', `${what} name is not a token`, { name: fields[i] })
    if (typeof fields[i + 1] !== 'string' || !value.test(fields[i + 1])) fail('head-shape', `${what} value is not a trimmed field-value`, { value: fields[i + 1] })
  }
}

/** A string without its leading and trailing SP/HTAB (OWS), in linear time: a regex like
 * /[ \t]+$/ backtracks quadratically over long runs of spaces inside the string. */
function trimOws (s) {
  let a = 0
  let b = s.length
  while (a < b && (s.charCodeAt(a) === 32 || s.charCodeAt(a) === 9)) a++
  while (b > a && (s.charCodeAt(b - 1) === 32 || s.charCodeAt(b - 1) === 9)) b--
  return s.slice(a, b)
}

// list members (RFC 9110 5.6.1), trimmed of OWS only: String#trim() would also strip NBSP (0xa0)
const listOf = (values) => values.flatMap((v) => v.split(',')).map(trimOws).filter((e) => e !== '')

/**
 * The head (a snapshot: method, url, versions, rawHeaders, host, contentLength,
 * chunked, keepAlive, expectContinue, expectOther, upgrade, hasBody) against the README's rules and the parser's documented decisions, computed
 * independently from rawHeaders: anything accepted must satisfy them. The options of a
 * port a standalone server owns relax some, as node's server does: `requireHost` false
 * (no Host needed), `strictHost` false (any Host and authority), `connect` (CONNECT
 * served: any target, no body, upgrade), `lenient` (insecureHTTPParser: a header value
 * may hold any byte but CR and LF).
 */
function checkHead (s, options, known) {
  const connect = s.method === 'CONNECT'
  if (typeof s.method !== 'string' || !TOKEN.test(s.method)) fail('head-shape', 'method is not a token', { method: s.method })
  if (!HTTP_METHODS.includes(s.method)) fail('readme-rule', 'a method outside http.METHODS accepted', { method: s.method })
  if (connect && !options.connect) fail('readme-rule', 'a CONNECT accepted (the router opens no tunnels)', { url: s.url })
  if (typeof s.url !== 'string' || !VCHARS.test(s.url)) fail('head-shape', 'url is empty or has bytes outside VCHAR', { url: s.url })
  if (!(connect || s.url[0] === '/' || (s.url === '*' && s.method === 'OPTIONS') || ABSOLUTE.test(s.url))) {
    fail('readme-rule', 'request-target neither origin-form, absolute-form nor OPTIONS *', { url: s.url })
  }
  if (s.versionMajor !== 1 || (s.versionMinor !== 0 && s.versionMinor !== 1)) fail('readme-rule', 'version other than 1.0/1.1 accepted')
  checkFields(s.rawHeaders, 'header', options.lenient)
  const values = (name) => {
    const out = []
    for (let i = 0; i < s.rawHeaders.length; i += 2) if (s.rawHeaders[i].toLowerCase() === name) out.push(s.rawHeaders[i + 1])
    return out
  }
  const hosts = values('host')
  if (options.requireHost !== false && s.versionMinor === 1 && hosts.length === 0) fail('readme-rule', 'HTTP/1.1 request without Host accepted')
  if (hosts.some((h) => h !== hosts[0])) fail('readme-rule', 'different Host values accepted', { hosts })
  // strictHost false (a server that owns its port): any Host, any authority, as on node
  const strict = options.strictHost !== false
  if (strict && hosts.length && !HOST_VALUE.test(hosts[0])) fail('readme-rule', 'invalid Host value accepted', { host: hosts[0] })
  if (strict && hosts.length && !hostPortOk(hosts[0])) fail('readme-rule', 'a Host whose port is not digits accepted', { host: hosts[0] })
  if (strict && ABSOLUTE.test(s.url) && !hostPortOk(authorityOf(s.url))) {
    fail('readme-rule', 'an absolute-form target whose port is not digits accepted', { url: s.url })
  }
  if (s.host !== (hosts[0] || '')) fail('head-field', 'host is not the first Host value')
  const cls = values('content-length')
  const tes = values('transfer-encoding')
  if (cls.length && tes.length) fail('readme-rule', 'Content-Length and Transfer-Encoding both accepted')
  let chunked = false
  let contentLength = -1
  if (tes.length) {
    const codings = listOf(tes).map((c) => c.toLowerCase())
    if (s.versionMinor !== 1) fail('readme-rule', 'Transfer-Encoding in HTTP/1.0 accepted')
    if (codings[codings.length - 1] !== 'chunked' || codings.filter((c) => c === 'chunked').length !== 1) {
      fail('readme-rule', 'Transfer-Encoding whose final coding is not a single chunked accepted', { tes })
    }
    chunked = true
  } else if (cls.length) {
    const members = listOf(cls)
    if (members.length === 0 || members.some((m) => !/^[0-9]+$/.test(m))) fail('readme-rule', 'invalid Content-Length accepted', { cls })
    const n = Number(members[0])
    if (members.some((m) => Number(m) !== n)) fail('readme-rule', 'different Content-Length values accepted', { cls })
    if (n > Number.MAX_SAFE_INTEGER || n > (options.maxBodySize ?? Infinity)) fail('readme-rule', 'Content-Length above the limit accepted')
    contentLength = n
  }
  // CONNECT has no body: the bytes after its head are the tunnel's (its framing headers are still checked)
  if (connect) {
    chunked = false
    contentLength = -1
  }
  if (s.chunked !== chunked || s.contentLength !== contentLength) {
    fail('head-field', 'chunked/contentLength do not follow the framing headers', { cls, tes, chunked: s.chunked, contentLength: s.contentLength })
  }
  if (s.hasBody !== (s.chunked || s.contentLength > 0)) fail('head-field', 'hasBody')
  const conn = listOf(values('connection')).map((c) => c.toLowerCase())
  const keepAlive = !conn.includes('close') && (s.versionMinor === 1 || conn.includes('keep-alive'))
  if (s.keepAlive !== keepAlive) fail('head-field', `keepAlive ${s.keepAlive}, expected ${keepAlive}`, { conn })
  const upgrade = connect || (conn.includes('upgrade') && values('upgrade').some((v) => v !== ''))
  if (s.upgrade !== upgrade) fail('head-field', `upgrade ${s.upgrade}, expected ${upgrade}`)
  const expects = values('expect')
  const cont = expects.some((v) => v.toLowerCase() === '100-continue')
  if (s.expectContinue !== (s.versionMinor === 1 && cont)) fail('head-field', 'expectContinue')
  if (s.expectOther !== (s.versionMinor === 1 && expects.length > 0 && !cont)) fail('head-field', 'expectOther')
}

/**
 * A run's events ([head, s] [body, text]* [complete, trailers] ..., then at most one
 * [error, status, reason], then [finish, status|null]) against the contract the JS
 * driver checks in its handlers: one terminal verdict per request, bodies only for
 * heads with hasBody and matching Content-Length, trailers only on chunked messages,
 * a finish() 400 exactly when a request was left in progress. Every head goes through
 * checkHead.
 */
function checkEvents (events, options, known) {
  let msg = null // { head, bodyLen }
  let errored = false
  for (let i = 0; i < events.length; i++) {
    const e = events[i]
    if (errored && e[0] !== 'finish') fail('event-after-error', `${e[0]} after an error`)
    if (e[0] === 'finish' && i !== events.length - 1) fail('finish', 'finish is not the last event')
    switch (e[0]) {
      case 'head':
        if (msg !== null) fail('head-in-message', 'a head before the previous message completed', { previous: msg.head })
        checkHead(e[1], options, known)
        msg = { head: e[1], bodyLen: 0 }
        break
      case 'body':
        if (msg === null) fail('body-without-head', 'a body outside a message')
        if (typeof e[1] !== 'string' || e[1] === '') fail('empty-body-chunk', 'an empty body')
        if (!msg.head.hasBody) fail('body-without-hasBody', 'a body for a head with hasBody false')
        msg.bodyLen += e[1].length
        if (msg.head.contentLength >= 0 && msg.bodyLen > msg.head.contentLength) {
          fail('body-overrun', `body of ${msg.bodyLen} bytes for Content-Length ${msg.head.contentLength}`)
        }
        break
      case 'complete': {
        if (msg === null) fail('complete-without-head', 'a complete outside a message')
        const h = msg.head
        if (h.contentLength >= 0 && msg.bodyLen !== Math.max(0, h.contentLength)) {
          fail('body-length', `body of ${msg.bodyLen} bytes for Content-Length ${h.contentLength}`)
        }
        const t = e[1]
        if (t !== null && (!h.chunked || !Array.isArray(t) || t.length === 0 || t.length % 2 !== 0)) {
          fail('trailers-shape', 'trailers must be null or a non-empty [name, value, ...] of a chunked message', { trailers: t })
        }
        if (t !== null) checkFields(t, 'trailer', options.lenient)
        msg = null
        break
      }
      case 'error':
        if (!STATUSES.has(e[1])) fail('error-status', `unexpected status ${e[1]}`)
        if (typeof e[2] !== 'string' || e[2] === '') fail('error-reason', 'an error without a reason')
        errored = true
        msg = null
        break
      case 'finish':
        if (errored && e[1] !== null) fail('finish', 'finish() after an error must report nothing')
        if (!errored && msg !== null && e[1] !== 400) fail('finish', 'finish() reported nothing while a message was in progress (head without complete)')
        if (e[1] !== null && e[1] !== 400) fail('finish', `finish() reported ${e[1]}`)
        break
      default:
        fail('event', `unknown event ${JSON.stringify(e)}`)
    }
  }
  if (events.length === 0 || events[events.length - 1][0] !== 'finish') fail('finish', 'the run does not end with finish')
}

module.exports = { InvariantError, fail, Splits, STATUSES, checkFields, checkHead, checkEvents, trimOws, listOf, hostPortOk, authorityOf }
