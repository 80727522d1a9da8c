'use strict'

// The hub's TCP listeners: one net.Server per port, bound to every address ('::',
// dual-stack; '0.0.0.0' where IPv6 is unavailable) as HTTP.SYS binds, while any prefix
// uses the port. IP-bound prefixes are enforced by routing on the local address, so
// binding everywhere gives nothing away. Counted per prefix: the last prefix to leave a
// port closes its listener.
//
// A port is plain or TLS, never both (what a connection speaks is decided before its
// first byte is read; HTTP.SYS too serves a port with a certificate binding as TLS
// only): a TLS port's server comes from the hub (tls-server.js) and hands over
// connections once their handshake is done.

const net = require('node:net')
const { codes } = require('../errors')
const { findPortOwner } = require('./port-owner')

const NO_IPV6 = new Set(['EAFNOSUPPORT', 'EADDRNOTAVAIL', 'EPROTONOSUPPORT'])
// A port we just closed can take a moment to be free again (the close is async).
const REBIND_TRIES = 5
const REBIND_DELAY_MS = 20

class Listeners {
  /**
   * @param {(socket: net.Socket, port: number) => void} onConnection
   * @param {object} log pino logger
   * @param {number} [maxConnections=0] open client connections per port beyond which new
   *   ones are refused (HTTP.SYS's MaxConnections); 0: no limit
   * @param {(port: () => number) => net.Server} [createSecureServer] a TLS port's server
   *   (it calls onConnection itself, after the handshake)
   */
  constructor (onConnection, log, maxConnections = 0, createSecureServer = null) {
    this.onConnection = onConnection
    this.log = log
    this.maxConnections = maxConnections
    this.createSecureServer = createSecureServer
    this.byPort = new Map() // port -> entry
    this.recentlyClosed = new Set()
  }

  /**
   * One more prefix uses this port: bind it if nobody does yet.
   * @param {number} port 1-65535
   * @param {boolean} [secure=false] a TLS port (https prefixes)
   * @param {string} [prefix] for the error when the port already speaks the other scheme
   * @returns {Promise<void>}
   * @throws ERR_HTTPSYS_PORT_IN_USE, ERR_HTTPSYS_ACCESS_DENIED, ERR_HTTPSYS_URL_CONFLICT
   */
  async acquire (port, secure = false, prefix) {
    let entry = this.byPort.get(port)
    if (entry !== undefined && entry.secure !== secure) {
      throw new codes.ERR_HTTPSYS_URL_CONFLICT({
        prefix: prefix || `${secure ? 'https' : 'http'}://+:${port}/`,
        owner: `the ${entry.secure ? 'https' : 'http'} prefixes of port ${port} (a port serves http or https, not both)`
      })
    }
    if (entry === undefined) {
      entry = { port, secure, server: null, refs: 0, ready: null }
      entry.ready = this.bind(entry, port)
      this.byPort.set(port, entry)
      entry.ready.catch(() => {
        if (this.byPort.get(port) === entry) this.byPort.delete(port)
      })
    }
    entry.refs++
    try {
      await entry.ready
    } catch (err) {
      entry.refs--
      throw err
    }
  }

  /**
   * Binds a free port (a prefix with port 0, listen(0)).
   * @returns {Promise<number>} the port, now counted once
   */
  async acquireFree (secure = false) {
    const entry = { port: 0, secure, server: null, refs: 1, ready: null }
    await this.bind(entry, 0)
    entry.port = entry.server.address().port
    entry.ready = Promise.resolve()
    this.byPort.set(entry.port, entry)
    return entry.port
  }

  release (port) {
    const entry = this.byPort.get(port)
    if (entry === undefined) return
    if (--entry.refs > 0) return
    this.byPort.delete(port)
    this.closeEntry(entry)
  }

  /** @returns {net.Server|null} the listening server of port */
  server (port) {
    const entry = this.byPort.get(port)
    return entry && entry.server ? entry.server : null
  }

  /** @returns {boolean} whether port is a TLS port */
  isSecure (port) {
    const entry = this.byPort.get(port)
    return entry !== undefined && entry.secure
  }

  /** @returns {object|null} the bound address of the listener on port */
  address (port) {
    const entry = this.byPort.get(port)
    return entry && entry.server ? entry.server.address() : null
  }

  ports () {
    return [...this.byPort.keys()]
  }

  closeAll () {
    const entries = [...this.byPort.values()]
    this.byPort.clear()
    return Promise.all(entries.map((e) => e.ready.then(() => this.closeEntry(e), () => {})))
  }

  closeEntry (entry) {
    const server = entry.server
    if (server === null || !server.listening) return
    const port = entry.port
    this.recentlyClosed.add(port)
    // Stop accepting now; client connections are the hub's to end.
    server.close(() => {})
    setTimeout(() => this.recentlyClosed.delete(port), 1000).unref()
  }

  async bind (entry, port) {
    let server
    if (entry.secure) {
      server = this.createSecureServer(() => entry.port)
    } else {
      server = net.createServer({ allowHalfOpen: true, noDelay: true })
      server.on('connection', (socket) => this.onConnection(socket, entry.port))
    }
    if (this.maxConnections > 0) server.maxConnections = this.maxConnections
    for (let attempt = 1; ; attempt++) {
      try {
        await listen(server, port, '::')
        break
      } catch (err) {
        if (NO_IPV6.has(err.code)) {
          await listen(server, port, '0.0.0.0').catch((e) => { throw mapError(e, port) })
          break
        }
        if (err.code === 'EADDRINUSE' && this.recentlyClosed.has(port) && attempt < REBIND_TRIES) {
          await new Promise((resolve) => setTimeout(resolve, REBIND_DELAY_MS))
          continue
        }
        throw mapError(err, port)
      }
    }
    server.on('error', (err) => this.log.error({ err, port: entry.port }, 'listener error'))
    entry.server = server
    this.log.debug({ port: server.address().port, address: server.address().address }, 'listening')
  }
}

function listen (server, port, host) {
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
    server.listen({ port, host, ipv6Only: false })
  })
}

function mapError (err, port) {
  if (err.code === 'EADDRINUSE') return new codes.ERR_HTTPSYS_PORT_IN_USE({ port, owner: findPortOwner(port), cause: err })
  if (err.code === 'EACCES' || err.code === 'EPERM') return new codes.ERR_HTTPSYS_ACCESS_DENIED({ port, cause: err })
  return err
}

module.exports = { Listeners }
