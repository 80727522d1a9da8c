'use strict'

// The listening side of a TLS port: a tls.Server (node's, so handshakes, session
// tickets, the handshake timeout and ALPN are OpenSSL's and node's, not ours) whose
// certificates come from the TlsStore by SNI, and which hands each client connection,
// once the handshake is done, to the hub: HTTP/1.1 to a ClientConnection (the same
// parser and rules as plain HTTP), h2 to an H2Connection (RFC 9113 3.2: h2 is chosen by
// ALPN, RFC 7301).
//
// A failed handshake never reaches an app: it is counted (hub.tlsFailed) and the
// socket dropped. Client certificates: requestCert is per connection and decided
// before the client says which host it wants, so a port asks for a certificate when any
// of its entries does; whether a missing or unverified one is refused is the entry's
// own rejectUnauthorized, checked once the handshake is done (TlsStore.judge), and a
// request whose Host belongs to another entry than the handshake's is 421 (hub.route).

const tls = require('node:tls')

const ALPN = ['h2', 'http/1.1']

/**
 * @param {object} opts
 * @param {() => number} opts.port the port (known once bound, for port 0)
 * @param {import('../tls-store').TlsStore} opts.store
 * @param {number} opts.handshakeTimeout ms (0: node's default)
 * @param {boolean} opts.h2 offer h2 by ALPN
 * @param {(socket: tls.TLSSocket, port: number, verdict: object) => void} opts.onSecure verdict: TlsStore.judge's
 * @param {(port: number, err: Error, socket: tls.TLSSocket|null) => void} opts.onFailure
 * @returns {tls.Server}
 */
function createTlsServer ({ port, store, handshakeTimeout, h2 = true, onSecure, onFailure }) {
  const server = tls.createServer({
    // A client's FIN ends the connection until it is handed over (node's https server
    // does the same): a client that connects and leaves mid-handshake must not hold a
    // socket until the handshake timeout. HTTP/1.1 connections are then made half-open
    // (a request followed by FIN still gets its answer: hub.onSecureSocket); h2 ones
    // stay as they are, as node's http2 server's (a FIN ends the session).
    allowHalfOpen: false,
    noDelay: true,
    ALPNProtocols: h2 ? ALPN : ALPN.slice(1),
    SNICallback: (servername, cb) => cb(null, store.contextFor(port(), servername) || undefined),
    handshakeTimeout: handshakeTimeout > 0 ? handshakeTimeout : 120000,
    requestCert: store.wantsClientCert(port()),
    rejectUnauthorized: false,
    ...store.defaultOptions(port())
  })
  server.on('secureConnection', (socket) => {
    const p = port()
    // the verdict is the hub's, never the session's (tls-store.js judge): a resumed
    // session carries the verify result of the handshake that made it, for any entry
    const verdict = store.judge(p, socket)
    if (verdict.refuse) {
      const err = new Error(`client certificate refused: ${verdict.authorizationError}`)
      err.code = 'ERR_HTTPSYS_TLS_CLIENT_CERT'
      err.reason = verdict.authorizationError
      onFailure(p, err, socket)
      socket.destroy()
      return
    }
    onSecure(socket, p, verdict)
  })
  server.on('tlsClientError', (err, socket) => {
    onFailure(port(), err, socket)
    socket.destroy()
  })
  return server
}

/** The store changed for this port: new handshakes use the new default and policy. */
function refresh (server, store, port) {
  server.setSecureContext(store.defaultOptions(port))
  server.requestCert = store.wantsClientCert(port)
}

/**
 * The contract's TlsInfo (src/wire/contract.js) of a connection whose handshake is done.
 * @param {tls.TLSSocket} socket
 * @param {{peer, authorized: boolean, authorizationError: string|null}} verdict TlsStore.judge's
 */
function tlsInfoOf (socket, verdict) {
  const cipher = socket.getCipher() || null
  return {
    protocol: socket.getProtocol() || null,
    cipher: cipher && { name: cipher.name, standardName: cipher.standardName, version: cipher.version },
    alpnProtocol: socket.alpnProtocol || false,
    servername: typeof socket.servername === 'string' ? socket.servername : null,
    authorized: verdict.authorized,
    authorizationError: verdict.authorizationError,
    peerCertificate: verdict.peer === null ? null : verdict.peer.raw
  }
}

module.exports = { createTlsServer, refresh, tlsInfoOf }
