'use strict'

// Drives the hub's RequestParser over one input under a "plan" (how the bytes are cut
// into execute() calls, where handlers pause, whether the caller scribbles over its
// buffers, whether the parser is reused after reset()), records what the handlers saw
// as plain data, and checks the parser's contract on every call. A broken contract
// throws an InvariantError; an exception out of the parser itself is reported as one
// too (kind 'exception'), so the fuzz loop treats both the same way.

const { METHODS: HTTP_METHODS } = require('node:http')
const { RequestParser, ParseError } = require('../../src/hub/http-parser')
const { Rng } = require('./rng')

const STATUSES = new Set([400, 413, 431, 505])
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
const VCHARS = /^[\x21-\x7e]+$/
// field-value after OWS trimming: field-vchar (obs-text included), SP and HTAB inside
const FIELD_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\x20-\x7e\x80-\xff\t]*[\x21-\x7e\x80-\xff])?)?$/
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

/**
 * Runs the parser over `input`.
 * @param {Buffer} input
 * @param {object} plan
 * @param {Array<[number, number]>} plan.splits pieces of input fed to execute(), in order
 * @param {object} [plan.options] parser options
 * @param {number} [plan.pauseProbability=0] per callback, drawn from plan.seed
 * @param {boolean} [plan.pauseOnComplete=false] pause at every onComplete and record where
 *   each message ended (boundaries, stream offsets)
 * @param {boolean} [plan.scribble=false] overwrite each piece after execute() is done with it
 * @param {Buffer} [plan.prefix] fed first, then reset() before the input
 * @param {number} [plan.seed=1]
 * @returns {{ events: Array, boundaries: number[], errored: boolean, errorAt: number, known: string[] }}
 */
function runHub (input, plan) {
  const rng = new Rng(plan.seed || 1, 77)
  const pauseP = plan.pauseProbability || 0
  const events = []
  const boundaries = []
  let parser = null
  let active = false // inside a driver call into the parser
  let errored = false
  let errorAt = -1 // stream offset execute() returned in the call that reported the error
  const known = [] // known bugs (known-bugs.js) seen in heads
  let msg = null // the message in progress: { head, bodyLen }
  let recording = !plan.prefix
  let pauseReason = null

  const maybePause = (what) => {
    if (!recording) return
    if ((what === 'complete' && plan.pauseOnComplete) || (pauseP > 0 && rng.chance(pauseP))) {
      pauseReason = what
      parser.pause()
    }
  }
  const guard = (what) => {
    if (!active) fail('callback-outside-call', `${what} called outside execute()/resume()/finish()`)
    if (errored) fail('callback-after-error', `${what} called after onError`)
  }
  const handlers = {
    onHead (head) {
      guard('onHead')
      if (msg !== null) fail('head-in-message', 'onHead before the previous message completed', { previous: msg.snapshot })
      const snapshot = snapshotHead(head)
      checkHead(head, snapshot, plan.options || {}, known)
      msg = { head, snapshot, bodyLen: 0 }
      if (recording) events.push(['head', snapshot])
      maybePause('head')
    },
    onBody (chunk) {
      guard('onBody')
      if (msg === null) fail('body-without-head', 'onBody outside a message')
      if (!Buffer.isBuffer(chunk)) fail('body-type', 'onBody chunk is not a Buffer')
      if (chunk.length === 0) fail('empty-body-chunk', 'onBody with an empty chunk')
      if (!msg.head.hasBody) fail('body-without-hasBody', 'onBody for a head with hasBody false')
      msg.bodyLen += chunk.length
      if (msg.head.contentLength >= 0 && msg.bodyLen > msg.head.contentLength) {
        fail('body-overrun', `body of ${msg.bodyLen} bytes for Content-Length ${msg.head.contentLength}`)
      }
      if (recording) {
        const last = events[events.length - 1] || []
        const text = chunk.latin1Slice(0, chunk.length)
        if (last[0] === 'body') last[1] += text
        else events.push(['body', text])
      }
      maybePause('body')
    },
    onComplete () {
      guard('onComplete')
      if (msg === null) fail('complete-without-head', 'onComplete outside a message')
      const h = msg.head
      if (h.contentLength >= 0 && msg.bodyLen !== Math.max(0, h.contentLength)) {
        fail('body-length', `body of ${msg.bodyLen} bytes for Content-Length ${h.contentLength}`)
      }
      const t = h.trailers
      if (t !== null && (!h.chunked || !Array.isArray(t) || t.length === 0 || t.length % 2 !== 0)) {
        fail('trailers-shape', 'trailers must be null or a non-empty [name, value, ...] of a chunked message', { trailers: t })
      }
      if (t !== null) checkFields(t, 'trailer')
      if (recording) events.push(['complete', t === null ? null : t.slice()])
      msg = null
      maybePause('complete')
    },
    onError (err) {
      guard('onError')
      if (!(err instanceof ParseError)) fail('error-type', 'onError with something else than a ParseError', { err: String(err) })
      if (!STATUSES.has(err.status)) fail('error-status', `unexpected status ${err.status}`)
      if (typeof err.reason !== 'string' || err.reason === '') fail('error-reason', 'ParseError without a reason')
      if (recording) events.push(['error', err.status, err.reason])
      errored = true
      msg = null
    }
  }

  parser = new RequestParser(plan.options, handlers)
  const call = (fn) => {
    active = true
    try {
      return fn()
    } catch (err) {
      if (err instanceof InvariantError) throw err
      fail('exception', `the parser threw: ${err && err.stack}`)
    } finally {
      active = false
    }
  }

  if (plan.prefix) {
    call(() => parser.execute(plan.prefix))
    call(() => parser.reset())
    if (parser.paused) fail('reset', 'paused after reset()')
    recording = true
    errored = false
    msg = null
  }

  let base = 0
  for (const [a, b] of plan.splits) {
    const piece = plan.scribble ? Buffer.from(input.subarray(a, b)) : input.subarray(a, b)
    let off = 0
    for (let spins = 0; ; spins++) {
      if (spins > piece.length + 1000) fail('no-progress', 'execute() keeps returning without progress')
      const rest = off === 0 ? piece : piece.subarray(off)
      const before = events.length
      const wasErrored = errored
      const n = call(() => parser.execute(rest))
      if (!Number.isInteger(n) || n < 0 || n > rest.length) fail('execute-return', `execute() returned ${n} for ${rest.length} bytes`)
      if (wasErrored && (n !== 0 || events.length !== before)) fail('after-error', 'execute() consumed input after an error')
      off += n
      if (errored) {
        if (!wasErrored) errorAt = base + off
        break
      }
      if (parser.paused) {
        if (pauseReason === 'complete' && plan.pauseOnComplete) boundaries.push(base + off)
        pauseReason = null
        const again = events.length
        const m = call(() => parser.execute(off === 0 ? piece : piece.subarray(off)))
        if (m !== 0 || events.length !== again) fail('paused-execute', 'execute() while paused consumed input or called a handler')
        for (let k = 0; parser.paused; k++) {
          if (k > 1000) fail('no-progress', 'resume() keeps pausing')
          call(() => parser.resume())
          if (parser.paused && pauseReason === 'complete' && plan.pauseOnComplete) boundaries.push(base + off)
          pauseReason = null
        }
        if (off === piece.length) break
        continue
      }
      if (off !== piece.length) fail('short-execute', `execute() consumed ${off} of ${piece.length} bytes without a pause or an error`)
      break
    }
    if (plan.scribble) piece.fill(0xee)
    base += b - a
  }

  const inMessage = msg !== null
  const fin = call(() => parser.finish())
  if (errored) {
    if (fin !== null) fail('finish', 'finish() after an error must return null')
  } else if (fin !== null) {
    if (!(fin instanceof ParseError) || fin.status !== 400) fail('finish', 'finish() returned something else than null or a 400 ParseError')
  } else if (inMessage) {
    fail('finish', 'finish() returned null while a message was in progress (head without onComplete)')
  }
  if (fin !== null && call(() => parser.finish()) !== null) fail('finish', 'finish() reported twice')
  events.push(['finish', fin === null ? null : fin.status])
  return { events, boundaries, errored: errored || fin !== null, errorAt, known }
}

function snapshotHead (head) {
  return {
    method: head.method,
    url: head.url,
    versionMajor: head.versionMajor,
    versionMinor: head.versionMinor,
    rawHeaders: Array.isArray(head.rawHeaders) ? head.rawHeaders.slice() : head.rawHeaders,
    host: head.host,
    contentLength: head.contentLength,
    chunked: head.chunked,
    keepAlive: head.keepAlive,
    expectContinue: head.expectContinue,
    expectOther: head.expectOther,
    upgrade: head.upgrade,
    hasBody: head.hasBody
  }
}

function checkFields (fields, what) {
  if (!Array.isArray(fields) || fields.length % 2 !== 0) fail('head-shape', `${what} fields are not [name, value, ...]`)
  for (let i = 0; i < fields.length; i += 2) {
    if (typeof fields[i] !== 'string' || !TOKEN.test(fields[i])) fail('head-shape', `${what} name is not a token`, { name: fields[i] })
    if (typeof fields[i + 1] !== 'string' || !FIELD_VALUE.test(fields[i + 1])) fail('head-shape', `${what} value is not a trimmed field-value`, { value: fields[i + 1] })
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
 * The head against the README's rules and the parser's documented decisions, computed
 * independently from rawHeaders: anything accepted must satisfy them.
 */
function checkHead (head, s, options, known) {
  if (typeof s.method !== 'string' || !TOKEN.test(s.method)) fail('head-shape', 'method is not a token', { method: s.method })
  if (!HTTP_METHODS.includes(s.method)) fail('readme-rule', 'a method outside http.METHODS accepted', { method: s.method })
  if (s.method === 'CONNECT') fail('readme-rule', 'a CONNECT accepted (the router opens no tunnels)', { url: s.url })
  if (typeof s.url !== 'string' || !VCHARS.test(s.url)) fail('head-shape', 'url is empty or has bytes outside VCHAR', { url: s.url })
  if (!(s.url[0] === '/' || (s.url === '*' && s.method === 'OPTIONS') || ABSOLUTE.test(s.url))) {
    fail('readme-rule', 'request-target neither origin-form, absolute-form nor OPTIONS *', { url: s.url })
  }
  if (s.versionMajor !== 1 || (s.versionMinor !== 0 && s.versionMinor !== 1)) fail('readme-rule', 'version other than 1.0/1.1 accepted')
  if (head.trailers !== null) fail('head-shape', 'head.trailers set at onHead')
  checkFields(s.rawHeaders, 'header')
  const values = (name) => {
    const out = []
    for (let i = 0; i < s.rawHeaders.length; i += 2) if (s.rawHeaders[i].toLowerCase() === name) out.push(s.rawHeaders[i + 1])
    return out
  }
  const hosts = values('host')
  if (s.versionMinor === 1 && hosts.length === 0) fail('readme-rule', 'HTTP/1.1 request without Host accepted')
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
  if (tes.length) {
    const codings = listOf(tes).map((c) => c.toLowerCase())
    if (s.versionMinor !== 1) fail('readme-rule', 'Transfer-Encoding in HTTP/1.0 accepted')
    if (codings[codings.length - 1] !== 'chunked' || codings.filter((c) => c === 'chunked').length !== 1) {
      fail('readme-rule', 'Transfer-Encoding whose final coding is not a single chunked accepted', { tes })
    }
    if (!s.chunked || s.contentLength !== -1) fail('head-field', 'chunked/contentLength do not follow Transfer-Encoding')
  } else if (cls.length) {
    const members = listOf(cls)
    if (members.length === 0 || members.some((m) => !/^[0-9]+$/.test(m))) fail('readme-rule', 'invalid Content-Length accepted', { cls })
    const n = Number(members[0])
    if (members.some((m) => Number(m) !== n)) fail('readme-rule', 'different Content-Length values accepted', { cls })
    if (n > Number.MAX_SAFE_INTEGER || n > (options.maxBodySize ?? Infinity)) fail('readme-rule', 'Content-Length above the limit accepted')
    if (s.chunked || s.contentLength !== n) fail('head-field', 'contentLength is not the Content-Length value', { cls, contentLength: s.contentLength })
  } else if (s.chunked || s.contentLength !== -1) {
    fail('head-field', 'framing without a framing header')
  }
  if (s.hasBody !== (s.chunked || s.contentLength > 0)) fail('head-field', 'hasBody')
  const conn = listOf(values('connection')).map((c) => c.toLowerCase())
  const keepAlive = !conn.includes('close') && (s.versionMinor === 1 || conn.includes('keep-alive'))
  if (s.keepAlive !== keepAlive) fail('head-field', `keepAlive ${s.keepAlive}, expected ${keepAlive}`, { conn })
  const upgrade = conn.includes('upgrade') && values('upgrade').some((v) => v !== '')
  if (s.upgrade !== upgrade) fail('head-field', `upgrade ${s.upgrade}, expected ${upgrade}`)
  const expects = values('expect')
  const cont = expects.some((v) => v.toLowerCase() === '100-continue')
  if (s.expectContinue !== (s.versionMinor === 1 && cont)) fail('head-field', 'expectContinue')
  if (s.expectOther !== (s.versionMinor === 1 && expects.length > 0 && !cont)) fail('head-field', 'expectOther')
}

module.exports = { runHub, Splits, InvariantError, trimOws, listOf, hostPortOk, authorityOf }
