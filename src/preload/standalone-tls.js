'use strict'

// A standalone https server on the native router (issue 25 "Standalone";
// standalone-native.js): node binds its port as for http, and the socket goes to the
// router with the key material the app gave https.createServer() (the form a worker's
// HELLO carries: src/wire/protocol.js encodeTlsOptions, an encrypted key opened by
// node's crypto), so its certificate serves from the first connection on, as node's
// does. The router makes the port a TLS
// one (router/internal/hub/adopt.go); the worker's HELLO brings the material
// again, and one that cannot serve is refused there with the router's reason
// (ERR_HTTPSYS_TLS_CERT), which the server emits as 'error'.
//
// Of node's options, the router serves key, cert, pfx, passphrase, ca, requestCert,
// rejectUnauthorized (src/http/https-server.js TLS_KEYS). A server given no certificate
// listens, and every handshake fails, as node's; the process warns once then
// (ERR_HTTPSYS_TLS_NO_CERT).

const { encodeTlsOptions } = require('../wire/protocol')
const { defaultCaPem } = require('../tls-default-ca')
const { codes } = require('../errors')

/**
 * The listen message's TLS fields for a server's listen() (none for a plain one).
 * @param {object} options the backend's reserve() options (options.tls: the https
 *   server's options, src/http/server.js)
 * @param {string} prefix the server's prefix, its port bound
 * @param {number} port
 * @returns {object} `tls` (encodeTlsOptions' form, or null), and `defaultCA` (node's
 *   default CAs, PEM) when the server asks for client certificates without a `ca`
 */
function listenTls (options, prefix, port) {
  if (!/^https:/i.test(prefix)) return {}
  const out = fieldsOf(options.tls)
  if (out.tls === null) warnNoCert(prefix, port)
  return out
}

function fieldsOf (tls) {
  const material = tls ? encodeTlsOptions(tls) : null
  const out = { tls: material }
  // node checks them against its default roots then: the router has none of its own
  if (material !== null && material.requestCert === true && material.ca === undefined) out.defaultCA = defaultCaPem()
  return out
}

/**
 * server.setSecureContext() on a server that listens: its router serves the new
 * material to new handshakes (connections up keep theirs), once the listen has reached
 * it; a worker's HELLO still to come carries it too.
 */
function setTls (r, queue, options, reservation, tls) {
  options.tls = tls
  reservation.ready.then(() => {
    if (reservation.released || !r.child.connected || tls === null) return
    r.child.send({ httpsys: 'tls', queue, ...fieldsOf(tls) }, () => {})
  }, () => {})
}

// ERR_HTTPSYS_TLS_NO_CERT's record, on stderr as the logger writes it
function warnNoCert (prefix, port) {
  const err = new codes.ERR_HTTPSYS_TLS_NO_CERT({ prefix, port })
  require('../logger').child({ component: 'router' }).warn({ code: err.code, port }, err.message)
}

module.exports = { listenTls, setTls, fieldsOf }
