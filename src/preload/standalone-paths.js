'use strict'

// Standalone on the native router (HTTPSYS_ROUTER=native, issue 25 "Standalone"):
// the servers no port of the router names. standalone-native.js hands the router a
// TCP listen()'s socket; this file does the same for
//
// - listen(path): node binds the Unix socket (so address() and node's errors are
//   node's, at once), and the listening socket goes to the router as a TCP one does
//   ({"httpsys": "listenPath"}), which serves every connection there on the server's
//   queue, nothing routed (the hub's listen(path): hub.js onPathSocket). node's copy
//   must be closed then, and libuv unlinks the file it bound when it closes a pipe
//   (uv__pipe_close), which would take the socket away from the router. So node binds
//   it through a name whose directory is a symbolic link, in a private folder of this
//   process, to the folder the app named: the socket is made where the app asked, and
//   once the link is gone libuv's unlink of that name finds nothing. The file goes
//   when the app's close() says, as node's close() removes it (release below); a
//   process that exits without close() leaves it, as node's does.
// - streams handed to a server (server.emit('connection', socket): register.js adopt):
//   a queue of the server's own with no listener ({"httpsys": "adopt"}). A socket with
//   a descriptor of its own (a net.Socket the app accepted, or got from another process)
//   goes to the router as a connection node accepted ({"httpsys": "conn"}); a stream
//   with none (a JS Duplex, a TLS socket) cannot, so it is piped through a connection
//   to the router's Unix socket for that queue, which node binds and hands over as a
//   listen(path)'s: the router serves both alike, and nothing of src/hub is needed.

const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const hubClient = require('../queue/hub-client')
const { codes } = require('../errors')

// sockaddr_un's sun_path: 108 bytes on Linux, 104 on macOS and the BSDs (with the NUL)
const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103

let bindDir = null // this process's private folder of links (made on first use)
let links = 0
let seq = 0
const listening = new Set() // the paths this process's servers listen on

/** The private folder the links are made in, removed when the process exits. */
function privateDir () {
  if (bindDir === null) {
    bindDir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-bind-'))
    const made = bindDir
    process.once('exit', () => {
      try { fs.rmSync(made, { recursive: true, force: true }) } catch {}
    })
  }
  return bindDir
}

/**
 * The name node binds `file` through: a link to its folder, and the link (to remove
 * once bound). null when it would not fit a socket address where `file` may (the
 * in-process hub serves that listen(), as before).
 */
function bindName (file) {
  // Linux's abstract names have no file: libuv unlinks nothing real
  if (file.startsWith('\0')) return { name: file, link: null }
  const abs = path.resolve(file)
  const link = path.join(privateDir(), `d${++links}`)
  const name = path.join(link, path.basename(abs))
  if (Buffer.byteLength(name) > MAX_SOCKET_PATH) return null
  fs.symlinkSync(path.dirname(abs), link)
  return { name, link }
}

/** node's error, as it would name `file` had node bound it itself. */
function asBound (err, bound, file) {
  if (bound !== file && typeof err.message === 'string') err.message = err.message.split(bound).join(file)
  if (err.address === bound) err.address = file
  return err
}

/**
 * Binds a Unix socket for the router and hands it over with `msg`; the router's answer
 * settles `ready`. The socket's connections node accepts before the handover follow it
 * (as standalone-native.js forward).
 * @returns {{server: net.Server, ready: Promise<object>}|null} null: not bindable here
 */
function bindAndHandOver (own, file, msg, onError) {
  const r = own.ensureRouter()
  const b = bindName(file)
  if (b === null) return null
  const server = net.createServer({ pauseOnConnect: true })
  server.on('connection', (socket) => sendConn(r, socket, msg.queue))
  try {
    server.listen(b.name)
  } finally {
    if (b.link !== null) {
      try { fs.unlinkSync(b.link) } catch {}
    }
  }
  own.hold()
  const ready = new Promise((resolve, reject) => {
    const handOver = () => process.nextTick(() => {
      own.handOver(r, server, msg).then(resolve, reject)
    })
    if (server.listening) return handOver()
    server.once('listening', handOver)
    server.once('error', (err) => reject(onError(asBound(err, b.name, file))))
  })
  ready.then(() => {}, () => {}).then(() => own.unhold())
  return { server, ready }
}

function sendConn (r, socket, queue, dual = false) {
  try {
    r.child.send({ httpsys: 'conn', queue, dual }, socket, () => {})
  } catch {
    socket.destroy()
  }
}

/**
 * A standalone server's listen(path) on the router: the reservation (contract.js
 * reserve()), or null where the in-process hub must serve it (a name too long to bind
 * through the link).
 * @param {object} options reserve()'s: path, settings; queue and token are set here
 * @param {object} own standalone-native.js's router and hand-over
 */
function reservePath (options, own) {
  const file = options.path
  if (listening.has(file)) throw new codes.ERR_HTTPSYS_URL_CONFLICT({ prefix: file, owner: 'another server of this process' })
  const name = `~${process.pid}.path${++seq}`
  const token = crypto.randomBytes(18).toString('base64url')
  const settings = own.ownSettings(options.settings)
  const bound = bindAndHandOver(own, file, { httpsys: 'listenPath', queue: name, token, settings }, (err) =>
    err.code === 'EADDRINUSE' ? new codes.ERR_HTTPSYS_PORT_IN_USE({ port: file, cause: err }) : err)
  if (bound === null) return null
  options.queue = name
  options.token = token
  const { server, ready } = bound
  listening.add(file)
  const reservation = {
    bound: server.listening,
    known: server.listening,
    urls: [],
    ports: [],
    ready: ready.then(() => {
      // the settings an app set after listen() (keepAliveTimeout...) go too
      const now = own.ownSettings(options.settings)
      const r = own.ensureRouter()
      if (JSON.stringify(now) !== JSON.stringify(settings) && r.child.connected) r.child.send({ httpsys: 'settings', queue: name, settings: now }, () => {})
    }, (err) => {
      listening.delete(file)
      throw err
    }),
    released: false,
    refed: true,
    release () {
      if (reservation.released) return
      reservation.released = true
      listening.delete(file)
      // node's close() removes the socket file, at once (libuv, uv__pipe_close)
      if (reservation.bound && !file.startsWith('\0')) {
        try { fs.unlinkSync(path.resolve(file)) } catch {}
      }
      const r = own.ensureRouter()
      reservation.ready.then(() => r.proc.call('unbindQueue', { name }), () => {}).catch(() => {})
    },
    ref () { reservation.refed = true },
    unref () { reservation.refed = false }
  }
  reservation.ready.catch(() => {})
  return reservation
}

/** Whether `stream` is a socket with a descriptor of its own that the router can take. */
function hasDescriptor (stream) {
  if (!(stream instanceof net.Socket) || stream.encrypted === true || stream.connecting) return false
  const h = stream._handle
  return h !== null && h !== undefined && typeof h.fd === 'number' && h.fd >= 0
}

/**
 * The streams handed to a server (register.js adopt, as standalone-hub.js adopt takes
 * them), served by the router on a queue of the server's own.
 * @param {object} options { handlers, settings } as attach() takes them
 * @param {object} own standalone-native.js's router and hand-over
 * @returns {{attaching: Promise<object>, take: (stream: object) => boolean}}
 */
function adopt ({ handlers, settings }, own) {
  const r = own.ensureRouter()
  const name = `~${process.pid}.adopt${++seq}`
  const token = crypto.randomBytes(18).toString('base64url')
  // what keeps the process alive, as node's sockets would: the connections open, and
  // those on their way to the router (a handed socket is node's no more once sent)
  let open = 0
  let coming = 0
  let attachment = null
  const keep = () => {
    if (attachment === null) return
    if (open + coming > 0) attachment.ref()
    else attachment.unref()
  }
  const counted = {
    ...handlers,
    onConnectionOpen (conn) {
      if (coming > 0) coming--
      open++
      keep()
      if (typeof handlers.onConnectionOpen === 'function') return handlers.onConnectionOpen(conn)
    },
    onConnectionClose (id) {
      if (open > 0) open--
      keep()
      if (typeof handlers.onConnectionClose === 'function') return handlers.onConnectionClose(id)
    }
  }
  // the queue's own Unix socket, for the streams without a descriptor (piped there)
  const file = path.join(privateDir(), `a${++links}.sock`)
  let made = null
  const socketFor = () => {
    if (made === null) {
      made = bindAndHandOver(own, file, { httpsys: 'listenPath', queue: name, token, settings: own.ownSettings(settings) }, (err) => err)
      made.ready.catch(() => {})
    }
    return made
  }
  const queued = ask(r, { httpsys: 'adopt', queue: name, token, settings: own.ownSettings(settings) })
  own.hold()
  const attaching = r.started
    .then((socketPath) => queued.then(() => hubClient.attach({ queue: name, token, handlers: counted, socketPath })))
    .then((a) => {
      attachment = a
      keep()
      return a
    })
    .finally(() => own.unhold())
  attaching.catch(() => {})
  const take = (stream) => {
    coming++
    keep()
    // (bytes node read already would not go with the descriptor: such a socket is piped)
    if (hasDescriptor(stream) && stream.readableLength === 0) {
      // node drops what its handle reads between here and the write (child.send)
      stream._handle.readStop()
      const dual = typeof stream.localAddress === 'string' && stream.localAddress.startsWith('::ffff:')
      sendConn(r, stream, name, dual)
      return true
    }
    pipeThrough(stream, socketFor(), file)
    return true
  }
  return { attaching, take }
}

/** A stream with no descriptor, carried on a connection to its queue's Unix socket. */
function pipeThrough (stream, made, file) {
  const c = net.connect({ path: file, allowHalfOpen: true })
  // held until the router has the socket (a connect before that waits in the kernel)
  made.ready.catch((err) => c.destroy(err))
  stream.on('data', (d) => { if (!c.write(d)) stream.pause() })
  c.on('drain', () => stream.resume())
  c.on('data', (d) => { if (stream.write(d) === false) c.pause() })
  stream.on('drain', () => c.resume())
  stream.on('end', () => c.end())
  c.on('end', () => stream.end())
  stream.on('close', () => c.destroy())
  c.on('close', () => stream.destroy())
  stream.on('error', () => c.destroy())
  c.on('error', () => stream.destroy())
  // what holds the process is the attachment's count (adopt): not this socket
  c.unref()
}

/** A message without a socket that the router answers with "listened". */
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

module.exports = { reservePath, adopt }
