'use strict'

// A worker's attachment to an HTTP.SYS request queue: the transport under
// attachment-base.js, over the addon's Queue (native/src/queue.h):
//
//   queue.start(onEvents)   batches arrive as a flat [type, id, arg, type, id, arg, ...]
//   queue.respond / sendBody / readBody / cancel -> Win32 code (0: issued)
//   queue.stopReceiving(), queue.close(), queue.ref(), queue.unref(), queue.info()
//
// Every send the addon issues ends in exactly one SENT event (its Win32 code), which is
// how the response window reopens and how close() knows when the kernel has finished
// the responses already handed over.

const { METHODS, STATUS_CODES } = require('node:http')
const { RESPONSE_MORE, RESPONSE_CLOSE, RESPONSE_OPAQUE } = require('../../wire/contract')
const { unchunk } = require('../../wire/chunked')
const { canonicalizeTarget, prefixPathMatcher } = require('../../urlprefix')
const {
  AttachmentBase, RequestState, byteLength, kReadBody, kRespond, kSendBody, kContinue, kCancel,
  kDetach, kClose, kRef
} = require('../attachment-base')
const { TokenIdentities } = require('./token-identities')

// Response bytes a request may have in flight before respond()/sendBody() say "wait".
const RESPONSE_WINDOW = 256 * 1024
// close() lets the kernel finish the responses already handed over (a large download to
// a slow client) until just before the supervisor would kill the process (its
// kill_timeout: HTTPSYS_KILL_TIMEOUT), then cancels them, so the process still ends by
// itself; the margin is the preload's for upgraded sockets (src/register.js).
// Standalone nothing kills it: as node's server.close(), it waits for them.
const CLOSE_MARGIN_MS = 500
// The methods a request may have (README "The router's rules"): node's, as the hub's
// parser allows them. HTTP.SYS passes any verb through (HttpVerbUnknown).
const KNOWN_METHODS = new Set(METHODS)

class HttpSysRequestState extends RequestState {
  constructor (req) {
    super(req)
    this.closeAfter = false // respond(MORE | CLOSE): the last piece carries the close
    this.requestHeaders = req.rawHeaders // a 401's Basic challenge names the Host (auth-gate.js)
  }
}

class HttpSysAttachment extends AttachmentBase {
  /**
   * @param {object} native the addon's Queue
   * @param {object} platform { wine, features, events, errors } of the addon
   * @param {object} handlers
   * @param {object} info { queue, urls, ports }
   * @param {object} errors how the ends of an attachment are worded (errors.js)
   * @param {(code: number) => Error} errors.receiveFailed receiving stopped with this Win32 code
   * @param {() => Error} errors.queueClosed the queue was closed under the worker
   * @param {object} [options]
   * @param {number} [options.maxBodySize=Infinity] request body bytes beyond which the
   *   request is answered 413 here (HTTP.SYS has no such limit; the hub enforces its own)
   * @param {((req: object) => object|null)|null} [options.clientCerts] the client
   *   certificate policy of a request (client-certs.js policyLookup), null: none asked
   * @param {number} [options.killTimeout=Infinity] ms a stop gives this process before
   *   it is killed: how long close() lets the sends already in the kernel finish
   * @param {import('../auth-gate').AuthGate|null} [options.auth] the app's Windows
   *   authentication and promote_server_vars (null: neither)
   * @param {(sid: string) => string|null} [options.lookupSid] DOMAIN\name of a SID
   */
  constructor (native, platform, handlers, info, errors, { maxBodySize = Infinity, clientCerts = null, killTimeout = Infinity, auth = null, lookupSid = () => null } = {}) {
    super(handlers, { window: RESPONSE_WINDOW })
    this.auth = auth
    // every request's access token, from its arrival to its end (token-identities.js)
    this.identities = new TokenIdentities(native, lookupSid)
    this.maxBodySize = maxBodySize
    this.killTimeout = killTimeout
    this.clientCerts = clientCerts
    this.info = info
    // HTTP.SYS routed on its own decoded URL (it decodes %2F, which the app's target
    // keeps): a target that canonicalises outside the queue's prefixes is refused
    this.inPrefixes = prefixPathMatcher(info && Array.isArray(info.urls) ? info.urls : [])
    this.native = native
    this.platform = platform
    this.errors = errors
    this.sending = new Map() // id -> sizes of its sends the kernel has not completed, oldest first
    this.sendsInFlight = 0
    this.failure = null
    this.closeTimer = null
    this.nativeClosed = false
    this.cached = false // a response went to HTTP.SYS with a time to live
  }

  // ---- transport: worker -> HTTP.SYS --------------------------------------------

  [kReadBody] (id) {
    this.native.readBody(id)
  }

  [kRespond] (id, st, statusCode, reason, headers, body, flags, cacheTtl) {
    flags = closeOnLastPiece(st, flags)
    // A cacheable response sent whole goes bare, and HTTP.SYS writes its Content-Length
    // itself: one from the app too would go out twice in the 206s HTTP.SYS serves from
    // its cache, and src/http's chunked framing (writeHead() then end()) would be
    // cached as body bytes.
    if (cacheTtl > 0 && (flags & RESPONSE_MORE) === 0) {
      const bare = unframed(headers, body)
      if (bare !== null) ({ headers, body } = bare)
      headers = without(headers, 'content-length')
    }
    if (cacheTtl > 0 && !this.cached) {
      this.cached = true
      flushAtExit(this)
    }
    return this.issued(id, this.native.respond(id, statusCode, reason, headers, body, flags, cacheTtl), byteLength(body))
  }

  [kSendBody] (id, st, chunk, flags) {
    if ((flags & RESPONSE_MORE) !== 0) {
      if ((flags & RESPONSE_CLOSE) !== 0) st.closeAfter = true
      flags &= ~RESPONSE_CLOSE
    } else if (st.closeAfter) {
      flags |= RESPONSE_CLOSE
    }
    return this.issued(id, this.native.sendBody(id, chunk, flags), byteLength(chunk))
  }

  // HTTP.SYS sends `100 Continue` itself on the first body read.
  [kContinue] (id, st) {
    if (!st.bodyDone) this.native.readBody(id)
  }

  [kCancel] (id) {
    this.native.cancel(id)
  }

  // the app's 401 names the schemes it may authenticate with (auth-gate.js)
  respond (id, statusCode, statusMessage, rawHeaders, body, flags, cacheTtl) {
    if (statusCode === 401 && this.auth !== null) {
      const st = this.live.get(id)
      if (st !== undefined && !st.responded) rawHeaders = this.auth.withChallenges(401, rawHeaders || [], st.requestHeaders)
    }
    return super.respond(id, statusCode, statusMessage, rawHeaders, body, flags, cacheTtl)
  }

  cancel (id) {
    super.cancel(id)
    this.identities.release(id)
  }

  aborted (id) {
    super.aborted(id)
    this.identities.release(id)
  }

  // before the addon closes the queue's tokens (after the batch with CLOSED)
  ended (err) {
    this.identities.releaseAll()
    super.ended(err)
  }

  [kDetach] () {
    this.native.stopReceiving()
  }

  // Responses already handed to the kernel finish first (a stop or a reload must not cut
  // a download short); the queue handle closes once they have, or just before the kill.
  [kClose] () {
    if (this.sendsInFlight === 0) return this.closeNative()
    if (!Number.isFinite(this.killTimeout)) return
    const left = this.killTimeout - Math.min(CLOSE_MARGIN_MS, this.killTimeout / 4)
    this.closeTimer = setTimeout(() => this.closeNative(), left)
    this.closeTimer.unref()
  }

  [kRef] (refed) {
    if (refed) this.native.ref()
    else this.native.unref()
  }

  closeNative () {
    if (this.closeTimer !== null) {
      clearTimeout(this.closeTimer)
      this.closeTimer = null
    }
    if (this.nativeClosed) return
    // What this process cached goes before its handle does: HTTP.SYS is taken to flush
    // only the entries of the process that asks, so the supervisor's flush cannot be
    // relied on for them (docs/output-cache.md "Invalidation on HTTP.SYS"). After the
    // last send: a response finished during the drain may have been cached too.
    if (this.cached) this.flushCache()
    cachedBy.delete(this)
    this.nativeClosed = true
    this.native.close()
  }

  /**
   * Empties HTTP.SYS's response cache of what this process cached under the queue's
   * prefixes (HttpFlushResponseCache from this process's handle).
   * @returns {number} the Win32 code: 0; 120 where the addon cannot (Wine); 6 once closed
   */
  flushCache () {
    if (this.nativeClosed) return 6 // ERROR_INVALID_HANDLE
    if (typeof this.native.flushCache !== 'function') return 120
    const urls = this.info && Array.isArray(this.info.urls) ? this.info.urls : []
    return urls.length > 0 ? this.native.flushCache(urls) : this.native.flushCache()
  }

  /** A send the addon was asked for: 0 means one SENT event will follow. */
  issued (id, code, bytes) {
    if (code !== 0) {
      // Not sent, and nothing more can be: the request is over (contract: onAbort).
      // Reported on the next tick, never re-entrantly from inside respond()/sendBody().
      process.nextTick(() => {
        this.aborted(id)
        this.endBatch()
      })
      return 0
    }
    const sizes = this.sending.get(id)
    if (sizes === undefined) this.sending.set(id, [bytes])
    else sizes.push(bytes)
    this.sendsInFlight++
    return bytes
  }

  // ---- transport: HTTP.SYS -> worker --------------------------------------------

  onEvents (events) {
    const E = this.platform.events
    // Every handler call goes through deliver(): one throwing (an app's request listener)
    // must not lose the rest of the batch (the next request would hang) nor escape into
    // the addon's thread-safe function.
    for (let i = 0; i < events.length; i += 3) {
      const type = events[i]
      const id = events[i + 1]
      const arg = events[i + 2]
      switch (type) {
        case E.REQUEST: {
          // first: a request refused below still has its token to close
          const identity = this.identities.identify(arg)
          if (this.admit(id, arg, identity)) this.received(arg, new HttpSysRequestState(arg))
          else this.identities.release(id)
          break
        }
        case E.BODY: {
          const st = this.live.get(id)
          // an upgraded stream has no size limit (it is not a request body)
          if (st !== undefined && !st.opaque && st.received + arg.length > this.maxBodySize) {
            this.tooLarge(id, st)
            break
          }
          this.body(id, arg)
          break
        }
        case E.BODY_END:
          this.bodyEnd(id)
          this.settle(id)
          break
        case E.SENT:
          this.onSent(id, arg)
          break
        case E.ABORT:
          this.aborted(id)
          break
        case E.DETACHED:
          this.detachConfirmed()
          break
        case E.FATAL:
          // Receiving stopped for good: end the attachment with the reason.
          if (this.failure === null) this.failure = this.errors.receiveFailed(arg)
          this.closeNative()
          break
        case E.CLOSED:
          this.nativeClosed = true
          this.ended(this.failure || this.errors.queueClosed())
          break
      }
    }
    this.endBatch()
  }

  /**
   * The router's rules HTTP.SYS does not apply itself (README "The router's rules"),
   * applied before src/http, and so the app, sees the request: a method node does not
   * know is 400 (node's answer; the hub's parser gives the same), the target becomes
   * what the app sees on the hub too (origin-form, canonical path, the Host an
   * absolute-form target names: urlprefix.js canonicalizeTarget, shared with the hub)
   * and must lie inside the queue's prefixes (else 400: HTTP.SYS routed on a path the
   * app would not see, such as one with an encoded slash), and a declared body over
   * the limit is 413, and a client certificate the server does not accept (with
   * rejectUnauthorized) is 403. Each refusal closes the connection,
   * as the hub's does. Here rather than in src/http: they are the router's decisions,
   * which src/http never makes on the hub either, and a refused request must not cost
   * the app anything (no IncomingMessage, no 'request'). Then Windows authentication
   * (auth-gate.js): the identity and promoted headers, or, for an anonymous request to
   * an app with anonymous: false, 401 with the challenges (the connection stays open:
   * NTLM and Negotiate authenticate the connection the client answers on).
   * @param {object} req the addon's request (changed in place: url, rawHeaders, identity)
   * @param {object|null} identity HTTP.SYS's authenticated user (token-identities.js)
   * @returns {boolean} false when it was answered here
   */
  admit (id, req, identity = null) {
    if (!KNOWN_METHODS.has(req.method) || canonicalizeTarget(req) === null || !this.inPrefixes(req.url)) {
      this.refuse(id, 400, 'Bad Request')
      return false
    }
    if (req.hasBody && this.maxBodySize !== Infinity && declaredLength(req.rawHeaders) > this.maxBodySize) {
      this.refuse(id, 413, 'Request Entity Too Large')
      return false
    }
    // client certificates: node refuses the handshake of a client it does not accept;
    // HTTP.SYS has completed it, so 403 and the connection closed (client-certs.js)
    if (this.clientCerts !== null && req.tls) {
      const policy = this.clientCerts(req)
      if (policy !== null && !policy.judge(req.tls)) {
        this.refuse(id, 403, 'Forbidden')
        return false
      }
    }
    req.identity = identity
    if (this.auth !== null) {
      this.auth.admit(req, identity)
      if (identity === null && this.auth.challengesAnonymous) {
        const c = this.auth.challenge(req.rawHeaders)
        this.issued(id, this.native.respond(id, c.status, c.reason, c.headers, c.body, 0, 0), c.body.length)
        return false
      }
    }
    // what the hub's parser says of a request (REQ_UPGRADE): it asks to switch protocols
    // and has no body, so the bytes after its head can be the new protocol's
    req.upgrade = !req.hasBody && asksUpgrade(req)
    return true
  }

  /** A request whose exchange is over here and in the kernel lets go of its token. */
  settle (id) {
    // on every BODY_END and SENT: nothing to look up while no request holds a token
    if (this.identities.size === 0) return
    if (!this.live.has(id) && !this.sending.has(id)) this.identities.release(id)
  }

  /**
   * A request body over the limit: 413 and a closed connection, as the hub answers it.
   * A request the app never saw is answered here alone; one it is reading is aborted
   * for the app first (onAbort), then answered if the app had not answered yet.
   */
  tooLarge (id, st) {
    if (st !== null) {
      this.aborted(id)
      if (st.responded) {
        this.native.cancel(id)
        return
      }
    }
    this.refuse(id, 413, 'Request Entity Too Large')
  }

  /** Answers a request the app does not get (or no longer has) and closes its connection. */
  refuse (id, status, text) {
    const headers = ['Content-Type', 'text/plain', 'Content-Length', String(text.length), 'Connection', 'close']
    this.issued(id, this.native.respond(id, status, STATUS_CODES[status], headers, text, RESPONSE_CLOSE, 0), text.length)
  }

  onSent (id, code) {
    const sizes = this.sending.get(id)
    let bytes = 0
    if (sizes !== undefined) {
      bytes = sizes.shift()
      if (sizes.length === 0) this.sending.delete(id)
      this.sendsInFlight--
    }
    if (code !== 0) {
      this.aborted(id) // the addon cancelled the request: the client is not left waiting
    } else {
      this.acknowledged(id, bytes)
      // HTTP.SYS has no half-close for an upgraded stream: once the worker's last send
      // (sent with DISCONNECT) is out, the connection is gone, and so is the client's side
      const st = this.live.get(id)
      if (st !== undefined && st.opaque && st.writeEnded && !this.sending.has(id)) this.bodyEnd(id)
    }
    this.settle(id)
    if (this.sendsInFlight === 0 && this.userClosed && !this.nativeClosed) this.closeNative()
  }
}

// The attachments of this process that cached a response and are still open. An app
// that ends with process.exit() (a SIGTERM listener often does) never closes its server:
// its entries are flushed on the way out all the same. A crash or a kill runs no hook
// (docs/output-cache.md "Invalidation on HTTP.SYS").
const cachedBy = new Set()
let exitHook = false

function flushAtExit (attachment) {
  cachedBy.add(attachment)
  if (exitHook) return
  exitHook = true
  process.on('exit', () => {
    for (const a of cachedBy) a.flushCache()
  })
}

/** HTTP/1.1 with an Upgrade header and the "upgrade" token in Connection (RFC 9110 7.8). */
function asksUpgrade (req) {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return false
  const raw = req.rawHeaders
  let upgrade = false
  let token = false
  // every request without a body passes here: names are compared by length first, so
  // ordinary headers cost no lower-cased copy (as declaredLength does)
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]
    if (name.length === 7 && name.toLowerCase() === 'upgrade') {
      upgrade = raw[i + 1].trim() !== ''
    } else if (name.length === 10 && name.toLowerCase() === 'connection' && /(?:^|,)\s*upgrade\s*(?:,|$)/i.test(raw[i + 1])) {
      token = true
    }
  }
  return upgrade && token
}

/** The Content-Length a request declares, or -1 (chunked, or none). */
function declaredLength (raw) {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 14 && raw[i].toLowerCase() === 'content-length') {
      const n = Number(raw[i + 1])
      return Number.isFinite(n) ? n : -1
    }
  }
  return -1
}

// HTTP.SYS leaves MORE_DATA with DISCONNECT undefined: the close goes with the last piece.
function closeOnLastPiece (st, flags) {
  if ((flags & (RESPONSE_MORE | RESPONSE_OPAQUE)) !== 0 && (flags & RESPONSE_CLOSE) !== 0) {
    st.closeAfter = true
    return flags & ~RESPONSE_CLOSE
  }
  return flags
}

/** rawHeaders without the header `name` (lower case): a new array, the app's stays as it was. */
function without (raw, name) {
  let found = false
  for (let i = 0; i < raw.length && !found; i += 2) found = String(raw[i]).toLowerCase() === name
  if (!found) return raw
  const out = []
  for (let i = 0; i < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() !== name) out.push(raw[i], raw[i + 1])
  }
  return out
}

/**
 * A whole response body src/http framed chunked, to go out in one send: its headers
 * without Transfer-Encoding and the body bare (HTTP.SYS frames nothing and writes a
 * Content-Length). null when the response is not chunked, or not a whole chunked body.
 * @returns {{headers: Array, body: Buffer}|null}
 */
function unframed (headers, body) {
  if (body === null) return null
  let chunked = false
  for (let i = 0; i < headers.length && !chunked; i += 2) {
    chunked = String(headers[i]).toLowerCase() === 'transfer-encoding' && String(headers[i + 1]).trim().toLowerCase() === 'chunked'
  }
  if (!chunked) return null
  const bare = unchunk(typeof body === 'string' ? Buffer.from(body, 'utf8') : body)
  return bare === null ? null : { headers: without(headers, 'transfer-encoding'), body: bare }
}

module.exports = { HttpSysAttachment, HttpSysRequestState, unframed, without, RESPONSE_WINDOW, CLOSE_MARGIN_MS }
