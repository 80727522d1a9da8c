'use strict'

// https.Server over a request queue: the http Server of server.js whose listen(port)
// means https://+:port/ and which hands the TLS options it was given to attach(), for
// a router that terminates TLS with them (the hub, when the config has no certificate
// for the port; HTTP.SYS ignores them and serves the port's certificate binding).
// The router does the handshake; req.socket answers the TLS questions from what it
// reports (socket.js: encrypted, authorized, getPeerCertificate(), getCipher(), ...).
//
// The key material is kept as given and sent only to the router (never logged).
// setSecureContext() replaces it for the next listen(); the router keeps serving the
// certificate it has (a running hub takes a new one when an app instance attaches
// with it: `httpsys reload`). https://nodejs.org/api/https.html#class-httpsserver

const { Server: HttpServer } = require('./server')
const { defineLegacyClass } = require('./legacy-class')
const { kScheme, kTlsOptions } = require('./symbols')

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
  /** https.Server#setSecureContext: the material for the next listen(). */
  setSecureContext (options) {
    this[kTlsOptions] = pickTls(options || {})
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
