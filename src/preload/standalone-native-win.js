'use strict'

// Standalone on the native router where node cannot hand a listening socket to a child
// (Windows; issue 25 "Standalone"; docs/architecture.md 11): the router binds the port
// itself, while listen() waits.
//
// On Unix node binds and hands the socket over (standalone-native.js). On Windows,
// child.send(message, server) does send a TCP handle, but as libuv's own frame on the
// pipe holding a WSAPROTOCOL_INFOW that the child must turn back into a SOCKET with
// WSASocketW, and Go cannot serve a SOCKET it did not open: its net package has no
// FileListener or FileConn on Windows, so the router would need an accept loop and
// overlapped I/O of its own for such sockets, beside Go's. So here the router binds
// with Go's own net.Listen, and listen() stays synchronous by waiting for that: a
// worker thread (standalone-native-win-thread.js) owns the router's process and
// control channel, and listen() posts it bindPort and blocks in Atomics.wait on a
// SharedArrayBuffer until the answer is there. The port is known when listen()
// returns (address() after listen(0)), and a port in use or refused fails that
// listen() at once (the server's 'error', ERR_HTTPSYS_PORT_IN_USE as where node binds).
//
// The router accepts nothing on the port until the server's queue is made on it
// (bindQueue), in the tick after listen(): the settings an app sets right after
// listen() (keepAliveTimeout, httpAllowHalfOpen) go with it, and what connects
// meanwhile waits in the kernel's backlog. Everything after that is the Unix path's:
// the queue is reserved for this server's worker (hub-client.js over the router's
// worker pipe), its port is the server's own (conn/owned.go), and close() is
// unbindQueue. https servers, listen(path), listen(prefix) and the streams handed to a
// server take the same path (standalone-native-win-paths.js).
//
// The first listen() also waits for the thread and the router to start (tens of
// milliseconds); the next ones wait for one control round trip.
//
// The same path runs off Windows with HTTPSYS_STANDALONE_BIND=router, so that the
// Linux tests hold it to the behaviour of the path where node binds
// (test/integration/router-standalone.test.js runs both); test/windows/standalone-tests.js runs it under Wine and
// test/windows-host/native-router.js on Windows.

const path = require('node:path')
const { Worker } = require('node:worker_threads')
const urlprefix = require('../urlprefix')
const { codes, fromAnswer } = require('../errors')

const { ownSocketPath, hold, unhold, takesOwnPort, newQueue, unserved, ownSettings, bindError } = require('./standalone-own')

// how long listen() waits for the router: its start, or one bind
const SYNC_MS = 15000
const ANSWER_BYTES = 64 * 1024

let router = null // { worker, state, answer, calls, seq, socketPath, dead }
let seq = 0

/** This process's router, started (synchronously: listen() binds on it at once). */
function ensureRouter () {
  if (router !== null && !router.dead) return router
  const { findRouter } = require('../supervisor/router-binary')
  const binary = findRouter()
  const shared = new SharedArrayBuffer(8 + ANSWER_BYTES)
  const worker = new Worker(path.join(__dirname, 'standalone-native-win-thread.js'), { workerData: { shared }, stdout: false, stderr: false })
  const r = { worker, state: new Int32Array(shared, 0, 2), answer: new Uint8Array(shared, 8), calls: new Map(), seq: 0, socketPath: null, dead: false }
  worker.on('message', (m) => {
    if (m.exit !== undefined) return gone(r, `the router process exited (${m.exit.signal || `code ${m.exit.code}`})`)
    const p = r.calls.get(m.id)
    if (p === undefined) return
    r.calls.delete(m.id)
    if (m.error) p.reject(fromAnswer(m.error))
    else p.resolve(m.fields)
  })
  worker.on('error', (err) => gone(r, `its thread failed (${err.message})`))
  worker.on('exit', () => gone(r, 'its thread ended'))
  // the thread and the router never keep the app alive: its servers' attachments do
  // (after the listeners: adding a 'message' one refs the worker's port again)
  worker.unref()
  router = r
  // named OWN_SOCKET (standalone-own.js)
  r.socketPath = ownSocketPath()
  try {
    callSync(r, 'boot', { binary, workerSocket: r.socketPath })
  } catch (err) {
    gone(r, err.message)
    worker.terminate()
    throw err
  }
  return r
}

function gone (r, reason) {
  if (r.dead) return
  r.dead = true
  if (router === r) router = null
  const err = new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason })
  for (const p of r.calls.values()) p.reject(err)
  r.calls.clear()
}

/** One control call that listen() waits for: the thread answers in the shared buffer. */
function callSync (r, cmd, args) {
  if (r.dead) throw new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: 'the router process is not running' })
  Atomics.store(r.state, 0, 0)
  r.worker.postMessage({ cmd, args, sync: true })
  if (Atomics.wait(r.state, 0, 0, SYNC_MS) === 'timed-out') {
    // its late answer would land in the buffer as the next call's: this router is done
    // with, and the next listen() starts another
    const reason = `the router did not answer ${cmd} within ${SYNC_MS} ms`
    gone(r, reason)
    r.worker.terminate()
    throw new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason })
  }
  const reply = JSON.parse(Buffer.from(r.answer.subarray(0, Atomics.load(r.state, 1))).toString())
  if (reply.error) throw fromAnswer(reply.error)
  return reply.fields
}

/** One control call answered by message (the thread's postMessage), in order after the ones posted before. */
function call (r, cmd, args) {
  if (r.dead) return Promise.reject(new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: 'the router process is not running' }))
  const id = ++r.seq
  return new Promise((resolve, reject) => {
    r.calls.set(id, { resolve, reject })
    r.worker.postMessage({ id, cmd, args, sync: false })
  })
}

const takes = takesOwnPort

const winPaths = () => require('./standalone-native-win-paths')

/**
 * The reservation of a server whose socket the router bound for queue `name`
 * (bindPort, bindPath): its queue is made in the next tick, after `after` (the
 * settings set right after listen() go along), or at once when the server closes
 * first: either way before any later call of this process, so a listen() after
 * close() finds the port free. close() is unbindQueue.
 * @param {() => object} argsOf the `cmd` call's arguments, when it is made
 */
function placed (r, name, options, argsOf, after = Promise.resolve(), cmd = 'bindQueue') {
  let made = null
  const make = () => {
    if (made !== null) return made
    const args = argsOf()
    const settings = args.settings
    made = call(r, cmd, args).then((answer) => {
      // an app often sets them right after listen(): what changed by the time the
      // router answered goes too
      if (settings !== undefined) {
        const now = ownSettings(options.settings)
        if (JSON.stringify(now) !== JSON.stringify(settings)) call(r, 'setOwnSettings', { name, settings: now }).catch(() => {})
      }
      return answer
    })
    return made
  }
  hold()
  const ready = new Promise((resolve) => process.nextTick(resolve)).then(() => after).then(make)
  const reservation = {
    socketPath: r.socketPath, // the router that bound it, whatever happens to it later
    bound: true,
    known: true,
    urls: [],
    ports: [],
    ready: ready.then(() => {}).finally(unhold),
    released: false,
    release () {
      if (reservation.released) return
      reservation.released = true
      make().catch(() => {})
      call(r, 'unbindQueue', { name }).catch(() => {})
    },
    // server.setSecureContext() (standalone-tls.js): new handshakes get the new material
    setTls (tls) {
      options.tls = tls
      if (tls === null) return
      reservation.ready.then(() => {
        if (!reservation.released) call(r, 'setOwnTLS', { name, ...require('./standalone-tls').fieldsOf(tls) }).catch(() => {})
      }, () => {})
    },
    ref () {},
    unref () {}
  }
  reservation.ready.catch(() => {})
  return reservation
}

/** The queue backend of a standalone process on the native router, where the router binds (src/wire/contract.js). */
const backend = {
  listensOnPaths: true,

  reserve (options) {
    if (options.path !== undefined && !options.tls) return winPaths().reservePath(options, own)
    if (winPaths().takesPrefix(options)) return winPaths().reservePrefix(options, own)
    if (!takes(options)) throw unserved(options)
    // (a port this process's listen(prefix) servers share: this server's prefix joins them)
    if (winPaths().joinsShared(options)) return winPaths().reservePrefix(options, own)
    const p = urlprefix.parse(options.urls[0], { allowPortZero: true })
    const r = ensureRouter()
    const { name, token } = newQueue(own)
    options.queue = name
    options.token = token
    const ip = p.ip || ''
    let port
    try {
      port = callSync(r, 'bindPort', { name, ip, port: p.port }).port
    } catch (err) {
      throw bindError(err, p.port, p.ip || undefined)
    }
    const prefix = `${p.scheme}://${p.host}:${port}${p.path}`
    // an https server's key material goes with its queue (standalone-tls.js), so its
    // certificate serves from the first connection on
    const reservation = placed(r, name, options, () => ({ name, token, urls: [prefix], ip, settings: ownSettings(options.settings), ...require('./standalone-tls').listenTls(options, prefix, port) }))
    reservation.urls = [prefix]
    reservation.ports = [port]
    // (a listen(prefix) of this process may join the port)
    const leave = winPaths().holdOwnPort(port, prefix, name, reservation.ready)
    const release = reservation.release
    reservation.release = () => {
      leave()
      release()
    }
    return reservation
  },

  async attach (options) {
    if (options.queue === undefined && !takes(options)) throw unserved(options)
    hold()
    try {
      const socketPath = options.reservation ? options.reservation.socketPath : ensureRouter().socketPath
      if (options.reservation) await options.reservation.ready
      // (loaded after listen() has returned)
      return await require('../queue/hub-client').attach({ ...options, socketPath })
    } finally {
      unhold()
    }
  }
}

// for standalone-native-win-paths.js (listen(path), listen(prefix), handed streams)
const own = { ensureRouter, callSync, call, placed, next: () => ++seq }

/** Streams handed to a server (register.js adopt), served by this process's router. */
const adopt = (options) => winPaths().adopt(options, own)

module.exports = { backend, adopt }
