'use strict'

// A standalone app's cluster worker on the native router (issue 25 "Standalone"):
// `node -r httpsys-cli/register app.js` whose app forks node cluster workers that
// listen(). node binds a worker's port in the primary (cluster's round-robin handle:
// the worker's net.Server holds no socket of its own, so standalone-native.js has none
// to hand over) and gives each connection it accepts to one worker. So here the
// worker's net.Server listens as on node, and stays: each connection it gets goes to
// this process's router ({"httpsys": "conn"}), on a queue made for the port without a
// socket ({"httpsys": "listenConns"}: router/cmd/httpsys-router/cluster.go), served
// with the server's settings and key material as a listen()'s port. The workers share
// the port as node's do, each with its router.

const net = require('node:net')
const urlprefix = require('../urlprefix')
const { hold, unhold, newQueue, ownSettings, ask, forward, resendSettings, reservationOf, nodeBinds, whenListening, bindError } = require('./standalone-own')

/**
 * A cluster worker's listen(port) (contract.js reserve()).
 * @param {object} options reserve()'s: urls (one, the port's), settings, tls; queue and token are set here
 * @param {object} own standalone-native.js's router and hand-over
 */
function reserve (options, own) {
  const p = urlprefix.parse(options.urls[0], { allowPortZero: true })
  const r = own.ensureRouter()
  const { name, token } = newQueue(own)
  options.queue = name
  options.token = token
  // (its connections are sent after listenConns: the router reads the channel in order)
  const server = nodeBinds(r, name, p)
  const reservation = reservationOf(r, name, { options, server })
  hold()
  let settings = null
  const ready = whenListening(server, p, () => {
    const port = server.address().port
    const prefix = `${p.scheme}://${p.host}:${port}${p.path}`
    reservation.bound = true
    reservation.known = true
    reservation.urls = [prefix]
    reservation.ports = [port]
    // in the next tick, as standalone-native.js's: settings set after listen() go too
    return new Promise((resolve) => process.nextTick(resolve)).then(() => {
      const tls = require('./standalone-tls').listenTls(options, prefix, port)
      settings = ownSettings(options.settings)
      return ask(r, { httpsys: 'listenConns', queue: name, token, urls: [prefix], ip: p.ip || '', port, settings, ...tls })
    })
  })
  reservation.ready = ready.then(() => resendSettings(r, name, options, settings), (err) => {
    server.close()
    throw err
  }).finally(unhold)
  reservation.ready.catch(() => {})
  return reservation
}

/**
 * A cluster worker's listen(path): the primary binds the path (and removes it once the
 * last worker's server closed, as node's cluster does); the worker's connections go to
 * a queue of the router that takes connections one by one (kind "path").
 * @param {object} options reserve()'s: path, settings; queue and token are set here
 */
function reservePath (options, own) {
  const r = own.ensureRouter()
  const { name, token } = newQueue(own)
  options.queue = name
  options.token = token
  const server = net.createServer({ pauseOnConnect: true })
  server.on('connection', (socket) => forward(r, socket, name))
  server.listen(options.path)
  hold()
  let settings = null
  const ready = new Promise((resolve, reject) => {
    server.once('error', (err) => reject(bindError(err, options.path)))
    server.once('listening', () => process.nextTick(() => {
      settings = ownSettings(options.settings)
      ask(r, { httpsys: 'listenConns', kind: 'path', queue: name, token, settings }).then(resolve, reject)
    }))
  })
  const reservation = reservationOf(r, name, { server })
  reservation.ready = ready.then(() => {
    reservation.bound = true
    reservation.known = true
    resendSettings(r, name, options, settings)
  }, (err) => {
    server.close()
    throw err
  }).finally(unhold)
  reservation.ready.catch(() => {})
  return reservation
}

module.exports = { reserve, reservePath }
