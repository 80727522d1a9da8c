'use strict'

// The preload: `node --require httpsys-cli/register app.js`.
//
// It swaps node's http server classes for httpsys ones before the app (or a framework
// such as express, which builds its request/response prototypes from
// http.IncomingMessage/ServerResponse when it is first required) loads, so an
// unmodified app receives its requests from a request queue.
//
// Rules this file decides (docs/architecture.md 7, "The preload"):
// - Under the supervisor (HTTPSYS_HUB or HTTPSYS_BACKEND=httpsys, and HTTPSYS_QUEUE)
//   every server that listens attaches to the app's queue. The app's own fork()
//   children and cluster workers inherit this preload through execArgv and the
//   environment, so they attach to the same queue too: a cluster app becomes N workers
//   on one queue, which is what it meant. Their pids are not instances of the
//   supervisor, so they never count for readiness.
// - Standalone (no router given) the preload starts the Go router as its child
//   (preload/standalone-native.js), so the app still serves on the port it asked for. Streams handed to a server are this process's to serve, under a
//   supervisor too: on such a router of its own.
// - https servers attach like http ones: both routers terminate TLS (HTTP.SYS from the
//   machine's certificate bindings, the native router from the config's tls entries or the
//   key/cert the app passed to https.createServer). Only the server side is swapped:
//   node's https client (request, get, Agent) stays node's own. http2 servers stay
//   node's own (README "HTTPS and HTTP/2" says why).
// - The supervisor stops a worker with an IPC message, never with a signal (on
//   Windows a child gets no SIGTERM: libuv turns every signal into
//   TerminateProcess). The message becomes the app's own SIGTERM/SIGINT listeners
//   when it has any, else a graceful close of every httpsys server and an exit once
//   they are idle.
// - Readiness: the first time a server of this process attaches to its queue, the
//   preload tells the supervisor (MSG.READY). HTTP.SYS never says when a process opens
//   a queue, so this is how the supervisor learns it there (the hub sees the attach
//   itself too). Only the supervisor's own child says it. An app that forks its own
//   cluster workers (node's cluster module) listens in them, not in the primary: the
//   first of them to attach tells the primary with an internal cluster message
//   (CLUSTER_READY: a `NODE_` cmd, which node keeps from the app's 'message'
//   listeners), and the primary's preload tells the supervisor.
// The IPC messages and environment variables are src/worker-interface.js's.

const http = require('node:http')
const https = require('node:https')
const { syncBuiltinESMExports } = require('node:module')
const ours = require('./http')
const { MSG, readWorkerEnv } = require('./worker-interface')

const kInstalled = Symbol.for('httpsys.register.installed')
// a cluster worker of the app -> its primary: a server of it attached (node routes a
// message whose cmd starts with NODE_ to 'internalMessage', never to the app)
const CLUSTER_READY = 'NODE_HTTPSYS_READY'
let readySent = false

function install () {
  if (globalThis[kInstalled]) return
  globalThis[kInstalled] = true

  const worker = readWorkerEnv()
  if (worker.noHttp) {
    // an app of type 'worker': node's http stays; only the supervisor's IPC is answered
    if (typeof process.send === 'function' && isSupervisorChild(worker)) listenForShutdown()
    return
  }
  replace(http, ours)
  // perf_hooks 'http' entries for our responses, as node's make them (src/http/perf-entries.js)
  require('./http/perf-entries').install()
  https.createServer = ours.https.createServer
  https.Server = ours.https.Server
  // ESM `import { createServer } from 'node:http'` reads the builtin's named exports,
  // which are a snapshot: refresh them so ESM apps see our classes too.
  syncBuiltinESMExports()

  // Only the supervisor's own child speaks the protocol. The app's fork() children inherit
  // the IPC-looking environment but their channel is the app's: listening there (and
  // unref()ing it, exiting on its 'disconnect') would break the app's own messaging.
  const routed = worker.hub !== null || worker.queue !== null
  const supervised = typeof process.send === 'function' && isSupervisorChild(worker) && routed
  let sayReady = null
  if (supervised) {
    listenForShutdown()
    if (worker.queue !== null) {
      sayReady = () => reply({ type: MSG.READY })
      // the app's own cluster workers serve the queue: the first attach among them is
      // this process's readiness too
      require('node:cluster').on('fork', (w) => {
        w.process.on('internalMessage', (msg) => {
          if (msg !== null && typeof msg === 'object' && msg.cmd === CLUSTER_READY) ready(sayReady)
        })
      })
    }
  } else if (routed && typeof process.send === 'function' && require('node:cluster').isWorker) {
    sayReady = () => reply({ cmd: CLUSTER_READY })
  }
  ours.setDefaultBackend(defaultBackend(sayReady, supervised))
}

/** Says once that this process (or one of its cluster workers) serves. */
function ready (say) {
  if (readySent) return
  readySent = true
  say()
}

function isSupervisorChild (worker) {
  return worker.supervisorPid === null || worker.supervisorPid === process.ppid
}

// Every server of the app attaches through this: the router the environment names
// (src/queue), else a router of this process's own (its child). Chosen on the first listen(), so
// loading the preload loads no backend. With `sayReady`, the first attach that
// succeeds says so (MSG.READY to the supervisor, or CLUSTER_READY to the app's
// primary). Servers given their own `queueBackend` are not the app's and do not count.
function defaultBackend (sayReady, supervised) {
  let chosen = null
  const choose = () => {
    if (chosen === null) chosen = require('./queue').getBackend() || standaloneBackend()
    return chosen
  }
  return {
    get listensOnPaths () {
      return choose().listensOnPaths === true
    },
    reserve (options) {
      const b = choose()
      return typeof b.reserve === 'function' ? b.reserve(options) : null
    },
    // streams the app hands a server (server.emit('connection', socket)) are this
    // process's to serve, whatever router its listen() uses (a stream cannot reach a
    // supervisor's router): a native router of its own, as a standalone process's
    // (started at the first stream, under a supervisor too, issue 25)
    adopt (options) {
      const native = require('./preload/standalone-native')
      native.wanted() // HTTPSYS_ROUTER=hub (the removed JS hub) is an error
      return native.adopt(options)
    },
    attach (options) {
      choose()
      if (supervised) options = { ...options, handlers: watchRouter(options.handlers) }
      const attaching = chosen.attach(options)
      if (readySent || sayReady === null) return attaching
      return Promise.resolve(attaching).then((attachment) => {
        ready(sayReady)
        return attachment
      })
    }
  }
}

// No router given: this process's own, the native router's child
// (preload/standalone-native.js).
function standaloneBackend () {
  const native = require('./preload/standalone-native')
  native.wanted() // HTTPSYS_ROUTER=hub (the removed JS hub) is an error
  return native.backend
}

// An attachment that ends with an error (not our own close) means the router is gone,
// which under the supervisor usually means the supervisor is.
function watchRouter (handlers) {
  const onClose = handlers.onClose
  return {
    ...handlers,
    onClose (err) {
      if (err) supervisorMayBeGone()
      if (typeof onClose === 'function') onClose.call(handlers, err)
    }
  }
}

function replace (target, source) {
  target.createServer = source.createServer
  target.Server = source.Server
  target.IncomingMessage = source.IncomingMessage
  target.ServerResponse = source.ServerResponse
}

function listenForShutdown () {
  process.on('message', onMessage)
  process.on('disconnect', onDisconnect)
  // A 'message' listener refs the IPC channel, which would keep an app alive that
  // would otherwise exit on its own (a script that finished its work).
  if (process.channel && typeof process.channel.unref === 'function') process.channel.unref()
}

let stopping = false
let draining = false
const parentAtStart = process.ppid
// how long the group gets between SIGTERM and SIGKILL once the supervisor is gone
const ORPHAN_TERM_MS = 500
// the kernel closes a dying process's sockets just before it re-parents its children
const PARENT_GONE_POLL_MS = 20
const PARENT_GONE_WAIT_MS = 1000
const PARENT_GONE_AT_EXIT_MS = 200

// The channel closed. Either the supervisor is gone (killed, crashed): it owned the hub,
// so nothing here can serve again, and since this process leads its own group nobody
// else will stop what the app started: take the group down and leave, rather than
// linger as orphans. Or the app closed the channel itself (process.disconnect()): the
// supervisor still runs and stops it by signal; nothing to do. Told apart by the parent
// pid, which changes once the supervisor has died (a moment after its sockets close).
function onDisconnect () {
  // (Windows: no groups, and libuv's job object takes the app's children with the supervisor)
  if (process.platform === 'win32' || !leadsOwnGroup()) return process.exit(0)
  supervisorMayBeGone()
}

let watchingParent = false

// Called when the IPC channel closes, and when the hub's connection ends under a server
// (the router went away): whichever the event loop sees first when the supervisor dies.
// The app's server then fails with ERR_HTTPSYS_QUEUE_CLOSED and the app often exits
// within milliseconds, before any timer and before 'disconnect': the 'exit' hook takes
// the group down in that case, the poll when the app lingers.
function supervisorMayBeGone () {
  if (watchingParent || process.platform === 'win32' || !leadsOwnGroup()) return
  watchingParent = true
  process.on('exit', () => {
    if (parentGone(PARENT_GONE_AT_EXIT_MS)) killGroup('SIGKILL')
  })
  let polls = 0
  const check = () => {
    if (process.ppid !== parentAtStart) return leaveAsOrphan()
    if (++polls < PARENT_GONE_WAIT_MS / PARENT_GONE_POLL_MS) setTimeout(check, PARENT_GONE_POLL_MS).unref()
  }
  check()
}

function leaveAsOrphan () {
  // SIGTERM reaches this process too: it must outlive the group's grace period, and the
  // app's own SIGTERM listeners would stop it early (before the SIGKILL of the rest)
  process.removeAllListeners('SIGTERM')
  process.on('SIGTERM', () => {})
  killGroup('SIGTERM')
  // the last word (this process is in the group as well); the 'exit' hook says it
  // sooner when the app exits first
  setTimeout(() => process.exit(0), ORPHAN_TERM_MS)
}

/** Synchronously, at exit: whether the parent has gone, waiting up to ms for the kernel to say so. */
function parentGone (ms) {
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (let waited = 0; process.ppid === parentAtStart; waited += 5) {
    if (waited >= ms) return false
    Atomics.wait(pause, 0, 0, 5)
  }
  return true
}

function killGroup (signal) {
  try { process.kill(-process.pid, signal) } catch {}
}

// the supervisor spawns its workers detached on POSIX: each leads a group named by its pid
function leadsOwnGroup () {
  try {
    process.kill(-process.pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

function onMessage (msg) {
  if (!msg) return
  if (msg.type === MSG.DRAIN) return drain()
  if (msg.type === MSG.STATS) return reportStats()
  if (msg.type !== MSG.SHUTDOWN || stopping) return
  stopping = true
  closeUpgradesBefore(msg.deadline)
  const signal = process.listenerCount('SIGTERM') > 0
    ? 'SIGTERM'
    : process.listenerCount('SIGINT') > 0 ? 'SIGINT' : null
  if (signal) {
    // The app knows how to stop itself (close its servers, its pools): let it.
    process.emit(signal, signal)
    return
  }
  closeServersThenExit()
}

// Upgraded connections (WebSocket) outlive a drain: they may go on until the stop's
// deadline (kill_timeout), and are closed just before it, so the app hears their
// 'close' (ws: a close event it can log or count) before its process is killed, and a
// server whose close() waits for them can still call back.
const UPGRADE_CLOSE_MARGIN_MS = 500

function closeUpgradesBefore (deadline) {
  const left = Number(deadline) - Date.now()
  const at = Number.isFinite(left) ? Math.max(0, left - Math.min(UPGRADE_CLOSE_MARGIN_MS, left / 4)) : 0
  setTimeout(ours.closeUpgradedSockets, at).unref()
}

// server.close() detaches from the queue (requests not received yet stay queued for the
// other workers) and calls back once the requests in flight are answered. The app's own
// SIGTERM handler may call close() again later: it then gets ERR_SERVER_NOT_RUNNING, as
// on node, and still its callback.
function drain () {
  if (draining) return
  draining = true
  // A drain is always followed by MSG.SHUTDOWN (stop, reload): the process waits for it,
  // so an app's own SIGTERM handler still runs even when the closed servers were all
  // that kept the process alive.
  if (process.channel && typeof process.channel.ref === 'function') process.channel.ref()
  closeServers(() => reply({ type: MSG.DRAINED }))
}

function closeServersThenExit () {
  closeServers(() => process.exit(0))
}

/** Closes every httpsys server of this process; `done` once all of them have closed. */
function closeServers (done) {
  const servers = ours.listeningServers()
  // closed already (a drain) but still finishing: requests in flight, upgraded sockets
  const closing = ours.closingServers()
  let pending = servers.length + closing.length
  if (pending === 0) return done()
  const one = () => {
    if (--pending === 0) done()
  }
  for (const server of servers) server.close(one)
  for (const server of closing) server.once('close', one)
}

// Memory for max_memory_restart (Windows has no /proc), and what the process served
// (src/queue/request-stats.js) for ls, monit and the metrics endpoint.
function reportStats () {
  const { rss, heapUsed } = process.memoryUsage()
  const stats = require('./queue/request-stats').processStats()
  stats.start()
  reply({ type: MSG.STATS, rss, heapUsed, processUptimeMs: Math.round(process.uptime() * 1000), requests: stats.snapshot() })
}

function reply (msg) {
  // the callback keeps a send on a closing channel from throwing
  if (process.connected) process.send(msg, () => {})
}

install()

module.exports = { install }
