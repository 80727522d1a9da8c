'use strict'

// The queue backend for Windows: HTTP.SYS through the native addon (native/).
// Implements src/queue/contract.js over the addon's Queue:
//
//   new binding.Queue({ mode: 'create' | 'open' | 'controller', name, urls, ... })
//   queue.start(onEvents)   batches arrive as a flat [type, id, arg, type, id, arg, ...]
//   queue.respond / sendBody / readBody / cancel -> Win32 code (0: issued)
//   queue.stopReceiving(), queue.close(), queue.ref(), queue.unref(), queue.info()
//
// All policy is here; the addon only wraps the OS calls and reports Win32 codes, which
// this file turns into the coded errors of src/errors.js.
//
// Wine 8 (the Linux test bed) has no HttpSendResponseEntityBody: where the addon
// reports `streaming: false`, a response sent in pieces is held here and goes out in one
// HttpSendHttpResponse at its end (the one path Wine supports).

const net = require('node:net')
const os = require('node:os')
const { STATUS_CODES } = require('node:http')
const { codes } = require('../errors')
const urlprefix = require('../urlprefix')
const { RESPONSE_MORE, RESPONSE_CLOSE, RESPONSE_OPAQUE, withDefaultHandlers, callHandler, raiseThrown } = require('./contract')
const { createServiceConfig, currentUser } = require('./httpsys-native-config')

const EVENT_REQUEST = 1
const EVENT_BODY = 2
const EVENT_BODY_END = 3
const EVENT_SENT = 4
const EVENT_ABORT = 5
const EVENT_DETACHED = 6
const EVENT_CLOSED = 7
const EVENT_FATAL = 8

const ERROR_FILE_NOT_FOUND = 2
const ERROR_ACCESS_DENIED = 5
const ERROR_SHARING_VIOLATION = 32
const ERROR_NOT_SUPPORTED = 50
const ERROR_INVALID_PARAMETER = 87
const ERROR_ALREADY_EXISTS = 183

// Response bytes a request may have in flight before respond()/sendBody() say "wait".
const RESPONSE_WINDOW = 256 * 1024

/** Per request: body state and the response window. */
class ReqState {
  constructor (hasBody) {
    this.bodyDone = !hasBody
    this.responded = false
    this.inFlight = [] // sizes of sends not completed yet, oldest first
    this.outstanding = 0
    this.blocked = false
    this.held = null // Wine: the response kept until its last piece
    this.closeAfter = false // respond(MORE | CLOSE): the last piece carries the close
  }
}

class Attachment {
  constructor (native, platform, handlers, info) {
    this.info = info
    this.native = native
    this.platform = platform
    this.handlers = handlers
    this.live = new Map()
    this.holdPieces = !platform.features.streaming
    this.userClosed = false
    this.closed = false
    this.failure = null
    this.detachWaiters = null
    this.detached = false
    this.thrown = null // errors handlers threw during the batch being delivered
  }

  readBody (id) {
    const st = this.live.get(id)
    if (st === undefined || st.bodyDone) return
    this.native.readBody(id)
  }

  respond (id, statusCode, statusMessage, rawHeaders, body, flags = 0, cacheTtl = 0) {
    const st = this.live.get(id)
    if (st === undefined || st.responded) return true
    st.responded = true
    // After a 101 the connection carries opaque bytes: they are read as a body.
    if (flags & RESPONSE_OPAQUE) st.bodyDone = false
    const reason = statusMessage === undefined || statusMessage === null || statusMessage === ''
      ? (STATUS_CODES[statusCode] || '')
      : String(statusMessage)
    const headers = rawHeaders || []
    // HTTP.SYS leaves MORE_DATA with DISCONNECT undefined: the close goes with the last piece.
    if ((flags & (RESPONSE_MORE | RESPONSE_OPAQUE)) !== 0 && (flags & RESPONSE_CLOSE) !== 0) {
      st.closeAfter = true
      flags &= ~RESPONSE_CLOSE
    }
    if (this.holdPieces && !(flags & RESPONSE_OPAQUE)) {
      st.held = { statusCode, reason, headers, chunks: body ? [body] : [], cacheTtl }
      if ((flags & RESPONSE_MORE) === 0) this.sendHeld(id, st, flags)
      return true
    }
    this.native.respond(id, statusCode, reason, headers, body === undefined ? null : body, flags, cacheTtl)
    return this.afterSend(id, st, byteLength(body), flags)
  }

  sendBody (id, chunk, flags = 0) {
    const st = this.live.get(id)
    if (st === undefined || !st.responded) return true
    if ((flags & RESPONSE_MORE) !== 0) {
      if ((flags & RESPONSE_CLOSE) !== 0) st.closeAfter = true
      flags &= ~RESPONSE_CLOSE
    } else if (st.closeAfter) {
      flags |= RESPONSE_CLOSE
    }
    if (st.held !== null) {
      if (chunk) st.held.chunks.push(chunk)
      if ((flags & RESPONSE_MORE) === 0) this.sendHeld(id, st, flags)
      return true
    }
    this.native.sendBody(id, chunk === undefined ? null : chunk, flags)
    return this.afterSend(id, st, byteLength(chunk), flags)
  }

  // HTTP.SYS sends `100 Continue` itself on the first body read.
  writeContinue (id) {
    this.readBody(id)
  }

  cancel (id) {
    const st = this.live.get(id)
    if (st === undefined) return
    this.live.delete(id)
    if (this.native.cancel(id) === ERROR_NOT_SUPPORTED && (!st.responded || st.held !== null)) {
      // No HttpCancelHttpRequest (Wine): end the exchange and ask for the close.
      this.native.respond(id, 500, STATUS_CODES[500], ['Content-Length', '0'], null, RESPONSE_CLOSE, 0)
    }
  }

  /** Stops receiving new requests; in-flight ones can still be answered. */
  detach () {
    if (this.closed || this.detached) return Promise.resolve()
    if (this.detachWaiters === null) {
      this.detachWaiters = []
      this.native.stopReceiving()
    }
    return new Promise((resolve) => this.detachWaiters.push(resolve))
  }

  /** Ends the attachment now; requests still in flight are cancelled. */
  close () {
    if (this.closed || this.userClosed) return
    this.userClosed = true
    this.native.close()
  }

  /** Like a socket's: whether an attachment keeps the process alive. */
  ref () {
    if (!this.closed) this.native.ref()
  }

  unref () {
    if (!this.closed) this.native.unref()
  }

  // -------------------------------------------------------------------------

  afterSend (id, st, n, flags) {
    if ((flags & RESPONSE_MORE) === 0 && (flags & RESPONSE_OPAQUE) === 0) {
      this.live.delete(id)
      return true
    }
    st.inFlight.push(n)
    st.outstanding += n
    if (st.outstanding >= RESPONSE_WINDOW) {
      st.blocked = true
      return false
    }
    return true
  }

  sendHeld (id, st, flags) {
    const held = st.held
    st.held = null
    let headers = held.headers
    let body = held.chunks.map(toBuffer)
    // src/http framed the pieces as chunked; one complete send carries a length instead.
    if (hasChunkedEncoding(headers)) {
      headers = withoutHeader(headers, 'transfer-encoding')
      body = [unchunk(Buffer.concat(body))]
    }
    this.native.respond(id, held.statusCode, held.reason, headers, body, flags & RESPONSE_CLOSE, held.cacheTtl)
    this.live.delete(id)
  }

  onEvents (events) {
    const h = this.handlers
    // Every handler call goes through call(): one throwing (an app's request listener)
    // must not lose the rest of the batch (the next request would hang) nor escape into
    // the addon's thread-safe function.
    for (let i = 0; i < events.length; i += 3) {
      const type = events[i]
      const id = events[i + 1]
      const arg = events[i + 2]
      switch (type) {
        case EVENT_REQUEST:
          arg.expectContinue = expectsContinue(arg.rawHeaders)
          this.live.set(id, new ReqState(arg.hasBody))
          this.call(h.onRequest, arg)
          break
        case EVENT_BODY: {
          const st = this.live.get(id)
          if (st !== undefined && !st.bodyDone) this.call(h.onBody, id, arg)
          break
        }
        case EVENT_BODY_END: {
          const st = this.live.get(id)
          if (st === undefined || st.bodyDone) break
          st.bodyDone = true
          this.call(h.onBodyEnd, id)
          break
        }
        case EVENT_SENT:
          this.onSent(id, arg)
          break
        case EVENT_ABORT:
          if (this.live.delete(id)) this.call(h.onAbort, id)
          break
        case EVENT_DETACHED:
          this.resolveDetach()
          break
        case EVENT_FATAL:
          // Receiving stopped for good: end the attachment with the reason.
          if (this.failure === null) {
            this.failure = new codes.ERR_HTTPSYS_NATIVE_CALL({
              syscall: 'HttpReceiveHttpRequest', win32: arg, win32Name: win32Name(this.platform, arg), queue: this.info.queue || undefined
            })
          }
          if (!this.userClosed) this.native.close()
          break
        case EVENT_CLOSED:
          this.onClosed()
          break
      }
    }
    if (this.thrown !== null) this.raise()
  }

  // As hub-client: a throwing handler costs the rest of the batch nothing (contract.js)
  call (fn, a, b) {
    callHandler(this, fn, a, b)
  }

  raise () {
    raiseThrown(this)
  }

  onSent (id, code) {
    const st = this.live.get(id)
    if (st === undefined) return
    if (code !== 0) {
      this.live.delete(id)
      this.call(this.handlers.onAbort, id)
      return
    }
    st.outstanding -= st.inFlight.length > 0 ? st.inFlight.shift() : 0
    if (st.blocked && st.outstanding < RESPONSE_WINDOW) {
      st.blocked = false
      this.call(this.handlers.onDrain, id)
    }
  }

  onClosed () {
    if (this.closed) return
    this.closed = true
    const h = this.handlers
    const ids = [...this.live.keys()]
    this.live.clear()
    for (const id of ids) this.call(h.onAbort, id)
    this.resolveDetach()
    let err = null
    if (this.failure !== null) err = this.failure
    else if (!this.userClosed) err = new codes.ERR_HTTPSYS_QUEUE_CLOSED({ queue: this.info.queue || undefined })
    this.call(h.onClose, err)
  }

  resolveDetach () {
    this.detached = true
    const waiters = this.detachWaiters || []
    this.detachWaiters = []
    for (const resolve of waiters) resolve()
  }
}

/**
 * The backend over a binding (the real addon, or a fake one in tests).
 * @param {() => object} getBinding loads the addon; throws ERR_HTTPSYS_NATIVE_UNAVAILABLE
 */
function createBackend (getBinding) {
  let platform = null
  const binding = () => {
    const b = getBinding()
    if (platform === null) platform = { ...b.platform(), errorNames: b.errors() }
    return b
  }

  /**
   * Worker side: attach to a named queue, or (standalone) create one for `urls`.
   * @param {object} options see contract.js; extra tuning: receives, bufferSize,
   *   bodyChunk, bufferData (kernel response buffering), queueLength, verbosity, timeouts
   * @returns {Promise<Attachment>}
   */
  async function attach ({ queue, urls, handlers, ...tuning } = {}) {
    if (!handlers || typeof handlers.onRequest !== 'function') {
      throw new codes.ERR_INVALID_ARG_TYPE({ name: 'handlers.onRequest', expected: 'a function', actual: handlers && handlers.onRequest })
    }
    const b = binding()
    const prefixes = await withFreePorts(urls || [])
    if (tuning.receives === undefined) tuning.receives = defaultReceives(platform)
    let native = null
    if (queue) {
      // Under the supervisor the controller registered the app's prefixes already, and
      // as on the hub a queue that has prefixes ignores the ones listen() asks for: an
      // app on http://+:8080/api/ calling listen(8080) must not take the port's root.
      const registered = listFromEnv(process.env.HTTPSYS_QUEUE_URLS)
      const own = registered.length > 0 ? [] : prefixes
      try {
        native = new b.Queue({ ...tuning, mode: 'open', name: queue, urls: own })
      } catch (err) {
        if (err.win32 !== ERROR_FILE_NOT_FOUND || err.syscall !== 'HttpCreateRequestQueue') throw toError(err, { queue })
        if (prefixes.length === 0) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue, win32: err.win32 })
      }
    }
    if (native === null) {
      try {
        native = new b.Queue({ ...tuning, mode: 'create', name: queue || '', urls: prefixes })
      } catch (err) {
        throw toError(err, { queue })
      }
    }
    const nativeInfo = native.info()
    const bound = nativeInfo.urls.length > 0 ? nativeInfo.urls : prefixes
    const info = { queue: queue || null, urls: bound, ports: portsOf(bound) }
    const attachment = new Attachment(native, platform, withDefaultHandlers(handlers), info)
    try {
      native.start((events) => attachment.onEvents(events))
    } catch (err) {
      // The queue (and the prefixes it registered) must not outlive the failed attach.
      native.close()
      throw toError(err, { queue })
    }
    return attachment
  }

  /**
   * Controller side (the supervisor): a named queue holding the app's prefixes, which
   * workers open. It never receives; requests wait in it while workers restart.
   * @returns {{name: string, urls: string[], addUrl: Function, removeUrl: Function, close: Function}}
   */
  function createQueue (name, { urls = [], queueLength, verbosity, timeouts, sddl } = {}) {
    const b = binding()
    let native
    try {
      native = new b.Queue({ mode: 'controller', name, urls, queueLength, verbosity, timeouts, sddl })
    } catch (err) {
      throw toError(err, { queue: name })
    }
    return {
      name,
      get urls () { return native.info().urls },
      addUrl (url) {
        try {
          native.addUrl(url)
        } catch (err) {
          throw toError(err, { queue: name })
        }
      },
      removeUrl (url) { return native.removeUrl(url) === 0 },
      close () { native.close() }
    }
  }

  function toError (err, { queue } = {}) {
    if (!err || typeof err.win32 !== 'number') return err
    const details = { win32: err.win32, prefix: err.prefix, queue }
    if (err.syscall === 'HttpAddUrlToUrlGroup' && err.prefix) {
      const port = portOf(err.prefix)
      switch (err.win32) {
        case ERROR_ALREADY_EXISTS: return new codes.ERR_HTTPSYS_URL_CONFLICT(details)
        case ERROR_ACCESS_DENIED: return new codes.ERR_HTTPSYS_ACCESS_DENIED({ ...details, port, user: currentUser() })
        case ERROR_SHARING_VIOLATION: return new codes.ERR_HTTPSYS_PORT_IN_USE({ ...details, port })
        case ERROR_INVALID_PARAMETER:
          return new codes.ERR_HTTPSYS_BAD_PREFIX({ ...details, reason: 'HTTP.SYS rejected it (ERROR_INVALID_PARAMETER)' })
      }
    }
    return new codes.ERR_HTTPSYS_NATIVE_CALL({ ...details, syscall: err.syscall, win32Name: err.win32Name })
  }

  return {
    attach,
    createQueue,
    /** { wine: string|null, features: {...} } of the loaded addon */
    platform () {
      binding()
      return platform
    },
    toError
  }
}

// ---------------------------------------------------------------------------

// Receives kept outstanding: ASP.NET keeps 5 per CPU; at least 16 so a burst of new
// connections is taken at once. Wine's http.sys only ever looks at the newest
// connection for a receive posted after requests queued up (wine.md), so there every
// request must find a receive already waiting: the most the addon allows.
function defaultReceives (platform) {
  if (platform.wine) return 256
  return Math.min(Math.max(5 * os.availableParallelism(), 16), 64)
}

// A prefix asking for port 0 gets a free port now: HTTP.SYS has no "any port".
async function withFreePorts (urls) {
  const out = []
  for (const url of urls) {
    const parsed = urlprefix.parse(url, { allowPortZero: true })
    if (parsed.port !== 0) {
      out.push(parsed.prefix)
      continue
    }
    const port = await freePort()
    out.push(`${parsed.scheme}://${parsed.host}:${port}${parsed.path}`)
  }
  return out
}

function freePort () {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

function portOf (prefix) {
  const m = /^[a-z]+:\/\/(?:\[[^\]]*\]|[^/:]*):(\d+)/i.exec(prefix || '')
  return m ? Number(m[1]) : undefined
}

function portsOf (urls) {
  return [...new Set(urls.map(portOf).filter((p) => p !== undefined))]
}

function listFromEnv (value) {
  return value ? value.split(/[\s,]+/).filter(Boolean) : []
}

function win32Name (platform, code) {
  return platform && platform.errorNames ? platform.errorNames[code] : undefined
}

function expectsContinue (raw) {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 6 && raw[i].toLowerCase() === 'expect') return raw[i + 1].toLowerCase() === '100-continue'
  }
  return false
}

function hasChunkedEncoding (raw) {
  for (let i = 0; i < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() === 'transfer-encoding' && /\bchunked\b/i.test(raw[i + 1])) return true
  }
  return false
}

function withoutHeader (raw, name) {
  const out = []
  for (let i = 0; i < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() !== name) out.push(raw[i], raw[i + 1])
  }
  return out
}

/** Removes HTTP/1.1 chunked framing (RFC 9112 section 7.1); trailers are dropped. */
function unchunk (buf) {
  const parts = []
  let p = 0
  while (p < buf.length) {
    const eol = buf.indexOf('\r\n', p, 'latin1')
    if (eol === -1) break
    const size = parseInt(buf.latin1Slice(p, eol).split(';')[0].trim(), 16)
    if (!(size > 0)) break
    parts.push(buf.subarray(eol + 2, eol + 2 + size))
    p = eol + 2 + size + 2
  }
  return Buffer.concat(parts)
}

function toBuffer (chunk) {
  return typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
}

function byteLength (body) {
  if (body === null || body === undefined) return 0
  return typeof body === 'string' ? Buffer.byteLength(body, 'utf8') : body.length
}

const loadAddon = () => require('./native-loader').load()
const backend = createBackend(loadAddon)

module.exports = {
  attach: backend.attach,
  createQueue: backend.createQueue,
  platform: backend.platform,
  toError: backend.toError,
  serviceConfig: createServiceConfig(loadAddon),
  createBackend,
  unchunk
}
