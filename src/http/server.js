'use strict'

// http.Server over a request queue.
//
// node's http.Server is a net.Server; this one is an EventEmitter with the same
// surface (listen, close, address, timeouts, ...), because there is no listening
// socket in this process: listen() attaches to a queue through the backend
// (contract.js) and requests arrive from there. The preload installs this class as
// http.Server, so `server instanceof http.Server` holds for the servers apps make.
//
// Differences that follow from having no sockets: under a shared router (the
// supervisor's hub, HTTP.SYS) no 'connection', 'clientError', 'upgrade' or 'connect'
// events (the router owns connections and answers malformed requests itself) and
// closeIdleConnections() does nothing (idle keep-alive connections are the router's).
// A standalone server's own hub tells it of its connections ('connection'), and
// closeIdleConnections()/closeAllConnections() end them, as node's do.
//
// Rejected async request handlers: node crashes on the unhandled rejection (unless
// the app enabled captureRejections). Here the server always captures them for
// 'request' (and 'checkContinue'/'checkExpectation') listeners: the response becomes a
// 500 (or is reset if it had started), the error is logged, the process keeps serving.
// https://nodejs.org/api/http.html#class-httpserver

const EventEmitter = require('node:events')
const nodeHttp = require('node:http')
const { STATUS_CODES } = nodeHttp
const { codes } = require('../errors')
const { IncomingMessage } = require('./incoming')
const { ServerResponse } = require('./response')
const { ServerHandle, rememberServer, forgetServer } = require('./server-handle')
const { targetFor } = require('./listen-target')
const { defineLegacyClass } = require('./legacy-class')
const { RequestSocket } = require('./socket')
const { kBackend, kHandle, kClosing, kResponseOptions, kIncomingClass, kResponseClass, kScheme, kTlsOptions, kUniqueHeaders } = require('./symbols')

// the handle that serves the streams handed to the server (adopt): { handle, take } or
// false where the backend cannot take one
const kAdopter = Symbol('httpsys.adopter')

// how soon the router hears a client's FIN on a port the server owns (routerSettings)
const OWN_PORT_FIN_GRACE_MS = 10

let defaultBackend = null
let log = null

/**
 * The backend servers use when createServer() got no `queueBackend` option.
 * @param {{attach: Function}|null} backend
 */
function setDefaultBackend (backend) {
  defaultBackend = backend
}

/**
 * @param {object} [options] node's createServer options (IncomingMessage,
 *   ServerResponse, requestTimeout, headersTimeout, keepAliveTimeout,
 *   connectionsCheckingInterval, joinDuplicateHeaders are honoured; parser and socket
 *   options are accepted and have no effect here) plus `queueBackend`
 * @param {Function} [requestListener]
 */
function Server (options, requestListener) {
  if (!(this instanceof Server)) return new Server(options, requestListener)
  if (typeof options === 'function') {
    requestListener = options
    options = {}
  } else if (options === undefined || options === null) {
    options = {}
  } else if (typeof options !== 'object' || Array.isArray(options)) {
    throw new codes.ERR_INVALID_ARG_TYPE({ name: 'options', expected: 'of type object', actual: options })
  }
  EventEmitter.call(this, { captureRejections: true })

  this[kBackend] = options.queueBackend || null
  this[kHandle] = null
  this[kClosing] = new Set() // handles close() was called on, until their 'close'
  this[kAdopter] = null
  this[kIncomingClass] = options.IncomingMessage || IncomingMessage
  this[kResponseClass] = options.ServerResponse || ServerResponse
  // node's storeHTTPOptions: the same checks, the same defaults
  this.maxHeaderSize = optionalInteger(options, 'maxHeaderSize')
  this.insecureHTTPParser = optionalBoolean(options, 'insecureHTTPParser')
  this.requestTimeout = optionalInteger(options, 'requestTimeout', 300000)
  this.headersTimeout = optionalInteger(options, 'headersTimeout', Math.min(60000, this.requestTimeout))
  if (this.requestTimeout > 0 && this.headersTimeout > 0 && this.headersTimeout > this.requestTimeout) {
    throw new codes.ERR_OUT_OF_RANGE({ name: 'headersTimeout', range: '<= requestTimeout', received: this.headersTimeout })
  }
  this.keepAliveTimeout = optionalInteger(options, 'keepAliveTimeout', 5000)
  this.connectionsCheckingInterval = optionalInteger(options, 'connectionsCheckingInterval', 30000)
  this.requireHostHeader = optionalBoolean(options, 'requireHostHeader', true)
  this.joinDuplicateHeaders = optionalBoolean(options, 'joinDuplicateHeaders')
  this.rejectNonStandardBodyWrites = optionalBoolean(options, 'rejectNonStandardBodyWrites', false)
  // headers whose several values go out joined with '; ' on one line (node's option)
  this[kUniqueHeaders] = Array.isArray(options.uniqueHeaders) ? new Set(options.uniqueHeaders.map((h) => h.toLowerCase())) : null
  // the socket option node passes to each connection, and so to req and res
  this.highWaterMark = typeof options.highWaterMark === 'number' && options.highWaterMark >= 0 ? options.highWaterMark : undefined
  // what node gives each ServerResponse it makes (made once: the hot path allocates nothing)
  this[kResponseOptions] = this.highWaterMark !== undefined || this.rejectNonStandardBodyWrites
    ? { highWaterMark: this.highWaterMark, rejectNonStandardBodyWrites: this.rejectNonStandardBodyWrites }
    : undefined
  this.httpAllowHalfOpen = false
  this.timeout = 0
  this.maxHeadersCount = null
  this.maxRequestsPerSocket = 0
  this.maxConnections = undefined
  this._unref = false
  if (requestListener) this.on('request', requestListener)
}

class ServerMembers extends EventEmitter {
  /**
   * node's server serves every socket emitted as 'connection' (its connectionListener,
   * registered first): `server.emit('connection', socket)` hands it one the app holds
   * (a socket it accepted itself, one passed from another process, a duplex stream).
   * Here such a stream is served by this process's hub (adopt). The socket objects this
   * server emits itself (RequestSocket) stand for the router's connections: not taken.
   */
  emit (type, socket) {
    if (type === 'connection' && socket !== null && typeof socket === 'object' && !(socket instanceof RequestSocket)) adopt(this, socket)
    return EventEmitter.prototype.emit.apply(this, arguments)
  }

  get listening () {
    const b = this[kHandle]
    return b !== null && !b.closing && (b.attachment !== null || (b.reservation !== null && b.reservation.known))
  }

  // node's listening handle: libraries test it to know whether the server listens
  // (supertest closes a server only when it is set). Here it is the attachment's handle.
  get _handle () {
    return this.listening ? this[kHandle] : null
  }

  set _handle (value) {}

  listen (...args) {
    if (this[kHandle] !== null) throw new codes.ERR_SERVER_ALREADY_LISTEN()
    const target = targetFor(args, process.env, this[kScheme] || 'http')
    const backend = backendOf(this)
    // a socket path: the app's queue under the supervisor, else a backend that can
    // listen on one (the process's own router)
    if (target.path !== undefined && target.queue === undefined && backend.listensOnPaths !== true) {
      throw new codes.ERR_HTTPSYS_LISTEN_PATH({ path: target.path })
    }
    if (target.callback !== null) this.once('listening', target.callback)
    const handle = new ServerHandle(this, target)
    this[kHandle] = handle
    rememberServer(this)
    if (target.signal !== null) watchSignal(this, target.signal)

    const options = { queue: target.queue, urls: target.urls, handlers: handle.handlers, settings: routerSettings(this, handle, target) }
    if (target.path !== undefined && target.queue === undefined) options.path = target.path
    if (this[kTlsOptions]) options.tls = this[kTlsOptions] // an https server's (https-server.js)
    let attaching
    try {
      // node binds before listen() returns: where the backend can, so do we, and the
      // address is known now (src/wire/contract.js reserve())
      if (typeof backend.reserve === 'function') {
        handle.reservation = backend.reserve(options) || null
        if (handle.reservation !== null) {
          options.reservation = handle.reservation
          if (this._unref && typeof handle.reservation.unref === 'function') handle.reservation.unref()
        }
      }
      attaching = backend.attach(options)
    } catch (err) {
      attaching = Promise.reject(err)
    }
    if (handle.reservation !== null && handle.reservation.bound) process.nextTick(emitListening, this, handle)
    Promise.resolve(attaching).then(
      (attachment) => onAttached(this, handle, attachment),
      (err) => onAttachFailed(this, handle, err)
    )
    return this
  }

  /**
   * Stops listening at once (the port is free again and listen() may be called again,
   * as on node); the requests in flight are answered, then 'close'. Requests not
   * received yet stay queued for other workers of the queue. Idle connections end
   * first through this.closeIdleConnections(), called as node's close() calls it
   * (httpServerPreClose), so an override of it (fastify's serverFactory servers) runs.
   */
  close (callback) {
    this.closeIdleConnections()
    const handle = this[kHandle]
    if (typeof callback === 'function') {
      if (handle === null) {
        this.once('close', () => callback(new codes.ERR_SERVER_NOT_RUNNING()))
      } else {
        this.once('close', callback)
      }
    }
    if (handle !== null) {
      this[kHandle] = null
      this[kClosing].add(handle)
      handle.beginClose()
    } else if (this[kClosing].size === 0) {
      process.nextTick(emitClose, this)
    }
    return this
  }

  closeAllConnections () {
    const handles = handlesOf(this)
    for (const handle of handles) {
      for (const req of [...handle.inflight.values()]) handle.cancel(req)
      // a standalone server's connections, idle or with a head still coming
      if (handle.own !== null) for (const conn of [...handle.own.values()]) conn.destroy()
    }
  }

  // A standalone server's idle connections are ended (node's); a shared router's idle
  // keep-alive connections are the router's, which closes them itself. Idle as node
  // counts it: no request being read, and every response on it ended by the app (a
  // response ended but still going out goes out first; node's destroy() can cut it).
  // Ended, not reset: the router calls a connection idle once its last response is
  // handed to the socket, and a slow client may still be reading it.
  closeIdleConnections () {
    const handles = handlesOf(this)
    for (const handle of handles) {
      if (handle.own === null) continue
      for (const conn of [...handle.own.values()]) {
        // (the router knows whether it is idle: the native one is told, the hub checks)
        if (typeof conn.closeIfIdle === 'function') conn.closeIfIdle(handle.answeredAll(conn.id))
        else if (conn.idle === true || (conn.betweenRequests === true && handle.answeredAll(conn.id))) conn.closeWhenIdle()
      }
    }
  }

  address () {
    const b = this[kHandle]
    if (b === null || b.closing) return null
    // node answers a pipe's path
    if (b.target.path !== undefined && b.target.queue === undefined) return b.reservation !== null && b.reservation.known ? b.target.path : null
    const info = b.attachment !== null ? b.attachment.info : null
    let port
    if (info && Array.isArray(info.ports) && info.ports.length > 0) port = info.ports[0]
    else if (b.reservation !== null && b.reservation.known && b.reservation.ports.length > 0) port = b.reservation.ports[0]
    else return null
    return { address: b.target.address, family: b.target.family, port }
  }

  setTimeout (msecs, callback) {
    this.timeout = msecs
    if (typeof callback === 'function') this.on('timeout', callback)
    return this
  }

  getConnections (callback) {
    const b = this[kHandle]
    let n = 0
    if (b !== null && b.keepsSockets) {
      n = b.connections.size // the router reports each close: the open ones, idle ones too
    } else if (b !== null) {
      const seen = new Set()
      for (const req of b.inflight.values()) seen.add(req.socket.remotePort + ' ' + req.socket.remoteAddress)
      n = seen.size
    }
    if (typeof callback === 'function') process.nextTick(callback, null, n)
    return this
  }

  // The queue attachment keeps the process alive while the server listens, as a
  // listening socket would; a backend that can tell its connection not to do so
  // offers ref()/unref() on the attachment.
  ref () {
    this._unref = false
    const b = this[kHandle]
    if (b !== null && b.attachment !== null && typeof b.attachment.ref === 'function') b.attachment.ref()
    if (b !== null && b.reservation !== null && typeof b.reservation.ref === 'function') b.reservation.ref()
    return this
  }

  unref () {
    this._unref = true
    const b = this[kHandle]
    if (b !== null && b.attachment !== null && typeof b.attachment.unref === 'function') b.attachment.unref()
    if (b !== null && b.reservation !== null && typeof b.reservation.unref === 'function') b.reservation.unref()
    return this
  }

  [Symbol.asyncDispose] () {
    return new Promise((resolve, reject) => {
      this.close((err) => err ? reject(err) : resolve())
    })
  }

  [EventEmitter.captureRejectionSymbol] (err, event, ...args) {
    if (event === 'request' || event === 'checkContinue' || event === 'checkExpectation') {
      const req = args[0]
      const res = args[1]
      logger().error({ err, method: req.method, url: req.url }, 'the request handler rejected; answered 500')
      if (!res.headersSent && !res.writableEnded) {
        // none of the app's headers leak into the error response
        for (const name of res.getHeaderNames()) res.removeHeader(name)
        res.statusCode = 500
        res.end(STATUS_CODES[500])
      } else {
        res.destroy()
      }
      return
    }
    // elsewhere keep node's default: an unhandled rejection
    Promise.reject(err)
  }
}

defineLegacyClass(Server, EventEmitter, ServerMembers)

/**
 * What a router that serves this server alone (a standalone process's own) takes from it, read
 * live as node reads them per connection: the head timeout (headersTimeout, bounded by
 * requestTimeout), keepAliveTimeout, maxHeaderSize, insecureHTTPParser, node's 408 for a head that did not
 * come in time, each accepted connection ('connection') and 'clientError'. A missing
 * Host is not the router's to reject here: the server checks requireHostHeader itself,
 * after 'upgrade' took its requests, as node does (server-handle.js onRequest). A server
 * that listened on a port owns it as node's does (ownsPort): its requests keep the
 * target and Host as the client sent them, and a client's FIN is heard within 10 ms
 * (node: at once; the router needs a turn of the local socket to hear whether the app
 * answered). A shared router (the supervisor's hub, HTTP.SYS) keeps its own rules.
 */
function routerSettings (server, handle, target) {
  return {
    answersTimeouts: true,
    ownsPort: target.byPort === true,
    finGrace: target.byPort === true ? OWN_PORT_FIN_GRACE_MS : undefined,
    onConnection: (conn) => handle.accepted(conn),
    onClientError: (conn, err) => handle.clientError(conn, err),
    onConnectionClose: (id) => handle.onConnectionClose(id),
    onIdleTimeout: (conn) => handle.idleTimeout(conn.id),
    get headersTimeout () {
      const h = Number(server.headersTimeout) || 0
      const r = Number(server.requestTimeout) || 0
      return h > 0 && r > 0 ? Math.min(h, r) : (h || r)
    },
    // (the router's coarse clock waits 1 to 2 s beyond it: node's socket waits 1 s
    // beyond the advertised value, its HTTP_SERVER_KEEP_ALIVE_TIMEOUT_BUFFER)
    get keepAliveTimeout () { return Number(server.keepAliveTimeout) || 0 },
    get maxHeaderSize () {
      // (node's default is http.maxHeaderSize: --max-http-header-size, else 16 KiB)
      const n = Number(server.maxHeaderSize) || Number(nodeHttp.maxHeaderSize)
      return n > 0 ? Math.min(n, 65535) : 16384
    },
    // node's lenient parser (the option, else --insecure-http-parser), on the port the
    // server owns: the router's parser then takes any header value byte but CR and LF
    get insecureHTTPParser () {
      return typeof server.insecureHTTPParser === 'boolean' ? server.insecureHTTPParser : insecureFlag()
    },
    // node's: a client's FIN aborts nothing, every request it sent is answered
    get allowHalfOpen () { return server.httpAllowHalfOpen === true },
    requireHostHeader: false,
    // (the native router's own port checks it itself: src/preload/standalone-native.js)
    get serverRequiresHost () { return server.requireHostHeader !== false }
  }
}

// node's --insecure-http-parser, given on the command line or in NODE_OPTIONS
let insecureFlagValue = null
function insecureFlag () {
  if (insecureFlagValue === null) {
    insecureFlagValue = process.execArgv.includes('--insecure-http-parser') ||
      /(?:^|\s)--insecure-http-parser(?:\s|$)/.test(process.env.NODE_OPTIONS || '')
  }
  return insecureFlagValue
}

/** The server's handles that have connections: the listening one, those closing, the adopter's. */
function handlesOf (server) {
  const handles = [...server[kClosing]]
  if (server[kHandle] !== null) handles.push(server[kHandle])
  const a = server[kAdopter]
  if (a !== null && a !== false) handles.push(a.handle)
  return handles
}

/**
 * A stream handed to the server ('connection'): served as a connection of a port the
 * server owns (node's parser rules, 'clientError', its timeouts), on a queue of its own
 * of this process's own router, through a handle that is not the listening one (listen() and
 * close() leave it alone, as node's close() leaves such a socket alone).
 */
function adopt (server, socket) {
  if (typeof socket.on !== 'function' || typeof socket.write !== 'function' || socket.destroyed === true) return
  // (an https server's stream would need its TLS handshake first: not served here)
  if (server[kTlsOptions]) return
  let a = server[kAdopter]
  if (a === null) {
    const backend = backendOf(server)
    a = false
    if (typeof backend.adopt === 'function') {
      const handle = new ServerHandle(server, ADOPTED)
      handle.adopted = true
      const adopter = backend.adopt({ handlers: handle.handlers, settings: routerSettings(server, handle, ADOPTED) })
      a = { handle, take: adopter.take }
      adopter.attaching.then((attachment) => {
        handle.attachment = attachment
        handle.startChecker()
      }, (err) => {
        server[kAdopter] = false
        server.emit('error', err)
      })
    }
    server[kAdopter] = a
  }
  if (a === false) return
  a.take(socket)
}

// what an adopted stream's handle stands for: no address, the server's own rules
const ADOPTED = Object.freeze({ byPort: true, adopted: true, queue: undefined, urls: [], path: undefined, callback: null, signal: null })

function optionalInteger (options, key, fallback) {
  const value = options[key]
  if (value === undefined) return fallback
  if (typeof value !== 'number') throw new codes.ERR_INVALID_ARG_TYPE({ name: key, expected: 'of type number', actual: value })
  if (!Number.isInteger(value)) throw new codes.ERR_OUT_OF_RANGE({ name: key, range: 'an integer', received: value })
  if (value < 0 || value > Number.MAX_SAFE_INTEGER) {
    throw new codes.ERR_OUT_OF_RANGE({ name: key, range: `>= 0 && <= ${Number.MAX_SAFE_INTEGER}`, received: value })
  }
  return value
}

function optionalBoolean (options, key, fallback) {
  const value = options[key]
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') throw new codes.ERR_INVALID_ARG_TYPE({ name: `options.${key}`, expected: 'of type boolean', actual: value })
  return value
}

function emitClose (server) {
  server.emit('close')
}

// node emits 'listening' on the tick after a synchronous bind, unless close() came first
function emitListening (server, handle) {
  if (handle.closing || handle.listeningEmitted) return
  handle.listeningEmitted = true
  server.emit('listening')
}

function backendOf (server) {
  if (server[kBackend] !== null) return server[kBackend]
  if (defaultBackend !== null) return defaultBackend
  // loaded on first listen only: requiring src/http must not start a backend
  return require('../queue').getBackend() || noRouter
}

// src/http without the preload and without a supervisor: there is nothing to attach to
// (the preload starts its own hub in that case).
const noRouter = {
  attach () {
    return Promise.reject(new codes.ERR_HTTPSYS_HUB_UNREACHABLE({ path: '(no supervisor: start the app with `httpsys start` or `node --require httpsys-cli/register`)' }))
  }
}

function onAttached (server, handle, attachment) {
  handle.attachment = attachment
  if (handle.closing) {
    // close() came while attaching: nothing was received, so nothing to wait for
    handle.detached = true
    handle.maybeClosed()
    return
  }
  handle.startChecker()
  if (server._unref && typeof attachment.unref === 'function') attachment.unref()
  emitListening(server, handle)
}

// Apps test err.code === 'EADDRINUSE' to try another port or to print a hint: a port
// or prefix someone else holds keeps that code (and syscall/errno/port, as node's
// listen errors have). The httpsys code and its message with the fix stay on the
// error as err.httpsysCode and err.message.
const NODE_CODES = {
  ERR_HTTPSYS_PORT_IN_USE: ['EADDRINUSE', -98],
  ERR_HTTPSYS_URL_CONFLICT: ['EADDRINUSE', -98],
  ERR_HTTPSYS_ACCESS_DENIED: ['EACCES', -13],
  ERR_HTTPSYS_ADDRESS_UNAVAILABLE: ['EADDRNOTAVAIL', -99]
}

function onAttachFailed (server, handle, err) {
  if (server[kHandle] === handle) server[kHandle] = null
  server[kClosing].delete(handle)
  forgetServer(server)
  handle.release()
  handle.closed = true
  handle.ended = true
  if (handle.closing) {
    process.nextTick(emitClose, server)
    return
  }
  if (err && typeof err === 'object' && unhandledUnderSupervisor(server, err)) return
  if (err && typeof err === 'object') {
    const mapped = NODE_CODES[err.code]
    if (mapped !== undefined) {
      err.httpsysCode = err.code
      err.code = mapped[0]
      err.errno = mapped[1]
      if (err.port === undefined) err.port = handle.target.port
      if (err.address === undefined) err.address = handle.target.address
    }
    if (err.syscall === undefined) err.syscall = 'listen'
  }
  server.emit('error', err)
}

// Under `httpsys start`, an app that does not listen for its server's 'error' would die
// of an attach failure (a port someone holds, an https prefix with no certificate) with
// a stack of httpsys's own frames, once per restart attempt: it reads as an httpsys
// crash (issue 28). The same exit, with the one line the CLI prints for the same error
// from -u. Standalone, and with an 'uncaughtException' listener, node's behaviour stays.
function unhandledUnderSupervisor (server, err) {
  if (typeof err.code !== 'string' || !err.code.startsWith('ERR_HTTPSYS_') || server.listenerCount('error') > 0) return false
  if (require('../worker-interface').readWorkerEnv().supervisorPid === null || process.listenerCount('uncaughtException') > 0) return false
  // synchronous: a pipe's stderr is not on every platform, and the process ends now
  require('node:fs').writeSync(2, `httpsys: ${err.message} (${err.code})\n`)
  process.exit(1)
}

function watchSignal (server, signal) {
  if (signal.aborted) {
    process.nextTick(() => server.close())
    return
  }
  signal.addEventListener('abort', () => server.close(), { once: true })
}

function logger () {
  if (log === null) log = require('../logger').child({ component: 'http' })
  return log
}

/**
 * http.createServer([options][, requestListener])
 * @returns {Server}
 */
function createServer (options, requestListener) {
  return new Server(options, requestListener)
}

module.exports = { Server, createServer, setDefaultBackend }
