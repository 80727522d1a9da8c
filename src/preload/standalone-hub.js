'use strict'

// Standalone (`node --require httpsys-cli/register app.js`, no supervisor): the preload
// starts a hub inside this process on a private socket and attaches to it through the
// very same hub client a supervised worker uses, so standalone and supervised apps
// share one code path. The hub starts on the first listen(), once; later servers share
// it.
//
// listen() binds before it returns, as node's does (docs/architecture.md 7): reserve()
// creates the server's queue in the hub and binds its ports synchronously, so
// server.address() is known at once and a client may connect right away; its requests
// wait in the queue until the worker side has attached. close() gives the ports back at
// once (release()), and the queue goes with the attachment.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { duplexPair } = require('node:stream')
const hubClient = require('../queue/hub-client')
const { socketPath, removeDeadSockets } = require('../local-socket')
const { encodeTlsOptions } = require('../wire/protocol')

let localHub = null // { hub, started: Promise<string> }
let seq = 0

/** This process's own hub, started once. */
function ensureHub () {
  if (localHub === null) {
    const { Hub } = require('../hub')
    const file = socketPath(`httpsys-${process.pid}-${crypto.randomBytes(4).toString('hex')}`)
    // embedded: its worker sockets do not keep the process alive; its listeners and
    // client connections do, exactly as a node server's would.
    const hub = new Hub({ socketPath: file, embedded: true })
    const started = hub.start().then(() => {
      if (process.platform !== 'win32') {
        process.once('exit', () => {
          try {
            fs.unlinkSync(file)
          } catch {}
        })
        // what preloaded processes of this user that were killed could not remove
        setImmediate(() => {
          try {
            removeDeadSockets(path.dirname(file), OWN_SOCKET)
          } catch {}
        }).unref()
      }
      return file
    })
    started.catch(() => {})
    localHub = { hub, started }
  }
  return localHub
}

// httpsys-<pid>-<8 hex>.sock: the worker socket of a standalone process's hub
const OWN_SOCKET = /^httpsys-(\d+)-[0-9a-f]{8}\.sock$/

/** Starts this process's own hub once; resolves to its worker socket's path. */
function startLocalHub () {
  return ensureHub().started
}

/** The queue backend of a standalone process (src/wire/contract.js). */
const backend = {
  // listen(path): the hub listens on the Unix socket (or pipe) itself
  listensOnPaths: true,

  /**
   * Creates the server's queue and binds its prefixes now (contract.js reserve()).
   * options.queue and options.token are set for the attach() that follows.
   */
  reserve (options) {
    const { hub } = ensureHub()
    const name = `~${process.pid}.listen${++seq}`
    const token = crypto.randomBytes(18).toString('base64url')
    const tls = options.tls ? encodeTlsOptions(options.tls) : null
    const r = hub.reserveQueue(name, { urls: options.urls, path: options.path, token, settings: options.settings || null, tls })
    options.queue = name
    options.token = token
    return {
      bound: r.bound,
      known: r.bound,
      urls: r.urls,
      ports: r.ports,
      ready: r.ready,
      release: () => hub.unbindQueue(name),
      // server.setSecureContext(): new handshakes use it (and a HELLO still to come);
      // what node's context took but the hub refuses (an expired certificate) keeps the
      // certificate it had, as on the native router (standalone-tls.js setTls)
      setTls: (tls) => {
        options.tls = tls
        const q = hub.queuesByName.get(name)
        if (q === undefined || q.deleted || !tls) return
        try {
          hub.applyAppTls(q, encodeTlsOptions(tls))
        } catch {}
      },
      ref: () => hub.setQueueRef(name, true),
      unref: () => hub.setQueueRef(name, false)
    }
  },

  async attach (options) {
    const socketPath = await startLocalHub()
    if (options.queue !== undefined && options.reservation) await options.reservation.ready
    return hubClient.attach({ ...options, socketPath })
  }
}

/**
 * Streams a server is handed (server.emit('connection', socket)): this process's hub
 * serves them on a queue of the server's own without prefixes, with the server's
 * settings (src/http/server.js adopt). Under a supervisor too: a stream the app holds
 * cannot reach another process's router. The worker side attaches over an in-memory
 * pair, which holds no handle: as on node, the streams alone decide whether the process
 * stays alive.
 * @param {object} options { handlers, settings } as attach() takes them
 * @returns {{attaching: Promise<object>, take: (stream: object) => boolean}}
 */
function adopt ({ handlers, settings }) {
  const { hub } = ensureHub()
  const name = `~${process.pid}.adopt${++seq}`
  const token = crypto.randomBytes(18).toString('base64url')
  hub.reserveQueue(name, { urls: [], token, settings })
  const [hubSide, workerSide] = duplexPair()
  const attaching = hubClient.attach({ queue: name, token, handlers, stream: workerSide })
  hub.onWorkerSocket(hubSide)
  return { attaching, take: (stream) => hub.adoptSocket(stream, name) }
}

module.exports = { backend, adopt, startLocalHub, OWN_SOCKET }
