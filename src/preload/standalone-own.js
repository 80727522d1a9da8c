'use strict'

// What both standalone routers (standalone-native.js, standalone-native-win.js) share,
// and what the files of the router node hands sockets to (standalone-cluster.js,
// standalone-paths.js, standalone-prefixes.js) build their listen()s with.

const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const localSocket = require('../local-socket')
const { codes } = require('../errors')

// httpsys-<pid>-<8 hex>.sock: the worker socket of a standalone process's router
const OWN_SOCKET = /^httpsys-(\d+)-[0-9a-f]{8}\.sock$/

/**
 * A name for this process's router's worker socket (OWN_SOCKET). A socket file goes
 * when the process exits; what the routers of killed processes left is removed soon
 * after (a Windows pipe has no file to remove).
 */
function ownSocketPath (platform = process.platform) {
  const file = localSocket.socketPath(`httpsys-${process.pid}-${crypto.randomBytes(4).toString('hex')}`)
  if (platform !== 'win32') {
    process.once('exit', () => {
      try { fs.unlinkSync(file) } catch {}
    })
    setImmediate(() => {
      try {
        localSocket.removeDeadSockets(path.dirname(file), OWN_SOCKET)
      } catch {}
    }).unref()
  }
  return file
}

// The router's records: errors only, on stderr (an app's own output is its own).
const quietLogger = {
  level: 'error',
  child () { return this },
  trace () {},
  debug () {},
  info () {},
  warn () {},
  error (fields, msg) { process.stderr.write(`httpsys router: ${msg}\n`) },
  fatal (fields, msg) { process.stderr.write(`httpsys router: ${msg}\n`) }
}

// While a listen() is on its way to the router, the process stays up (node's
// listening handle would keep it up); nothing of the router's keeps it up otherwise.
let inFlight = 0
let keepAlive = null
function hold () {
  if (inFlight++ === 0) keepAlive = setInterval(() => {}, 1 << 30)
}
function unhold () {
  if (--inFlight === 0) {
    clearInterval(keepAlive)
    keepAlive = null
  }
}

/** Whether the router takes this listen() on a port of the server's own (http or https). */
function takesOwnPort (options) {
  if (options.path !== undefined || !Array.isArray(options.urls) || options.urls.length !== 1) return false
  return options.settings !== null && options.settings !== undefined && options.settings.ownsPort === true
}

/** A new queue of this process's (a ~pid.listenN or ~pid.adoptN name, one N for both, which a URL_CONFLICT names) and its token. */
function newQueue (own, kind = 'listen') {
  return { name: `~${process.pid}.${kind}${own.next()}`, token: crypto.randomBytes(18).toString('base64url') }
}

// A listen() neither the router nor its paths or prefixes take: the in-process JS hub
// served these until it was removed (issue 25); now it is the server's 'error'.
function unserved (options) {
  const target = options.path !== undefined ? options.path : (options.urls || []).join(' ')
  const what = options.path !== undefined ? 'this socket path' : 'this listen() (one port or URL prefix per server)'
  return new codes.ERR_HTTPSYS_LISTEN_UNSERVED({ target, what })
}

/**
 * The server's settings for the connections of its port (src/http/server.js
 * routerSettings), as they are at listen() (router/internal/conn/owned.go).
 */
function ownSettings (st) {
  return {
    keepAliveTimeout: Number(st.keepAliveTimeout) || 0,
    headersTimeout: Number(st.headersTimeout) || 0,
    maxHeaderSize: Number(st.maxHeaderSize) || 0,
    finGrace: Number(st.finGrace) || 0,
    allowHalfOpen: st.allowHalfOpen === true,
    insecureHTTPParser: st.insecureHTTPParser === true,
    requireHost: st.serverRequiresHost !== false
  }
}

// A bind refused, by node (its system error) or by the router (its coded answer), as
// the system error node would have had: its code, and the message node writes.
const BIND_REFUSED = {
  ERR_HTTPSYS_PORT_IN_USE: ['EADDRINUSE', 'address already in use'],
  ERR_HTTPSYS_ACCESS_DENIED: ['EACCES', 'permission denied'],
  ERR_HTTPSYS_ADDRESS_UNAVAILABLE: ['EADDRNOTAVAIL', 'address not available']
}

/**
 * A standalone listen() that could not bind, as the server's 'error' names it whoever
 * bound (node, or the router where node cannot hand a socket over: Windows):
 * ERR_HTTPSYS_PORT_IN_USE (with the port's owner), ERR_HTTPSYS_ACCESS_DENIED,
 * ERR_HTTPSYS_ADDRESS_UNAVAILABLE, with node's system error as the cause. A socket
 * path in use is ERR_HTTPSYS_PORT_IN_USE naming the path; refused, node's own error.
 * @param {Error} err node's (EADDRINUSE, EACCES, EPERM, EADDRNOTAVAIL) or the router's
 * @param {number|string} port the port asked for, or the socket path
 * @param {string} [host] the address asked for (a port's)
 * @returns {Error} err itself where it is none of these
 */
function bindError (err, port, host) {
  const isPath = typeof port === 'string'
  let system = err
  if (BIND_REFUSED[err.code] !== undefined) {
    const [code, what] = BIND_REFUSED[err.code]
    const address = isPath ? port : host || '::'
    system = Object.assign(new Error(`listen ${code}: ${what} ${isPath ? port : `${address}:${port}`}`),
      { code, errno: code, syscall: 'listen', address, port: isPath ? -1 : port })
  }
  switch (system.code) {
    case 'EADDRINUSE':
      if (isPath) return new codes.ERR_HTTPSYS_PORT_IN_USE({ port, cause: system })
      return new codes.ERR_HTTPSYS_PORT_IN_USE({ port, host, owner: require('../port-owner').findPortOwner(port), cause: system })
    case 'EACCES':
    case 'EPERM':
      return isPath ? system : new codes.ERR_HTTPSYS_ACCESS_DENIED({ port, host, cause: system })
    case 'EADDRNOTAVAIL':
      return isPath ? err : new codes.ERR_HTTPSYS_ADDRESS_UNAVAILABLE({ port, host, cause: system })
  }
  return err
}

/**
 * Sends `msg` with no socket on the router's IPC channel (standalone-native.js
 * ensureRouter's `r`); the router's "listened" answer settles it.
 * @returns {Promise<object>}
 */
function ask (r, msg) {
  return new Promise((resolve, reject) => {
    msg.seq = ++r.seq
    r.pending.set(msg.seq, { resolve, reject })
    try {
      r.child.send(msg, (err) => {
        if (err) {
          r.pending.delete(msg.seq)
          reject(err)
        }
      })
    } catch (err) {
      r.pending.delete(msg.seq)
      reject(err)
    }
  })
}

/**
 * Sends a connection node accepted (or a cluster's primary gave this worker) to the
 * router, which serves it on `queue` ({"httpsys": "conn"}); an IPv4 one accepted on a
 * dual-stack socket is marked so, as the router names its addresses then.
 * @param {() => void} [unsent] called, once, where it could not be sent (destroyed then)
 */
function forward (r, socket, queue, unsent) {
  const dual = typeof socket.localAddress === 'string' && socket.localAddress.startsWith('::ffff:')
  let failed = false
  const fail = () => {
    if (failed) return
    failed = true
    socket.destroy()
    if (unsent !== undefined) unsent()
  }
  try {
    r.child.send({ httpsys: 'conn', queue, dual }, socket, (err) => { if (err) fail() })
  } catch {
    fail()
  }
}

// port -> settles once the router has let it go: a port a server of this process
// closed a moment ago is still the router's until its unbindQueue is answered (node's
// close() frees it at once)
const releasing = new Map()

/** A server of this process gave `ports` back: they are the router's until `unbound` settles. */
function givenBack (ports, unbound) {
  for (const port of ports) releasing.set(port, unbound)
  unbound.then(() => {
    for (const port of ports) if (releasing.get(port) === unbound) releasing.delete(port)
  })
}

/**
 * node's bind of a listen()'s port (`p`, urlprefix.parse's) for the router: synchronous
 * for an address (a host name is looked up first), or once the router gave the port
 * back (givenBack). What node accepts on it goes to the router's queue `name` (forward):
 * the connections a cluster's primary gives this worker, and those accepted before the
 * socket itself went over.
 */
function nodeBinds (r, name, p) {
  const host = p.ip || undefined
  const server = net.createServer({ pauseOnConnect: true })
  server.on('connection', (socket) => forward(r, socket, name))
  const freeing = p.port !== 0 ? releasing.get(p.port) : undefined
  if (freeing === undefined) server.listen({ port: p.port, host })
  else freeing.then(() => server.listen({ port: p.port, host }))
  return server
}

/** `then`'s answer once node's server of `p` listens, or its bind error (bindError). */
function whenListening (server, p, then) {
  if (server.listening) return then()
  return new Promise((resolve, reject) => {
    server.once('listening', () => resolve(then()))
    server.once('error', (err) => reject(bindError(err, p.port, p.ip || undefined)))
  })
}

/**
 * After the router answered a listen: the settings an app set right after listen()
 * (server.keepAliveTimeout = ..., httpAllowHalfOpen) go too, where they changed from
 * `sent`, those the listen carried.
 */
function resendSettings (r, name, options, sent) {
  const now = ownSettings(options.settings)
  if (JSON.stringify(now) !== JSON.stringify(sent) && r.child.connected) r.child.send({ httpsys: 'settings', queue: name, settings: now }, () => {})
}

/**
 * The reservation (contract.js reserve()) of a server whose listen goes to the router
 * node hands sockets to (standalone-native.js ensureRouter's `r`), for queue `name`:
 * unbound until the caller places it, its `ready` the caller's. close() (release) is
 * unbindQueue once the listen has reached the router.
 * @param {object} [o]
 * @param {object} [o.options] reserve()'s options of a server that may be https:
 *   server.setSecureContext() then sends the new material (standalone-tls.js setTls)
 * @param {import('node:net').Server} [o.server] node's server that stays (a cluster
 *   worker's): closed with it, and its ref() and unref() are the reservation's
 * @param {(unbound: Promise<void>) => void} [o.onRelease] what else release() lets go;
 *   `unbound` settles once the router let the queue go
 */
function reservationOf (r, name, { options, server, onRelease } = {}) {
  const reservation = {
    bound: false,
    known: false,
    urls: [],
    ports: [],
    ready: null,
    released: false,
    refed: true,
    release () {
      if (reservation.released) return
      reservation.released = true
      if (server !== undefined) server.close()
      const unbound = reservation.ready.then(() => r.proc.call('unbindQueue', { name }), () => {}).catch(() => {})
      if (onRelease !== undefined) onRelease(unbound)
    },
    ref () {
      reservation.refed = true
      if (server !== undefined) server.ref()
    },
    unref () {
      reservation.refed = false
      if (server !== undefined) server.unref()
    }
  }
  if (options !== undefined) reservation.setTls = (tls) => require('./standalone-tls').setTls(r, name, options, reservation, tls)
  return reservation
}

module.exports = { OWN_SOCKET, ownSocketPath, quietLogger, hold, unhold, takesOwnPort, newQueue, unserved, ownSettings, bindError, ask, givenBack, nodeBinds, whenListening, forward, resendSettings, reservationOf }
