'use strict'

// Standalone on the native router where the router binds (Windows; issue 25
// "Standalone"; standalone-native-win.js): the servers that do not own a port, as
// standalone-paths.js and standalone-prefixes.js serve them where node binds.
//
// - listen(path): the router binds it (bindPath, while listen() waits, as bindPort):
//   a Unix socket file, on Windows a named pipe `\\.\pipe\...` made as libuv makes
//   one (its first instance: a name in use fails as node's EADDRINUSE). The router
//   serves every connection there on the server's queue, nothing routed; the
//   app's close() removes a socket file, as node's does.
// - listen(prefix): the first server of a port binds it (bindPort, then bindQueue
//   with `shared`: the port routes by URL, as any shared port does); the next ones of
//   that port reserve their prefix on it (reservePrefix). A prefix another server of
//   this process holds is ERR_HTTPSYS_URL_CONFLICT at once, from this process's table.
// - streams handed to a server (server.emit('connection', socket)): a queue of the
//   server's own on a socket the router binds in a private place (a Unix socket in
//   the temp folder; a named pipe on Windows), each stream piped through a connection
//   to it (standalone-paths.js pipeThrough). No descriptor crosses on this path (the
//   router would need one it opened: standalone-native-win.js), so a socket the app
//   accepted is piped too, and stays the app's, counted by its server, as on node.

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const urlprefix = require('../urlprefix')
const { codes } = require('../errors')
const { hold, unhold, newQueue, ownSettings, bindError } = require('./standalone-own')

const table = new urlprefix.RoutingTable() // this process's prefix servers, for conflicts
// port -> { count, ready, owners }: this process's servers on it (its prefix servers,
// and a listen(port)'s: owners)
const held = new Map()
const listening = new Set() // the paths this process's servers listen on
let adopted = 0

/** Whether this is a listen(prefix) served here: one plain http prefix, the port not the server's own. */
function takesPrefix (options) {
  return options.path === undefined && !options.tls && Array.isArray(options.urls) && options.urls.length === 1 &&
    /^http:/i.test(options.urls[0]) && options.settings !== null && typeof options.settings === 'object' && options.settings.ownsPort === false
}

/** A name the router binds for `file`: absolute (the router's folder may not be the app's), as node would resolve it. */
function bindable (file) {
  if (file.startsWith('\0') || isPipe(file)) return file
  return path.resolve(file)
}

const isPipe = (file) => process.platform === 'win32' && /^[\\/][\\/][.?][\\/]pipe[\\/]/i.test(file)

/**
 * A listen(path)'s reservation (contract.js reserve()).
 * @param {object} options reserve()'s: path, settings; queue and token are set here
 * @param {object} own standalone-native-win.js's router and calls
 */
function reservePath (options, own) {
  const file = options.path
  if (listening.has(file)) throw new codes.ERR_HTTPSYS_URL_CONFLICT({ prefix: file, owner: 'another server of this process' })
  const r = own.ensureRouter()
  const { name, token } = newQueue(own)
  try {
    own.callSync(r, 'bindPath', { name, path: bindable(file) })
  } catch (err) {
    // (as node's error for `file`: ERR_HTTPSYS_PORT_IN_USE naming the path)
    throw bindError(err, file)
  }
  options.queue = name
  options.token = token
  listening.add(file)
  const reservation = own.placed(r, name, options, () => ({ name, token, urls: [], settings: ownSettings(options.settings) }))
  reservation.urls = []
  reservation.ports = []
  const release = reservation.release
  reservation.release = () => {
    if (reservation.released) return
    listening.delete(file)
    release()
    // node's close() removes the socket file, at once (libuv, uv__pipe_close)
    if (!file.startsWith('\0') && !isPipe(file)) {
      try { fs.unlinkSync(path.resolve(file)) } catch {}
    }
  }
  return reservation
}

/**
 * A listen(prefix)'s reservation (contract.js reserve()).
 * @param {object} options reserve()'s: urls (one prefix), settings; queue and token are set here
 * @param {object} own standalone-native-win.js's router and calls
 */
function reservePrefix (options, own) {
  const p = urlprefix.parse(options.urls[0], { allowPortZero: true })
  // (a listen(port) joining its prefix servers: a second one is EADDRINUSE, as on node)
  const owners = options.settings !== null && typeof options.settings === 'object' && options.settings.ownsPort === true ? 1 : 0
  const { name, token } = newQueue(own)
  // (a port 0 prefix is placed once the router has its port; nothing can conflict before)
  if (p.port !== 0) table.add(p.prefix, { name })
  const r = own.ensureRouter()
  const ip = p.ip || ''
  let port = p.port
  let first = null // the bindQueue of the port's first server, when this is not it
  if (port !== 0 && held.has(port)) {
    first = held.get(port).ready
  } else {
    try {
      port = own.callSync(r, 'bindPort', { name, ip, port: p.port }).port
    } catch (err) {
      if (p.port !== 0) table.remove(p.prefix)
      throw bindError(err, p.port, p.ip || undefined)
    }
  }
  const prefix = `${p.scheme}://${p.host}:${port}${p.path}`
  if (p.port === 0) table.add(prefix, { name })
  options.queue = name
  options.token = token
  const reservation = first === null
    ? own.placed(r, name, options, () => ({ name, token, urls: [prefix], ip, shared: true }))
    : own.placed(r, name, options, () => ({ name, token, urls: [prefix] }), first.then(() => {}, () => {}), 'reservePrefix')
  reservation.urls = [prefix]
  reservation.ports = [port]
  if (first === null) held.set(port, { count: 1, ready: reservation.ready, owners })
  else {
    held.get(port).count++
    held.get(port).owners += owners
  }
  const release = reservation.release
  reservation.release = () => {
    if (reservation.released) return
    leave(port, prefix, owners)
    release()
  }
  // a prefix the router refused leaves this process's table (standalone-prefixes.js)
  reservation.ready.catch(() => {
    if (reservation.released) return
    leave(port, prefix, owners)
    reservation.released = true
  })
  return reservation
}

/** A server of this process left `port`: its prefix leaves the table. */
function leave (port, prefix, owners) {
  table.remove(prefix)
  const h = held.get(port)
  if (h === undefined) return
  h.owners -= owners
  if (--h.count === 0) held.delete(port)
}

/**
 * Whether a plain listen(port) (standalone-native-win.js) goes to a port this
 * process's prefix servers hold: it joins them as the prefix `http://+:port/`
 * (standalone-prefixes.js joinsShared).
 */
function joinsShared (options) {
  const p = urlprefix.parse(options.urls[0], { allowPortZero: true })
  return p.scheme === 'http' && p.port !== 0 && held.has(p.port) && held.get(p.port).owners === 0
}

/**
 * A listen(port) server of this process has `port` (its queue made once `ready`
 * settled): a listen(prefix) there later joins it (reservePrefix).
 * @returns {() => void} what its close() lets go
 */
function holdOwnPort (port, prefix, name, ready) {
  table.add(prefix, { name })
  held.set(port, { count: 1, ready, owners: 1 })
  let gone = false
  const release = () => {
    if (gone) return
    gone = true
    leave(port, prefix, 1)
  }
  ready.catch(release)
  return release
}

/** A private name for an adopted streams' queue: a named pipe on Windows, a Unix socket in the temp folder elsewhere. */
function privateName () {
  const id = `httpsys-adopt-${process.pid}-${++adopted}-${crypto.randomBytes(4).toString('hex')}`
  if (process.platform === 'win32') return `\\\\.\\pipe\\${id}`
  return path.join(os.tmpdir(), `${id}.sock`)
}

/**
 * The streams handed to a server (register.js adopt), served by the router on a queue
 * of the server's own, each piped to it.
 * @param {object} options { handlers, settings } as attach() takes them
 * @param {object} own standalone-native-win.js's router and calls
 * @returns {{attaching: Promise<object>, take: (stream: object) => boolean}}
 */
function adopt ({ handlers, settings }, own) {
  const r = own.ensureRouter()
  const { name, token } = newQueue(own, 'adopt')
  const file = privateName()
  own.callSync(r, 'bindPath', { name, path: file, private: true })
  if (process.platform !== 'win32') {
    process.once('exit', () => {
      try { fs.unlinkSync(file) } catch {}
    })
  }
  hold()
  const made = own.call(r, 'bindQueue', { name, token, urls: [], settings: ownSettings(settings) })
  made.catch(() => {})
  let attachment = null
  const { pipeThrough, piped } = require('./standalone-paths')
  const pipes = new Set() // the piped streams' connections to the router
  const counted = piped(handlers, pipes, () => attachment)
  const attaching = made
    .then(() => require('../queue/hub-client').attach({ queue: name, token, handlers: counted, socketPath: r.socketPath }))
    .then((a) => {
      // nothing of the queue holds the process: a piped stream's connection does while
      // a request of it waits (pipeThrough), as node holds nothing for a JS stream
      a.unref()
      attachment = a
      return a
    })
    .finally(() => unhold())
  attaching.catch(() => {})
  const take = (stream) => {
    pipeThrough(stream, { ready: made }, file, () => attachment, pipes)
    return true
  }
  return { attaching, take }
}

module.exports = { takesPrefix, reservePath, reservePrefix, joinsShared, holdOwnPort, adopt }
