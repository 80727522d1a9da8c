'use strict'

// Standalone on the native router (issue 25 "Standalone"; docs/architecture.md 11): `node --require httpsys-cli/register app.js` with no
// supervisor runs the Go router as a child of its own, started on the first listen()
// and ended with the process (its stdin closes then, however the process ends).
//
// listen() stays synchronous because node binds: a net.Server listens on the port
// (so address() is known when listen() returns, and the bind errors are node's own,
// EADDRINUSE and EACCES), and its listening socket is handed to the router on node's
// IPC channel (child.send(message, server): the descriptor travels as SCM_RIGHTS, and
// router/internal/nodeipc reads it), which makes the server's queue on it. node's copy
// is closed once the descriptor is written, in a process.nextTick: node never polls
// it, so node never accepts a connection there; the router accepts what the kernel
// queued meanwhile. Workers attach to the router through the same hub client a
// supervised worker uses.
//
// listen(path) and the streams handed to a server (adopt) are standalone-paths.js's,
// listen(prefix) (a server that shares its port by path) standalone-prefixes.js's,
// a node cluster worker's listen() standalone-cluster.js's. https servers go with their
// key material (standalone-tls.js). Windows, where
// node cannot hand a descriptor over this way, has the router bind
// (standalone-native-win.js, standalone-native-win-paths.js).

const urlprefix = require('../urlprefix')
const hubClient = require('../queue/hub-client')
const { codes, fromAnswer } = require('../errors')

const {
  ownSocketPath, quietLogger, hold, unhold, takesOwnPort, newQueue, unserved, ownSettings,
  nodeBinds, whenListening, givenBack, resendSettings, reservationOf
} = require('./standalone-own')

let router = null // { proc, started: Promise<string>, pending: Map, seq }
let seq = 0

/**
 * Checks HTTPSYS_ROUTER as `httpsys start` does (unset or native; the JS hub that hub
 * asked for was removed, issue 25). Called at the first listen().
 * @throws ERR_HTTPSYS_CONFIG_INVALID for any other value
 */
function wanted (env = process.env, platform = process.platform) {
  const { wantsNativeRouter } = require('../supervisor/native-router')
  return wantsNativeRouter(env, platform)
}

/** This process's router, spawned once (synchronously: a listen() hands it a socket at once). */
function ensureRouter () {
  if (router !== null) return router
  const { RouterProcess } = require('../supervisor/router-process')
  const { routerLimits } = require('../supervisor/native-router')
  const proc = new RouterProcess({ logger: quietLogger, logLevel: 'error' })
  // named OWN_SOCKET: the router removes it when the app goes, however it goes (its
  // stdin closes), and what a killed router left is removed by the next standalone app
  const socketPath = ownSocketPath()
  const spawned = proc.spawn({ ipc: true })
  const child = proc.child
  const pending = new Map() // seq -> { resolve, reject }
  child.on('message', (m) => {
    if (m === null || typeof m !== 'object' || m.httpsys !== 'listened') return
    const p = pending.get(m.seq)
    if (p === undefined) return
    pending.delete(m.seq)
    if (m.error) p.reject(fromAnswer(m.error))
    else p.resolve(m)
  })
  // a router gone (killed, crashed) answers no listen() any more: they fail, and the
  // next listen() starts another
  proc.on('exit', (info) => {
    if (router !== null && router.proc === proc) router = null
    const err = new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: `the router process exited (${info.signal || `code ${info.code}`})` })
    for (const p of pending.values()) p.reject(err)
    pending.clear()
  })
  // the router's pipes never keep the app alive: its servers' attachments do, as a
  // node server's listening handle does
  child.unref()
  for (const s of [child.stdin, child.stdout, child.stderr]) if (s !== null && typeof s.unref === 'function') s.unref()
  if (child.channel && typeof child.channel.unref === 'function') child.channel.unref()
  const started = spawned
    .then(() => proc.call('start', { workerSocket: socketPath, workersMayCreate: false, limits: routerLimits(null) }))
    .then(() => socketPath)
  started.catch(() => {})
  router = { proc, child, started, pending, seq: 0 }
  return router
}

/**
 * Hands the listening server's socket to the router with the queue to make on it.
 * @returns {Promise<object>} the router's answer (urls, ports)
 */
function handOver (r, server, msg) {
  return new Promise((resolve, reject) => {
    msg.seq = ++r.seq
    r.pending.set(msg.seq, { resolve, reject })
    // node holds a message with a handle until the child acknowledged the last one
    // (NODE_HANDLE_ACK): a second listen() in the same tick waits a turn of the event
    // loop, in which node may accept on its copy; such connections follow it to the
    // router (forward), in order
    let sent
    try {
      sent = r.child.send(msg, server, (err) => {
        // written (a nextTick after a write that did not wait): node's copy goes now,
        // before the event loop could poll it and accept
        server.close()
        if (err) {
          r.pending.delete(msg.seq)
          reject(err)
        }
      })
    } catch (err) {
      r.pending.delete(msg.seq)
      server.close()
      return reject(err)
    }
    if (sent === false && r.child.connected === false) {
      r.pending.delete(msg.seq)
      server.close()
      reject(new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: 'the router process is not running' }))
    }
  })
}

// Whether the native router takes this listen() (else listen() is
// ERR_HTTPSYS_LISTEN_UNSERVED): an https server's port goes over with its key material
// (standalone-tls.js)
const takes = takesOwnPort

/** The queue backend of a standalone process on the native router (src/wire/contract.js). */
const backend = {
  listensOnPaths: true,

  reserve (options) {
    // (an https server's listen(path) too: served as plain HTTP, as the JS hub served it)
    if (options.path !== undefined) {
      // (a cluster worker's path is its primary's: standalone-cluster.js)
      if (require('node:cluster').isWorker) return require('./standalone-cluster').reservePath(options, own)
      const reservation = paths().reservePath(options, own)
      if (reservation !== null) return reservation
    }
    if (prefixes().takes(options)) return prefixes().reservePrefix(options, own)
    if (!takes(options)) throw unserved(options)
    // (a cluster worker's port is its primary's: its connections come to the worker)
    if (require('node:cluster').isWorker) return require('./standalone-cluster').reserve(options, own)
    // (a port this process's listen(prefix) servers share: this server's prefix joins them)
    if (prefixes().joinsShared(options)) return prefixes().reservePrefix(options, own)
    const p = urlprefix.parse(options.urls[0], { allowPortZero: true })
    const r = ensureRouter()
    const { name, token } = newQueue(own)
    options.queue = name
    options.token = token
    // (what node accepts there while the socket waits its turn on the IPC channel
    // follows it: see handOver)
    const server = nodeBinds(r, name, p)
    // (a listen(prefix) of this process may join the port: it goes back with the last)
    let giveBack = (done) => givenBack(reservation.ports, done)
    const reservation = reservationOf(r, name, { options, onRelease: (done) => giveBack(done) })
    const place = () => {
      const port = server.address().port
      const prefix = `${p.scheme}://${p.host}:${port}${p.path}`
      reservation.bound = true
      reservation.known = true
      reservation.urls = [prefix]
      reservation.ports = [port]
      // handed over in the next tick, still before the event loop polls node's copy: the
      // settings an app sets right after listen() (server.httpAllowHalfOpen = true) go
      // with the socket, and apply to the first connection
      const handedOver = new Promise((resolve) => process.nextTick(resolve)).then(() => handOverNow(prefix))
      if (!reservation.released) giveBack = prefixes().holdOwnPort(port, prefix, name, handedOver)
      return handedOver
    }
    const handOverNow = (prefix) => {
      const settings = ownSettings(options.settings)
      const tls = require('./standalone-tls').listenTls(options, prefix, server.address().port)
      return handOver(r, server, { httpsys: 'listen', queue: name, token, urls: [prefix], ip: p.ip || '', settings, ...tls }).then((answer) => {
        resendSettings(r, name, options, settings)
        return answer
      })
    }
    hold()
    const ready = whenListening(server, p, place)
    reservation.ready = ready.then(() => {}).finally(unhold)
    reservation.ready.catch(() => {})
    return reservation
  },

  async attach (options) {
    if (options.queue === undefined && !takes(options)) throw unserved(options)
    // alive until it settles: a bind that failed at once (EADDRINUSE) is the server's
    // 'error' once the router has started, and nothing else may hold the process then
    hold()
    try {
      const socketPath = await ensureRouter().started
      if (options.reservation) await options.reservation.ready
      return await hubClient.attach({ ...options, socketPath })
    } finally {
      unhold()
    }
  }
}

// the router and its hand-over, for standalone-paths.js (listen(path), the streams
// handed to a server) and standalone-prefixes.js (listen(prefix))
const paths = () => require('./standalone-paths')
const prefixes = () => require('./standalone-prefixes')
// (queue names: standalone-own.js newQueue)
const own = { ensureRouter, handOver, next: () => ++seq }

/** Streams handed to a server (register.js adopt), served by this process's router. */
const adopt = (options) => paths().adopt(options, own)

// Windows cannot hand a socket over this way: the router binds there, while listen()
// waits (standalone-native-win.js; HTTPSYS_STANDALONE_BIND=router runs that path here).
const routerBinds = process.platform === 'win32' || process.env.HTTPSYS_STANDALONE_BIND === 'router'
module.exports = {
  backend: routerBinds ? require('./standalone-native-win').backend : backend,
  wanted,
  adopt: routerBinds ? require('./standalone-native-win').adopt : adopt
}
