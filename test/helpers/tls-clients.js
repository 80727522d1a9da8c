'use strict'

// TLS clients for the tests of the routers' HTTPS and HTTP/2 (router-tls, router-h2,
// router-tls-rules, the cache tests): node's own https and http2 clients against
// 127.0.0.1, certificates not checked (the test certificates of tls-certs.js are
// self-signed).

const https = require('node:https')
const http2 = require('node:http2')

/**
 * One HTTPS request on its own connection (no ALPN offered, so HTTP/1.1).
 * @returns {Promise<{status, headers, body: Buffer, alpn, peer}>} peer: the server's certificate
 */
function httpsRequest (port, { path: p = '/', method = 'GET', headers = {}, body = null, servername, cert, key } = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request({ port, host: '127.0.0.1', path: p, method, servername, headers, rejectUnauthorized: false, agent: false, cert, key }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({
        status: res.statusCode,
        headers: res.headers,
        body: Buffer.concat(chunks),
        alpn: res.socket.alpnProtocol,
        peer: res.socket.getPeerCertificate && res.socket.getPeerCertificate()
      }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * An h2 session to 127.0.0.1:port, once connected. Errors after that are left to the
 * requests on it (each one's own promise reports what matters).
 */
function h2connect (port, { servername } = {}) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { rejectUnauthorized: false, servername })
    session.once('connect', () => {
      session.removeListener('error', reject)
      session.on('error', () => {})
      resolve(session)
    })
    session.once('error', reject)
  })
}

/** Closes an h2 session gracefully; resolves once it has. */
function closeSession (session) {
  return new Promise((resolve) => {
    if (session.destroyed) return resolve()
    session.once('close', resolve)
    session.close()
  })
}

/**
 * One h2 request on a session (with `body`, sent as the request's body).
 * @returns {Promise<{status, headers, body: Buffer, rstCode}>} once the stream closed;
 *   rstCode: the RST_STREAM code that closed it (NO_ERROR for a clean end)
 */
function h2 (session, headers, body) {
  return new Promise((resolve, reject) => {
    const r = session.request(headers, { endStream: body === undefined })
    const chunks = []
    let head = null
    r.on('response', (h) => { head = h })
    r.on('data', (c) => chunks.push(c))
    r.on('error', reject)
    r.on('close', () => resolve({ status: head && head[':status'], headers: head, body: Buffer.concat(chunks), rstCode: r.rstCode }))
    if (body !== undefined) r.end(body)
  })
}

module.exports = { httpsRequest, h2connect, closeSession, h2 }
