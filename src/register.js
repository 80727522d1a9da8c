'use strict'

// The preload: `node --require httpsys/register app.js`.
//
// It swaps node's http server classes for httpsys ones before the app (or a framework
// such as express, which builds its request/response prototypes from
// http.IncomingMessage/ServerResponse when it is first required) loads, so an
// unmodified app receives its requests from a request queue.
//
// Rules this file decides (architecture.md, "The preload"):
// - Under the supervisor (HTTPSYS_HUB and HTTPSYS_QUEUE set) every server that
//   listens attaches to the app's queue. The app's own fork() children and cluster
//   workers inherit this preload through execArgv and the environment, so they attach
//   to the same queue too: a cluster app becomes N workers on one queue, which is what
//   it meant. Their pids are not instances of the supervisor, so they never count for
//   readiness.
// - Standalone (no HTTPSYS_HUB) the queue backend starts an in-process hub, so the
//   app still serves on the port it asked for.
// - https servers: the hub does not terminate TLS yet, so on the hub backend https
//   servers stay node's own (they keep working as they did); only backends that
//   terminate TLS (HTTP.SYS) replace them.
// - The supervisor stops a worker with an IPC message, never with a signal (on
//   Windows a child gets no SIGTERM: libuv turns every signal into
//   TerminateProcess). The message becomes the app's own SIGTERM/SIGINT listeners
//   when it has any, else a graceful close of every httpsys server and an exit once
//   they are idle.
// - Readiness: the first time a server of this process attaches to its queue, the
//   preload tells the supervisor ({ type: 'httpsys:ready' }). HTTP.SYS never says when a
//   process opens a queue, so this is how the supervisor learns it there (the hub sees
//   the attach itself too). Only the supervisor's own child says it: the app's cluster
//   workers would be talking to the app's primary.

const http = require('node:http')
const https = require('node:https')
const { syncBuiltinESMExports } = require('node:module')
const ours = require('./http')

const kInstalled = Symbol.for('httpsys.register.installed')
const SHUTDOWN = 'httpsys:shutdown'
// Supervisor -> worker: stop taking requests from the queue and finish the ones in
// flight, without exiting (the first step of the stop ladder and of a rolling reload).
// Answered with { type: 'httpsys:drained' } once every server has closed.
const DRAIN = 'httpsys:drain'
// Supervisor -> worker: memory, for `httpsys ls` and max_memory_restart where the
// supervisor cannot read it itself (Windows). Answered with { type: STATS, rss, heapUsed }.
const STATS = 'httpsys:stats'
// Worker -> supervisor, once: a server of this process is attached to its queue.
const READY = 'httpsys:ready'

function install () {
  if (globalThis[kInstalled]) return
  globalThis[kInstalled] = true

  replace(http, ours)
  if (tlsTerminatedByRouter()) replace(https, ours.https || ours)
  // ESM `import { createServer } from 'node:http'` reads the builtin's named exports,
  // which are a snapshot: refresh them so ESM apps see our classes too.
  syncBuiltinESMExports()

  if (typeof process.send === 'function' && (process.env.HTTPSYS_HUB || process.env.HTTPSYS_QUEUE)) listenForShutdown()
  if (typeof process.send === 'function' && process.env.HTTPSYS_QUEUE && isSupervisorChild()) reportReadiness()
}

function isSupervisorChild () {
  const supervisor = process.env.HTTPSYS_SUPERVISOR_PID
  return !supervisor || Number(supervisor) === process.ppid
}

// The default backend of every server, wrapped: the first attach that succeeds sends
// READY. Servers given their own `queueBackend` are not the app's and do not count.
function reportReadiness () {
  let sent = false
  ours.setDefaultBackend({
    attach (options) {
      const attaching = require('./queue').getBackend().attach(options)
      if (sent) return attaching
      return Promise.resolve(attaching).then((attachment) => {
        if (!sent) {
          sent = true
          reply({ type: READY })
        }
        return attachment
      })
    }
  })
}

function replace (target, source) {
  target.createServer = source.createServer
  target.Server = source.Server
  target.IncomingMessage = source.IncomingMessage
  target.ServerResponse = source.ServerResponse
}

function tlsTerminatedByRouter () {
  // The hub (Linux, macOS) has no TLS yet; the HTTP.SYS backend will set this.
  return process.env.HTTPSYS_BACKEND === 'httpsys'
}

function listenForShutdown () {
  process.on('message', onMessage)
  // The supervisor is gone (killed, crashed): it owned the hub, so this worker can
  // serve nothing more, and as the leader of its own process group nobody else will
  // stop it. Leave rather than linger as an orphan.
  process.on('disconnect', () => process.exit(0))
  // A 'message' listener refs the IPC channel, which would keep an app alive that
  // would otherwise exit on its own (a script that finished its work).
  if (process.channel && typeof process.channel.unref === 'function') process.channel.unref()
}

let stopping = false
let draining = false

function onMessage (msg) {
  if (!msg) return
  if (msg.type === DRAIN) return drain()
  if (msg.type === STATS) return reportStats()
  if (msg.type !== SHUTDOWN || stopping) return
  stopping = true
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

function closeServersThenExit () {
  const servers = ours.listeningServers()
  let pending = servers.length
  if (pending === 0) return process.exit(0)
  for (const server of servers) {
    server.close(() => {
      if (--pending === 0) process.exit(0)
    })
  }
}

// server.close() detaches from the queue (requests not received yet stay queued for the
// other workers) and calls back once the requests in flight are answered. The app's own
// SIGTERM handler may call close() again later: it then gets ERR_SERVER_NOT_RUNNING, as
// on node, and still its callback.
function drain () {
  if (draining) return
  draining = true
  const servers = ours.listeningServers()
  let pending = servers.length
  if (pending === 0) return reply({ type: 'httpsys:drained' })
  for (const server of servers) {
    server.close(() => {
      if (--pending === 0) reply({ type: 'httpsys:drained' })
    })
  }
}

function reportStats () {
  const { rss, heapUsed } = process.memoryUsage()
  reply({ type: STATS, rss, heapUsed })
}

function reply (msg) {
  // the callback keeps a send on a closing channel from throwing
  if (process.connected) process.send(msg, () => {})
}

install()

module.exports = { install, SHUTDOWN, DRAIN, STATS, READY }
