'use strict'

// Standalone on the native router (HTTPSYS_ROUTER=native, issue 25 "Standalone"): a
// server's listen(prefix), `listen('http://+:8080/api/')`, which shares its port with
// the other prefix servers of the process (several queues share a port by URL). The port is nobody's own: its
// connections follow the router's rules and its table routes them (a path no server
// registered is the router's 404).
//
// listen() stays synchronous, as node's: a prefix another server of this process
// registered is ERR_HTTPSYS_URL_CONFLICT at once (a table of this process's prefixes,
// src/urlprefix.js's, whose rules the router's table ports, says so before anything is sent);
// the first prefix of a port is bound by node, address() known and node's own bind
// errors, and its socket handed over ({"httpsys": "listenShared"}); a port the router
// already listens on for this process binds nothing here ({"httpsys": "reservePrefix"}:
// the router adds the prefix, and binds what an address of its own needs).

const urlprefix = require('../urlprefix')
const { hold, unhold, newQueue, ask, reservationOf, givenBack, nodeBinds, whenListening } = require('./standalone-own')

const table = new urlprefix.RoutingTable() // this process's prefix servers, for conflicts
// port -> { count, ready, owners }: this process's servers on it (its prefix servers,
// and a listen(port)'s: owners), and when the router has its socket
const held = new Map()

/**
 * Whether this is a listen(prefix) this file serves: one prefix, the port not the
 * server's own. An https one goes with its server's key material (standalone-tls.js),
 * which serves its host on the port, by SNI beside the other servers'
 * (router/internal/hub/shared_tls.go).
 */
function takes (options) {
  return options.path === undefined && Array.isArray(options.urls) && options.urls.length === 1 &&
    /^https?:/i.test(options.urls[0]) && options.settings !== null && typeof options.settings === 'object' && options.settings.ownsPort === false
}

/**
 * A listen(prefix)'s reservation (contract.js reserve()).
 * @param {object} options reserve()'s: urls (one prefix), settings; queue and token are set here
 * @param {object} own standalone-native.js's router and hand-over
 */
function reservePrefix (options, own) {
  const p = urlprefix.parse(options.urls[0], { allowPortZero: true })
  const ownsPort = options.settings !== null && typeof options.settings === 'object' && options.settings.ownsPort === true
  const { name, token } = newQueue(own)
  // (a port 0 prefix is placed once node has its port; nothing can conflict before)
  if (p.port !== 0) table.add(p.prefix, { name })
  const r = own.ensureRouter()
  options.queue = name
  options.token = token
  // (an https server's: server.setSecureContext())
  const reservation = reservationOf(r, name, {
    options,
    onRelease (done) {
      const port = reservation.ports[0]
      for (const u of reservation.urls) table.remove(u)
      if (reservation.urls.length === 0 && p.port !== 0) table.remove(p.prefix)
      if (port === undefined || !held.has(port)) return
      if (ownsPort) held.get(port).owners--
      if (--held.get(port).count > 0) return
      if (held.get(port).server !== undefined) held.get(port).server.close()
      held.delete(port)
      // (its last prefix left)
      givenBack([port], done)
    }
  })
  // an https server's key material, as it is when its prefix reaches the router
  const tlsOf = (prefix, port) => require('./standalone-tls').listenTls(options, prefix, port)
  const place = (port) => {
    const prefix = `${p.scheme}://${p.host}:${port}${p.path}`
    if (p.port === 0) table.add(prefix, { name })
    reservation.bound = true
    reservation.known = true
    reservation.urls = [prefix]
    reservation.ports = [port]
    const h = held.get(port)
    if (h !== undefined) h.count++
    else held.set(port, { count: 1, ready: handedOver, owners: 0 })
    // (a listen(port) joining its prefix servers: a second one is node's EADDRINUSE)
    if (ownsPort) held.get(port).owners++
    return prefix
  }
  // the port's socket reaches the router before another prefix of it (node sends the
  // listen's socket a tick later; the router would bind the port itself otherwise)
  let handedOver = null
  hold()
  let ready
  if (p.port !== 0 && held.has(p.port)) {
    // the router listens there for this process already: nothing to bind
    const first = held.get(p.port).ready
    const prefix = place(p.port)
    ready = first.then(() => {}, () => {}).then(() => ask(r, { httpsys: 'reservePrefix', queue: name, token, urls: [prefix], ...tlsOf(prefix, p.port) }))
  } else {
    const server = nodeBinds(r, name, p)
    const handOver = () => {
      const port = server.address().port
      const prefix = `${p.scheme}://${p.host}:${port}${p.path}`
      // (in the next tick, as standalone-native.js's: settings set after listen() go too)
      const msg = { httpsys: 'listenShared', queue: name, token, urls: [prefix], ip: p.ip || '', ...tlsOf(prefix, port) }
      // a cluster worker's port is its primary's: node's server stays, and its
      // connections go to the router (standalone-cluster.js), until the port's last
      // prefix of this process has gone
      const clustered = require('node:cluster').isWorker
      handedOver = new Promise((resolve) => process.nextTick(resolve))
        .then(() => clustered ? ask(r, { ...msg, httpsys: 'listenConns', kind: 'shared', port }) : own.handOver(r, server, msg))
      place(port)
      if (clustered) held.get(port).server = server
      return handedOver
    }
    ready = whenListening(server, p, handOver)
  }
  reservation.ready = ready.then(() => {}, (err) => {
    if (!reservation.released) {
      for (const u of reservation.urls) table.remove(u)
      if (reservation.urls.length === 0 && p.port !== 0) table.remove(p.prefix)
      const port = reservation.ports[0]
      if (port !== undefined && held.has(port) && ownsPort) held.get(port).owners--
      if (port !== undefined && held.has(port) && --held.get(port).count === 0) held.delete(port)
      reservation.released = true
    }
    throw err
  }).finally(unhold)
  reservation.ready.catch(() => {})
  return reservation
}

/**
 * Whether a listen(port) (standalone-native.js) goes to a port this process's prefix
 * servers hold: the router serves it as the prefix `http://+:port/` there (the table
 * routes the port, as the removed JS hub did), no longer the server's own.
 */
function joinsShared (options) {
  const p = urlprefix.parse(options.urls[0], { allowPortZero: true })
  return p.port !== 0 && held.has(p.port) && held.get(p.port).owners === 0
}

/**
 * A listen(port) server of this process bound `port` (standalone-native.js): a
 * listen(prefix) there later joins it (reservePrefix once `handedOver` settled), and a
 * prefix the same as the server's is a conflict at once.
 * @returns {(unbound: Promise<void>) => void} its close(): the port goes back once
 *   neither it nor a prefix server holds it
 */
function holdOwnPort (port, prefix, name, handedOver) {
  table.add(prefix, { name })
  held.set(port, { count: 1, ready: handedOver, owners: 1 })
  let gone = false
  const release = (unbound) => {
    if (gone) return
    gone = true
    table.remove(prefix)
    const h = held.get(port)
    if (h === undefined) return
    h.owners--
    if (--h.count > 0) return
    held.delete(port)
    givenBack([port], unbound)
  }
  // (a hand-over that failed holds nothing)
  handedOver.catch(() => release(Promise.resolve()))
  return release
}

module.exports = { takes, reservePrefix, joinsShared, holdOwnPort }
