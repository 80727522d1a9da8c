'use strict'

// The hub's TCP listeners. A port is bound where its prefixes ask: every address (no
// host: '::' dual-stack, or '0.0.0.0' where IPv6 is unavailable, node's own choice)
// while any prefix of the port is not IP-bound (`+`, `*`, a host name), else only the
// addresses of its IP-bound prefixes (`http://127.0.0.1:8080/` listens on loopback
// only, as node's listen(8080, '127.0.0.1') does). When the set changes the listeners
// follow: a wildcard prefix arriving replaces the address-bound listeners, and the
// last one leaving brings them back. Client connections already open are not touched
// by a rebind. Uses are counted per prefix: the last prefix to leave a port closes it.
//
// The wildcard bind is synchronous, as node's listen(port) is: a server knows its
// port when listen() returns (src/http/server.js). An address-bound one completes on a
// later tick, as node's listen(port, host) does (node looks the host up first).
//
// A port is plain or TLS, never both (what a connection speaks is decided before its
// first byte is read; HTTP.SYS too serves a port with a certificate binding as TLS
// only): a TLS port's servers come from the hub (tls-server.js) and hand over
// connections once their handshake is done.

const net = require('node:net')
const { codes } = require('../errors')
const { findPortOwner } = require('../port-owner')

const ANY = '*'
// A port we just closed ourselves may be in use a moment longer by a listener of
// another process racing for it; retried briefly before EADDRINUSE is final.
const REBIND_TRIES = 5
const REBIND_DELAY_MS = 20

/**
 * One listening server of a port, on one address (ANY: all of them).
 * @typedef {object} Slot
 * @property {string} address ANY or an IP
 * @property {net.Server} server
 * @property {Promise<void>} ready settles once it listens (or failed to)
 * @property {boolean} closed
 * @property {Error|null} failed the bind's error, once it failed
 */

class Listeners {
  /**
   * @param {(socket: net.Socket, port: number) => void} onConnection
   * @param {object} log pino logger
   * @param {number} [maxConnections=0] open client connections per listener beyond which
   *   new ones are refused (HTTP.SYS's MaxConnections); 0: no limit
   * @param {(port: () => number) => net.Server} [createSecureServer] a TLS port's server
   *   (it calls onConnection itself, after the handshake)
   * @param {(port: number) => void} [onPortClosed] the port's last listener closed
   */
  constructor (onConnection, log, maxConnections = 0, createSecureServer = null, onPortClosed = null) {
    this.onConnection = onConnection
    this.log = log
    this.maxConnections = maxConnections
    this.createSecureServer = createSecureServer
    this.onPortClosed = onPortClosed
    this.byPort = new Map() // port -> { port, secure, uses: Map(address -> count), unrefs, slots: Map(address -> Slot) }
    this.byPath = new Map() // a Unix socket or pipe path -> net.Server (a standalone listen(path))
    this.recentlyClosed = new Set()
  }

  /**
   * One more prefix uses this port (on `ip`, or on every address): listen there if
   * nothing does yet.
   * @param {number} port 1-65535
   * @param {boolean} [secure=false] a TLS port (https prefixes)
   * @param {string} [prefix] for the error when the port already speaks the other scheme
   * @param {string|null} [ip] the address of an IP-bound prefix; null: every address
   * @returns {{bound: boolean, ready: Promise<void>}} bound: listening now; ready
   *   settles once it is (rejects with the bind error; the use is then not counted)
   * @throws ERR_HTTPSYS_URL_CONFLICT (a port serves http or https, not both)
   */
  acquire (port, secure = false, prefix, ip = null) {
    let entry = this.byPort.get(port)
    if (entry !== undefined && entry.secure !== secure) {
      throw new codes.ERR_HTTPSYS_URL_CONFLICT({
        prefix: prefix || `${secure ? 'https' : 'http'}://+:${port}/`,
        owner: `the ${entry.secure ? 'https' : 'http'} prefixes of port ${port} (a port serves http or https, not both)`
      })
    }
    if (entry === undefined) {
      entry = { port, secure, uses: new Map(), unrefs: 0, slots: new Map() }
      this.byPort.set(port, entry)
    }
    const key = ip || ANY
    entry.uses.set(key, (entry.uses.get(key) || 0) + 1)
    this.reconcile(entry, true)
    const slot = entry.slots.get(entry.slots.has(ANY) ? ANY : key)
    const ready = slot.ready.catch((err) => {
      this.release(port, ip)
      throw err
    })
    return { bound: slot.server.listening, ready }
  }

  /**
   * Binds a free port (a prefix with port 0, listen(0)) on `ip` or every address.
   * @returns {{port: number, bound: boolean, ready: Promise<number>}} port is 0 until
   *   known (an address-bound listener learns it on a later tick); ready resolves to it
   */
  acquireFree (secure = false, ip = null) {
    const entry = { port: 0, secure, uses: new Map([[ip || ANY, 1]]), unrefs: 0, slots: new Map() }
    const slot = this.bindSlot(entry, ip || ANY, 0)
    entry.slots.set(slot.address, slot)
    const known = () => {
      entry.port = slot.server.address().port
      this.byPort.set(entry.port, entry)
      return entry.port
    }
    if (slot.server.listening) {
      const port = known()
      return { port, bound: true, ready: Promise.resolve(port) }
    }
    return { port: 0, bound: false, ready: slot.ready.then(known) }
  }

  /**
   * Listens on a Unix socket or pipe path (a standalone server's listen(path)); every
   * connection there goes to onConnection, whatever it asks for. Synchronous, as node's.
   * @returns {{bound: boolean, ready: Promise<void>}}
   */
  acquirePath (path, onConnection) {
    if (this.byPath.has(path)) throw new codes.ERR_HTTPSYS_URL_CONFLICT({ prefix: path, owner: 'another server of this process' })
    const server = net.createServer({ allowHalfOpen: true })
    server.on('connection', onConnection)
    this.byPath.set(path, server)
    server.listen(path)
    const ready = awaitListening(server).then(() => {
      server.on('error', (err) => this.log.error({ err, path }, 'listener error'))
    }, (err) => {
      if (this.byPath.get(path) === server) this.byPath.delete(path)
      throw err.code === 'EADDRINUSE' ? new codes.ERR_HTTPSYS_PORT_IN_USE({ port: path, cause: err }) : err
    })
    ready.catch(() => {})
    return { bound: server.listening, ready }
  }

  /** Stops listening on a path (node removes the socket file). */
  releasePath (path) {
    const server = this.byPath.get(path)
    if (server === undefined) return
    this.byPath.delete(path)
    if (server.listening) server.close(() => {})
  }

  /** One prefix on this port (and `ip`) is gone; the last one closes the port. */
  release (port, ip = null) {
    const entry = this.byPort.get(port)
    if (entry === undefined) return
    const key = ip || ANY
    const n = entry.uses.get(key)
    if (n === undefined) return
    if (n > 1) entry.uses.set(key, n - 1)
    else entry.uses.delete(key)
    if (entry.unrefs > this.useCount(entry)) entry.unrefs = this.useCount(entry)
    if (entry.uses.size === 0) {
      this.byPort.delete(port)
      for (const slot of entry.slots.values()) this.closeSlot(entry, slot)
      entry.slots.clear()
      if (this.onPortClosed !== null) this.onPortClosed(port)
      return
    }
    this.reconcile(entry, false)
  }

  /**
   * Whether the listeners of port keep the process alive (server.unref() of a standalone
   * app): they do unless every use of the port asked not to.
   */
  setRef (port, refed) {
    const entry = this.byPort.get(port)
    if (entry === undefined) return
    entry.unrefs = Math.max(0, Math.min(this.useCount(entry), entry.unrefs + (refed ? -1 : 1)))
    this.applyRef(entry)
  }

  /** @returns {net.Server|null} a listening server of port */
  server (port) {
    const list = this.servers(port)
    return list.length > 0 ? list[0] : null
  }

  /** @returns {net.Server[]} the listening servers of port (one per bound address) */
  servers (port) {
    const entry = this.byPort.get(port)
    if (entry === undefined) return []
    return [...entry.slots.values()].filter((s) => s.server.listening).map((s) => s.server)
  }

  /** @returns {boolean} whether port is a TLS port */
  isSecure (port) {
    const entry = this.byPort.get(port)
    return entry !== undefined && entry.secure
  }

  /** @returns {object|null} the bound address of a listener on port */
  address (port) {
    const s = this.server(port)
    return s !== null ? s.address() : null
  }

  ports () {
    return [...this.byPort.keys()]
  }

  closeAll () {
    for (const path of [...this.byPath.keys()]) this.releasePath(path)
    const entries = [...this.byPort.values()]
    this.byPort.clear()
    const waits = []
    for (const entry of entries) {
      for (const slot of entry.slots.values()) waits.push(slot.ready.then(() => this.closeSlot(entry, slot), () => {}))
      entry.slots.clear()
    }
    return Promise.all(waits)
  }

  // ---- internals -----------------------------------------------------------------

  useCount (entry) {
    let n = 0
    for (const c of entry.uses.values()) n += c
    return n
  }

  /**
   * Listen exactly where the port's uses ask: ANY if any use is not IP-bound, else each
   * IP. A listener whose bind failed stays failed (its users get the error and release
   * their use) unless a new use asks again (retryFailed).
   */
  reconcile (entry, retryFailed) {
    const want = entry.uses.has(ANY) ? [ANY] : [...entry.uses.keys()]
    // address-bound listeners go first: the wildcard cannot bind while they listen
    for (const [address, slot] of entry.slots) {
      if (!want.includes(address)) {
        entry.slots.delete(address)
        this.closeSlot(entry, slot)
      }
    }
    for (const address of want) {
      const slot = entry.slots.get(address)
      if (slot === undefined || (retryFailed && slot.failed !== null)) entry.slots.set(address, this.bindSlot(entry, address, entry.port))
    }
    this.applyRef(entry)
  }

  applyRef (entry) {
    const unref = entry.unrefs > 0 && entry.unrefs >= this.useCount(entry)
    for (const slot of entry.slots.values()) {
      if (unref) slot.server.unref()
      else slot.server.ref()
    }
  }

  makeServer (entry) {
    let server
    if (entry.secure) {
      server = this.createSecureServer(() => entry.port)
    } else {
      server = net.createServer({ allowHalfOpen: true, noDelay: true })
      server.on('connection', (socket) => this.onConnection(socket, entry.port))
    }
    if (this.maxConnections > 0) server.maxConnections = this.maxConnections
    return server
  }

  /** @returns {Slot} listening at once for ANY (node binds that synchronously), else soon */
  bindSlot (entry, address, port) {
    const server = this.makeServer(entry)
    const slot = { address, server, ready: null, closed: false, failed: null }
    const host = address === ANY ? undefined : address
    let first
    server.listen({ port, host, ipv6Only: false })
    if (server.listening) {
      first = Promise.resolve()
    } else {
      // the error (or, with a host, the bind) arrives on a later tick
      first = awaitListening(server)
    }
    slot.ready = first.catch((err) => this.retryBind(entry, slot, port, host, err)).then(() => {
      server.on('error', (err) => this.log.error({ err, port: entry.port }, 'listener error'))
      if (slot.closed) {
        server.close(() => {})
        return
      }
      const a = server.address()
      this.log.debug({ port: a.port, address: a.address }, 'listening')
    }, (err) => {
      slot.failed = err
      throw err
    })
    slot.ready.catch(() => {}) // the caller's copy carries the error
    return slot
  }

  async retryBind (entry, slot, port, host, err) {
    for (let attempt = 1; err.code === 'EADDRINUSE' && this.recentlyClosed.has(port) && attempt < REBIND_TRIES; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, REBIND_DELAY_MS))
      if (slot.closed) return
      try {
        slot.server.listen({ port, host, ipv6Only: false })
        await awaitListening(slot.server)
        return
      } catch (e) {
        err = e
      }
    }
    throw mapError(err, port || entry.port, host)
  }

  closeSlot (entry, slot) {
    slot.closed = true
    const server = slot.server
    if (!server.listening) return
    this.recentlyClosed.add(entry.port)
    setTimeout(() => this.recentlyClosed.delete(entry.port), 1000).unref()
    // Stop accepting now (the port is free at once); client connections are the hub's to end.
    server.close(() => {})
  }
}

function awaitListening (server) {
  if (server.listening) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const onError = (err) => {
      server.removeListener('listening', onListening)
      reject(err)
    }
    const onListening = () => {
      server.removeListener('error', onError)
      resolve()
    }
    server.once('error', onError)
    server.once('listening', onListening)
  })
}

function mapError (err, port, host) {
  if (err.code === 'EADDRINUSE') return new codes.ERR_HTTPSYS_PORT_IN_USE({ port, host, owner: findPortOwner(port), cause: err })
  if (err.code === 'EACCES' || err.code === 'EPERM') return new codes.ERR_HTTPSYS_ACCESS_DENIED({ port, host, cause: err })
  if (err.code === 'EADDRNOTAVAIL') return new codes.ERR_HTTPSYS_ADDRESS_UNAVAILABLE({ port, host, cause: err })
  return err
}

module.exports = { Listeners, ANY }
