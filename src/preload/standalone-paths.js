'use strict'

// Standalone on the native router (HTTPSYS_ROUTER=native, issue 25 "Standalone"):
// the servers no port of the router names. standalone-native.js hands the router a
// TCP listen()'s socket; this file does the same for
//
// - listen(path): node binds the Unix socket (so address() and node's errors are
//   node's, at once), and the listening socket goes to the router as a TCP one does
//   ({"httpsys": "listenPath"}), which serves every connection there on the server's
//   queue, nothing routed (as the JS hub's listen(path) did). node's copy
//   must be closed then, and libuv unlinks the file it bound when it closes a pipe
//   (uv__pipe_close), which would take the socket away from the router. So node binds
//   it through a name whose directory is a symbolic link, in a private folder of this
//   process, to the folder the app named: the socket is made where the app asked, and
//   once the link is gone libuv's unlink of that name finds nothing (a name too long
//   for that, or no private folder: a short name given the app's with a hard link,
//   bindName). The file goes
//   when the app's close() says, as node's close() removes it (release below); a
//   process that exits without close() leaves it, as node's does.
// - streams handed to a server (server.emit('connection', socket): register.js adopt):
//   a queue of the server's own, made on a Unix socket in a private folder as a
//   listen(path)'s. A socket with a descriptor of its own (a net.Socket the app
//   accepted, or got from another process) goes to the router as a connection node
//   accepted ({"httpsys": "conn"}); a stream with none (a JS Duplex, a TLS socket)
//   cannot, so it is piped through a connection to that Unix socket: the router serves
//   both alike.

const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const hubClient = require('../queue/hub-client')
const { pidAlive } = require('../local-socket')
const { codes } = require('../errors')
const { RESPONSE_MORE, RESPONSE_CLOSE } = require('../wire/contract')
const { hold, unhold, newQueue, ownSettings, forward, resendSettings, reservationOf, bindError } = require('./standalone-own')

// sockaddr_un's sun_path: 108 bytes on Linux, 104 on macOS and the BSDs (with the NUL)
const MAX_SOCKET_PATH = process.platform === 'linux' ? 107 : 103

let bindDir = null // this process's private folder of links (made on first use)
let links = 0
const listening = new Set() // the paths this process's servers listen on

// httpsys-bind-<pid>-<6 chars>: a standalone process's private folder
const OWN_DIR = /^httpsys-bind-(\d+)-[A-Za-z0-9]{6}$/

/**
 * The private folder the links are made in, removed when the process exits; what
 * killed processes of this user left is removed by the next one, as their sockets are.
 */
function privateDir () {
  if (bindDir === null) {
    const tmp = os.tmpdir()
    bindDir = fs.mkdtempSync(path.join(tmp, `httpsys-bind-${process.pid}-`))
    const made = bindDir
    process.once('exit', () => {
      try { fs.rmSync(made, { recursive: true, force: true }) } catch {}
    })
    setImmediate(() => {
      try { removeDeadDirs(tmp) } catch {}
    }).unref()
  }
  return bindDir
}

function removeDeadDirs (tmp) {
  const uid = process.getuid()
  for (const name of fs.readdirSync(tmp)) {
    const m = OWN_DIR.exec(name)
    if (m === null || pidAlive(Number(m[1]))) continue
    const dir = path.join(tmp, name)
    try {
      const st = fs.lstatSync(dir)
      if (st.isDirectory() && st.uid === uid) fs.rmSync(dir, { recursive: true, force: true })
    } catch {}
  }
}

/**
 * The name node binds `file` through, so that node's close() (libuv unlinks the name it
 * bound) never removes the socket the router serves:
 * - a link to its folder in the private folder, removed once bound (`link`);
 * - where that name would not fit a socket address, or no private folder can be made
 *   (a full or read-only temp folder), a short name of its own (`temp`: in the private
 *   folder's link, else in the app's folder itself), given its real name with a hard
 *   link once bound and then unlinked: libuv's unlink finds nothing either;
 * - a name that does not fit as the app gave it, as given: node binds what it binds
 *   then (Node 20's libuv the name cut to fit, which its close() never removes).
 * @returns {{name: string, link: string|null, temp?: string, target?: string}}
 * @throws ERR_HTTPSYS_LISTEN_PATH_BIND where none of these can be made
 */
function bindName (file) {
  // Linux's abstract names have no file: libuv unlinks nothing real
  if (file.startsWith('\0')) return { name: file, link: null }
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH) return { name: file, link: null }
  const abs = path.resolve(file)
  const short = `.httpsys-${crypto.randomBytes(6).toString('hex')}.sock`
  const tempOf = (name) => ({ name, temp: path.join(path.dirname(abs), short), target: abs })
  let link = null
  try {
    link = path.join(privateDir(), `d${++links}`)
    fs.symlinkSync(path.dirname(abs), link)
  } catch {
    link = null // (no private folder)
  }
  if (link !== null) {
    const name = path.join(link, path.basename(abs))
    if (Buffer.byteLength(name) <= MAX_SOCKET_PATH) return { name, link }
    const named = path.join(link, short)
    if (Buffer.byteLength(named) <= MAX_SOCKET_PATH) return { ...tempOf(named), link }
    try { fs.unlinkSync(link) } catch {}
  }
  const direct = path.join(path.dirname(abs), short)
  if (Buffer.byteLength(direct) <= MAX_SOCKET_PATH) return { ...tempOf(direct), link: null }
  throw new codes.ERR_HTTPSYS_LISTEN_PATH_BIND({ path: file, tmp: os.tmpdir() })
}

/**
 * Gives the socket bound under a short name (bindName `temp`) the app's name: a hard
 * link, which fails where the name is taken, as node's bind would (EADDRINUSE).
 * @returns {Error|null} node's error, naming `file` as the app gave it
 */
function giveName (b, file) {
  try {
    fs.linkSync(b.temp, b.target)
    return null
  } catch (cause) {
    if (cause.code !== 'EEXIST') return cause
    const err = new Error(`listen EADDRINUSE: address already in use ${file}`)
    err.code = 'EADDRINUSE'
    err.errno = -os.constants.errno.EADDRINUSE
    err.syscall = 'listen'
    err.address = file
    return err
  } finally {
    try { fs.unlinkSync(b.temp) } catch {}
  }
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
 * @returns {{server: net.Server, ready: Promise<object>}}
 * @throws ERR_HTTPSYS_LISTEN_PATH_BIND (bindName)
 */
function bindAndHandOver (own, file, msg, onError) {
  const r = own.ensureRouter()
  const b = bindName(file)
  const server = net.createServer({ pauseOnConnect: true })
  server.on('connection', (socket) => forward(r, socket, msg.queue))
  try {
    server.listen(b.name)
  } finally {
    if (b.link !== null) {
      try { fs.unlinkSync(b.link) } catch {}
    }
  }
  // (bound under a short name: the app's name now, before listen() returns)
  const named = b.temp !== undefined && server.listening ? giveName(b, file) : null
  hold()
  const ready = new Promise((resolve, reject) => {
    const handOver = () => process.nextTick(() => {
      own.handOver(r, server, msg).then(resolve, reject)
    })
    if (named !== null) {
      server.close()
      return process.nextTick(() => reject(onError(named)))
    }
    if (server.listening) return handOver()
    server.once('listening', handOver)
    server.once('error', (err) => reject(onError(asBound(err, b.name, file))))
  })
  ready.then(() => {}, () => {}).then(() => unhold())
  return { server, ready }
}

/**
 * A standalone server's listen(path) on the router: the reservation (contract.js
 * reserve()).
 * @throws ERR_HTTPSYS_LISTEN_PATH_BIND where no name can be bound for it (bindName)
 * @param {object} options reserve()'s: path, settings; queue and token are set here
 * @param {object} own standalone-native.js's router and hand-over
 */
function reservePath (options, own) {
  const file = options.path
  if (listening.has(file)) throw new codes.ERR_HTTPSYS_URL_CONFLICT({ prefix: file, owner: 'another server of this process' })
  const { name, token } = newQueue(own)
  const settings = ownSettings(options.settings)
  const bound = bindAndHandOver(own, file, { httpsys: 'listenPath', queue: name, token, settings }, (err) => bindError(err, file))
  options.queue = name
  options.token = token
  const { server, ready } = bound
  listening.add(file)
  const r = own.ensureRouter()
  const reservation = reservationOf(r, name, {
    onRelease () {
      listening.delete(file)
      // node's close() removes the socket file, at once (libuv, uv__pipe_close)
      if (reservation.bound && !file.startsWith('\0')) {
        try { fs.unlinkSync(path.resolve(file)) } catch {}
      }
    }
  })
  reservation.bound = server.listening
  reservation.known = server.listening
  reservation.ready = ready.then(() => resendSettings(r, name, options, settings), (err) => {
    listening.delete(file)
    throw err
  })
  reservation.ready.catch(() => {})
  return reservation
}

/**
 * Whether `stream` is a TCP socket with a descriptor of its own that the router can
 * take (a Unix one is piped: its CONN_OPEN could not be told from a piped stream's).
 */
function hasDescriptor (stream) {
  if (!(stream instanceof net.Socket) || stream.encrypted === true || stream.connecting || typeof stream.remoteAddress !== 'string') return false
  const h = stream._handle
  return h !== null && h !== undefined && typeof h.fd === 'number' && h.fd >= 0
}

/**
 * The streams handed to a server (register.js adopt), served by the router on a queue of the server's own.
 * @param {object} options { handlers, settings } as attach() takes them
 * @param {object} own standalone-native.js's router and hand-over
 * @returns {{attaching: Promise<object>, take: (stream: object) => boolean}}
 */
function adopt ({ handlers, settings }, own) {
  const r = own.ensureRouter()
  const { name, token } = newQueue(own, 'adopt')
  // What keeps the process alive, as on node: a TCP socket handed over, while it is
  // open (node's socket would hold a handle), from its send to the router's CONN_CLOSED;
  // a piped stream holds none on node, so its connection to the router holds the
  // process only while a request of it waits for its answer (pipeThrough).
  let open = 0
  let coming = 0
  const tcp = new Map() // id -> the socket object of a TCP connection open
  const sent = new Map() // 'address|port' of a socket sent -> its socket objects
  let attachment = null
  const keep = () => {
    if (attachment === null) return
    if (open + coming > 0) attachment.ref()
    else attachment.unref()
  }
  const pipes = new Set() // the piped streams' connections to the router
  handlers = piped(handlers, pipes, () => attachment)
  const counted = {
    ...handlers,
    onConnectionOpen (conn) {
      if (conn.localAddress !== '') {
        if (coming > 0) coming--
        open++
        tcp.set(conn.id, unaside(sent, conn.remoteAddress, conn.remotePort))
        keep()
      }
      if (typeof handlers.onConnectionOpen === 'function') return handlers.onConnectionOpen(conn)
    },
    onConnectionClose (id) {
      if (tcp.has(id)) {
        const socket = tcp.get(id)
        tcp.delete(id)
        open--
        keep()
        if (socket !== null) closed(socket)
      }
      if (typeof handlers.onConnectionClose === 'function') return handlers.onConnectionClose(id)
    }
  }
  // the queue is made on a Unix socket of its own, in the private folder: the streams
  // without a descriptor are piped to the router through it
  // (no private folder, a full or read-only temp folder: on Linux a name of the
  // abstract namespace, which needs none; elsewhere the server's 'error' names the fix)
  let file = null
  try {
    file = path.join(privateDir(), `a${++links}.sock`)
  } catch {
    if (process.platform === 'linux') file = `\0httpsys-adopt-${process.pid}-${crypto.randomBytes(6).toString('hex')}`
  }
  let made
  try {
    if (file === null) throw new codes.ERR_HTTPSYS_LISTEN_PATH_BIND({ path: '(the streams handed to a server)', tmp: os.tmpdir() })
    made = bindAndHandOver(own, file, { httpsys: 'listenPath', queue: name, token, settings: ownSettings(settings) }, (err) => err)
  } catch (err) {
    const attaching = Promise.reject(err)
    attaching.catch(() => {})
    return { attaching, take: (stream) => { stream.destroy(); return true } }
  }
  hold()
  const attaching = r.started
    .then((socketPath) => made.ready.then(() => hubClient.attach({ queue: name, token, handlers: counted, socketPath })))
    .then((a) => {
      attachment = a
      keep()
      return a
    })
    .finally(() => unhold())
  attaching.catch(() => {})
  const take = (stream) => {
    // (bytes node read already would not go with the descriptor: such a socket is piped)
    if (hasDescriptor(stream) && stream.readableLength === 0) {
      coming++
      keep()
      aside(stream, sent)
      // node drops what its handle reads between here and the write (child.send)
      stream._handle.readStop()
      // once the server's worker has attached: the router tells it of the connection
      // as it takes it (CONN_OPEN), so that its close is heard too, whenever it comes
      // (one that closed before an attach would never be told of: counted forever)
      const unsent = () => {
        coming--
        unaside(sent, stream.remoteAddress, stream.remotePort, stream)
        keep()
        // (its server counts it out as node's does, on destroy; forward() may have
        // destroyed it already, when its send failed)
        stream.destroy()
      }
      attaching.then(() => forward(r, stream, name, unsent), unsent)
      return true
    }
    pipeThrough(stream, made, file, () => attachment, pipes)
    return true
  }
  return { attaching, take }
}

/**
 * The socket object of a TCP connection sent to the router stays, without its handle,
 * for the app and its net.Server: as node's would be, it is counted among that server's
 * connections (getConnections(), close()'s callback) until the router says it closed
 * (closed below). node's send() would count it out and ask the child process about it
 * instead (the cluster's NODE_SOCKET messages): `server`, which send() reads, is unset
 * for the time being (`_server`, which the socket's own close reads, stays).
 */
function aside (socket, sent) {
  socket.server = null
  const key = `${socket.remoteAddress}|${socket.remotePort}`
  const list = sent.get(key)
  if (list === undefined) sent.set(key, [socket])
  else list.push(socket)
}

/**
 * Takes a socket sent aside (aside) off its address's list: `socket` itself when given,
 * else the first sent from that address (the router's CONN_OPEN names only the address).
 * @returns {net.Socket|null} the socket taken off, or null when none was there
 */
function unaside (sent, remoteAddress, remotePort, socket) {
  const key = `${remoteAddress}|${remotePort}`
  const list = sent.get(key)
  if (list === undefined) return null
  let taken = null
  if (socket === undefined) taken = list.shift()
  else if (list.includes(socket)) taken = list.splice(list.indexOf(socket), 1)[0]
  if (list.length === 0) sent.delete(key)
  return taken === undefined ? null : taken
}

/**
 * The router closed the connection of `socket`: its server's count, then its 'close',
 * in node's order (a socket's handle closes a loop turn after its server hears of it).
 */
function closed (socket) {
  const server = socket._server
  socket._server = null
  if (server !== null && server !== undefined) {
    server._connections--
    if (typeof server._emitCloseIfDrained === 'function') server._emitCloseIfDrained()
  }
  setImmediate(() => socket.destroy())
}

/**
 * A stream with no descriptor, carried on a connection to its queue's Unix socket.
 * @param {Set<net.Socket>} pipes the queue's pipes, let go together by letGo()
 */
function pipeThrough (stream, made, file, attachment, pipes) {
  const c = net.connect({ path: file, allowHalfOpen: true })
  pipes.add(c)
  c.on('close', () => pipes.delete(c))
  made.ready.catch((err) => c.destroy(err))
  // held while what the app wrote waits for an answer: an answer that came with
  // nothing of the queue's left in flight (idle) lets the pipes go (node would exit
  // here too), but those another request is on its way on
  stream.on('data', (d) => {
    c[kOwed] = true
    c.ref()
    if (!c.write(d)) stream.pause()
  })
  c.on('drain', () => stream.resume())
  c.on('data', (d) => {
    c[kOwed] = false
    if (idle(attachment(), pipes)) letGo(pipes)
    if (stream.write(d) === false) c.pause()
  })
  stream.on('drain', () => c.resume())
  stream.on('end', () => c.end())
  c.on('end', () => stream.end())
  stream.on('close', () => c.destroy())
  c.on('close', () => stream.destroy())
  stream.on('error', () => c.destroy())
  c.on('error', () => stream.destroy())
  c.unref()
}

// a queue's connections whose last answer closes them, and those the router's verdict
// left unanswered (a 'clientError' listener that took it), until the router says they
// closed (piped below)
const kClosing = Symbol('httpsys.closing')
const kAbandoned = Symbol('httpsys.abandoned')

// a pipe carries bytes the app wrote that nothing of the router's followed yet: a
// request on its way, which no other pipe's answer lets go (letGo)
const kOwed = Symbol('httpsys.owed')

/**
 * The queue's pipes hold the process no more, but those a request is on its way on:
 * one held for another connection's close (piped) is let go as soon as nothing needs it.
 * Which pipe carries a connection the router's verdict left unanswered is not known
 * here (it is owed forever): while more pipes are owed than there are such
 * connections, some request is still on its way, and the owed pipes stay held.
 * @param {Set<net.Socket>} pipes
 */
function letGo (pipes) {
  const abandoned = pipes[kAbandoned] !== undefined ? pipes[kAbandoned].size : 0
  let owed = 0
  for (const c of pipes) if (c[kOwed] === true) owed++
  for (const c of pipes) if (c[kOwed] !== true || owed <= abandoned) c.unref()
}

/**
 * Whether nothing of the queue needs its pipes: no request waits for its answer, and
 * no answer that closes its connection waits for that close. node's server ends a
 * stream at once after such an answer (socket.destroySoon()), and its peer hears the
 * 'end' before the process can exit; here that end is the router's FIN on the pipe,
 * which comes a moment after the answer's last bytes (test-http-generic-streams).
 * @param {object|null} a the queue's attachment
 * @param {Set<net.Socket>} pipes the queue's pipes
 */
function idle (a, pipes) {
  if (pipes[kClosing] !== undefined && pipes[kClosing].size > 0) return false
  return a === null || a.live.size === 0
}

/**
 * The handlers of a queue of piped streams, which let its pipes go where node would hold
 * nothing: the router's verdict on a connection came without an answer (a parse error
 * or a timeout the app's 'clientError' or 'timeout' listener took and left open), and no
 * request of the queue waits for its answer: its pipes hold the process no more, as a
 * stream holds nothing on node (test-http-insecure-parser-per-stream). A connection the
 * listener ended stays held until the router closed it (its stream's 'close' comes then).
 * A connection an answer closes holds its pipes until the router closed it too (idle).
 * @param {object} handlers attach()'s
 * @param {Set<net.Socket>} pipes the queue's pipes (pipeThrough)
 * @param {() => object|null} attachment the queue's attachment, once made
 */
function piped (handlers, pipes, attachment) {
  const open = new Map() // connection id -> its RemoteConnection
  const connectionOf = new Map() // request id -> its connection's id, until answered
  const closing = new Set() // connection ids an answer closes, until CONN_CLOSED
  const abandoned = new Set() // connection ids a verdict left unanswered, until CONN_CLOSED
  pipes[kClosing] = closing
  pipes[kAbandoned] = abandoned
  const answered = (fn) => function (id, e) {
    const r = typeof fn === 'function' ? fn.call(handlers, id, e) : undefined
    const conn = open.get(id)
    const a = attachment()
    watch(a)
    if (conn === undefined || !conn.ended) {
      abandoned.add(id)
      if (idle(a, pipes)) letGo(pipes)
    }
    return r
  }
  // the answers that close their connection, seen as they are sent
  const watch = (a) => {
    if (a === null || a[kClosing] !== undefined) return
    a[kClosing] = closing
    const sent = (id, flags) => {
      if ((flags & RESPONSE_MORE) !== 0) return
      const conn = connectionOf.get(id)
      connectionOf.delete(id)
      if (conn === undefined || (flags & RESPONSE_CLOSE) === 0) return
      closing.add(conn)
      // its pipe may have been let go already (an answered() of another connection
      // while its request was on the way)
      for (const c of pipes) c.ref()
    }
    const { respond, sendBody } = a
    a.respond = function (id, statusCode, statusMessage, rawHeaders, body, flags = 0, cacheTtl = 0) {
      sent(id, flags)
      return respond.call(this, id, statusCode, statusMessage, rawHeaders, body, flags, cacheTtl)
    }
    a.sendBody = function (id, chunk, flags = 0) {
      sent(id, flags)
      return sendBody.call(this, id, chunk, flags)
    }
  }
  return {
    ...handlers,
    onRequest (req) {
      watch(attachment())
      connectionOf.set(req.id, req.connectionId)
      return handlers.onRequest(req)
    },
    onAbort (id) {
      connectionOf.delete(id)
      if (typeof handlers.onAbort === 'function') return handlers.onAbort(id)
    },
    onConnectionOpen (conn) {
      open.set(conn.id, conn)
      if (typeof handlers.onConnectionOpen === 'function') return handlers.onConnectionOpen(conn)
    },
    onConnectionClose (id) {
      open.delete(id)
      abandoned.delete(id)
      if (closing.delete(id) && idle(attachment(), pipes)) {
        // the router closed the pipe before it said so: a loop turn later its FIN
        // (or a reset) has been read, and its stream ended
        setImmediate(() => setImmediate(() => {
          if (idle(attachment(), pipes)) letGo(pipes)
        }))
      }
      if (typeof handlers.onConnectionClose === 'function') return handlers.onConnectionClose(id)
    },
    onConnectionError: answered(handlers.onConnectionError),
    onConnectionTimeout: answered(handlers.onConnectionTimeout)
  }
}

module.exports = { reservePath, adopt, pipeThrough, piped }
