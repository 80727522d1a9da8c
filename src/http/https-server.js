'use strict'

// https.Server over a request queue: the http Server of server.js whose listen(port)
// means https://+:port/ and which hands the TLS options it was given to attach(), for
// a router that terminates TLS with them (the hub, when the config has no certificate
// for the port; HTTP.SYS ignores them and serves the port's certificate binding).
// The router does the handshake; req.socket answers the TLS questions from what it
// reports (socket.js: encrypted, authorized, getPeerCertificate(), getCipher(), ...).
//
// The key material is kept as given and sent only to the router (never logged).
// setSecureContext() replaces it: a standalone server's own router serves it to new
// handshakes at once, as node does; under a supervisor it is for the next listen(), and
// the router keeps serving the certificate it has (a running hub takes a new one when
// an app instance attaches with it: `httpsys reload`). https://nodejs.org/api/https.html#class-httpsserver

const { Server: HttpServer } = require('./server')
const { defineLegacyClass } = require('./legacy-class')
const { kScheme, kTlsOptions, kHandle } = require('./symbols')

// What of node's tls.createServer options a router can serve with: the certificate, and
// the client-certificate policy. Cipher and protocol choices are the router's.
const TLS_KEYS = ['key', 'cert', 'pfx', 'passphrase', 'ca', 'requestCert', 'rejectUnauthorized']

/**
 * @param {object} [options] node's https.createServer options (see TLS_KEYS) plus the
 *   http Server's
 * @param {Function} [requestListener]
 */
function Server (options, requestListener) {
  if (!(this instanceof Server)) return new Server(options, requestListener)
  if (typeof options === 'function') {
    requestListener = options
    options = {}
  } else if (options === undefined || options === null) {
    options = {}
  }
  HttpServer.call(this, options, requestListener)
  this[kScheme] = 'https'
  this[kTlsOptions] = pickTls(options)
}

class HttpsMembers extends HttpServer {
  /**
   * https.Server#setSecureContext: new handshakes of a standalone server that listens
   * use it from now on, as node's (its reservation passes it to the router); otherwise
   * the material for the next listen(). Material node's context refuses throws, as there.
   */
  setSecureContext (options) {
    const material = pickTls(options || {})
    if (material !== null) require('node:tls').createSecureContext(material)
    this[kTlsOptions] = material
    const handle = this[kHandle]
    if (handle !== null && handle.reservation && typeof handle.reservation.setTls === 'function') handle.reservation.setTls(material)
  }

  // Per-host contexts belong to the router: certificates per host come from the
  // config's tls entries (or from each app's own server on its own host prefix).
  addContext () {}
}

defineLegacyClass(Server, HttpServer, HttpsMembers)

function pickTls (options) {
  let out = null
  for (const key of TLS_KEYS) {
    if (options[key] === undefined || options[key] === null) continue
    if (out === null) out = {}
    out[key] = options[key]
  }
  return out
}

/**
 * https.createServer([options][, requestListener])
 * @returns {Server}
 */
function createServer (options, requestListener) {
  return new Server(options, requestListener)
}

module.exports = { Server, createServer }
