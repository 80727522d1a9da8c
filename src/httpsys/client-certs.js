'use strict'

// Client certificates on HTTP.SYS (`requestCert` in https.createServer() options, or in a
// config `tls` entry). HTTP.SYS asks clients for a certificate only where the port's
// binding says so (HTTP_SERVICE_CONFIG_SSL_FLAG_NEGOTIATE_CLIENT_CERT: `httpsys cert add
// --client-cert`, netsh's clientcertnegotiation=enable). It then completes every
// handshake, with or without a certificate, and hands each request the certificate the
// client sent and what Windows thought of its chain (HTTP_SSL_CLIENT_CERT_INFO.CertFlags,
// native/src/request-convert.cc). So the worker decides what node decides in the
// handshake:
//
// - with `ca`: the chain is checked here, against those certificates only (node's rule:
//   `ca` replaces the default trust), as OpenSSL checks it: each certificate issued by the
//   next, signed by its key, a CA, in its validity period, up to a self-signed one in
//   `ca` (or the client's certificate itself is in `ca`), and the client's certificate
//   good for client authentication where it names its uses. HTTP.SYS hands over the leaf
//   only, so every certificate above it must be in `ca`;
// - without `ca`: Windows' verdict (the machine's trusted roots, and revocation unless the
//   binding turns that off with --no-revocation-check);
// - no certificate: not authorized, 'UNABLE_TO_GET_ISSUER_CERT' (what node says then);
// - rejectUnauthorized (node's default with requestCert): a request from a client that
//   is not authorized never reaches the app. node fails such a handshake; HTTP.SYS has
//   completed it, so the worker answers 403 and closes the connection (attachment.js).
//
// A port whose binding does not negotiate client certificates would hand the app
// requests without one as if none had been sent: an app that asks for them fails to
// listen instead (ERR_HTTPSYS_CLIENT_CERT_BINDING, with the command that fixes it).

const { X509Certificate } = require('node:crypto')
const { where, httpsPrefixes } = require('./service-config')

const NEGOTIATE_CLIENT_CERT = 0x2 // HTTP_SERVICE_CONFIG_SSL_FLAG_NEGOTIATE_CLIENT_CERT
const NO_REVOCATION_CHECK = 0x1 // DefaultCertCheckMode: do not check revocation
const NO_CERTIFICATE = 'UNABLE_TO_GET_ISSUER_CERT'
const MAX_DEPTH = 10
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2'
const ANY_EKU = '2.5.29.37.0'

/**
 * node's `ca` option as certificates: a PEM string or Buffer (bundles of several), DER
 * Buffers, or an array of them.
 * @returns {X509Certificate[]}
 * @throws {Error} on something that is not a certificate (node's createSecureContext throws too)
 */
function parseCa (ca) {
  const out = []
  for (const item of [].concat(ca)) {
    if (item === undefined || item === null) continue
    const text = Buffer.isBuffer(item) ? item.toString('latin1') : String(item)
    const pems = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)
    if (pems !== null) for (const pem of pems) out.push(new X509Certificate(pem))
    else out.push(new X509Certificate(Buffer.isBuffer(item) ? item : Buffer.from(text, 'latin1')))
  }
  return out
}

function selfIssued (c) {
  return c.checkIssued(c)
}

/**
 * Checks a client's certificate (DER) against trusted certificates, as OpenSSL's chain
 * check does for node.
 * @param {Buffer} der
 * @param {X509Certificate[]} cas
 * @param {Date} now
 * @returns {string|null} null when it chains to one of cas, else node's authorizationError
 */
function verifyChain (der, cas, now) {
  let leaf
  try {
    leaf = new X509Certificate(der)
  } catch {
    return 'CERT_REJECTED'
  }
  const chain = [leaf]
  let cur = leaf
  for (;;) {
    // trusted as it is: the client's certificate itself, or a self-signed CA reached
    if (cas.some((c) => c.raw.equals(cur.raw)) && (cur === leaf || selfIssued(cur))) break
    const named = cas.filter((c) => !c.raw.equals(cur.raw) && cur.checkIssued(c))
    if (named.length === 0) {
      if (cur !== leaf) return 'UNABLE_TO_GET_ISSUER_CERT'
      return selfIssued(leaf) ? 'DEPTH_ZERO_SELF_SIGNED_CERT' : 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'
    }
    const issuer = named.find((c) => cur.verify(c.publicKey))
    if (issuer === undefined) return 'CERT_SIGNATURE_FAILURE'
    // OpenSSL checks each CA for the ssl client purpose, which a non-CA fails
    if (!issuer.ca) return 'INVALID_PURPOSE'
    chain.push(issuer)
    if (selfIssued(issuer)) break
    if (chain.length > MAX_DEPTH) return 'CERT_CHAIN_TOO_LONG'
    cur = issuer
  }
  // the client's own certificate: an extended key usage that leaves out client auth
  const eku = leaf.keyUsage // node names the extended key usage OIDs so
  if (Array.isArray(eku) && !eku.includes(CLIENT_AUTH) && !eku.includes(ANY_EKU)) return 'INVALID_PURPOSE'
  const t = now.getTime()
  for (const c of chain) {
    if (t < Date.parse(c.validFrom)) return 'CERT_NOT_YET_VALID'
    if (t > Date.parse(c.validTo)) return 'CERT_HAS_EXPIRED'
  }
  return null
}

/** What one server (or one config `tls` entry) asks of clients. */
class ClientCertPolicy {
  /**
   * @param {object} options node's: rejectUnauthorized (default true), ca
   * @param {() => Date} [now]
   */
  constructor ({ rejectUnauthorized = true, ca } = {}, now = () => new Date()) {
    this.rejectUnauthorized = rejectUnauthorized !== false
    this.cas = ca === undefined || ca === null ? null : parseCa(ca)
    this.now = now
  }

  /**
   * Sets tls.authorized and tls.authorizationError as node's socket has them.
   * @param {object} tls the request's neutral tls object (changed in place)
   * @returns {boolean} whether the request may reach the app
   */
  judge (tls) {
    const cert = tls.peerCertificate
    if (cert === null || cert === undefined || cert.length === 0) {
      tls.authorized = false
      tls.authorizationError = NO_CERTIFICATE
    } else if (this.cas !== null) {
      const error = verifyChain(cert, this.cas, this.now())
      tls.authorized = error === null
      tls.authorizationError = error
    }
    // else: Windows' verdict, as the addon read it
    return tls.authorized === true || !this.rejectUnauthorized
  }
}

/**
 * The policies a worker applies, by port: its server's own (requestCert in its options)
 * for every port, and the config's `tls` entries (HTTPSYS_CLIENT_CERTS, by port and SNI
 * host), which win where they name the port.
 * @param {object|null} serverOptions the app's https options
 * @param {object[]} configEntries [{ port, host?, rejectUnauthorized, ca }]
 * @returns {((req: object) => ClientCertPolicy|null)|null} null when nothing asks
 */
function policyLookup (serverOptions, configEntries = []) {
  const own = serverOptions && serverOptions.requestCert === true ? new ClientCertPolicy(serverOptions) : null
  const byPort = new Map()
  for (const e of configEntries) {
    if (!byPort.has(e.port)) byPort.set(e.port, [])
    byPort.get(e.port).push({ host: e.host ? String(e.host).toLowerCase() : null, policy: new ClientCertPolicy(e) })
  }
  if (own === null && byPort.size === 0) return null
  return (req) => {
    const entries = byPort.get(req.localPort)
    if (entries !== undefined) {
      const sni = req.tls && typeof req.tls.servername === 'string' ? req.tls.servername.toLowerCase() : null
      const hit = entries.find((e) => e.host !== null && e.host === sni) || entries.find((e) => e.host === null)
      if (hit !== undefined) return hit.policy
    }
    return own
  }
}

/**
 * The bindings that would serve these https prefixes and do not ask clients for a
 * certificate. For a prefix on a wildcard host every IP:port binding of its port can
 * serve a connection; for a named host its SNI binding, else those.
 * @param {object} sc the service configuration (service-config.js)
 * @param {string[]} urls
 * @returns {{binding: string, port: number, host?: string, thumbprint: string, flags: number}[]}
 * @throws when the configuration cannot be read
 */
function bindingsWithoutNegotiation (sc, urls) {
  const ip = sc.sslCertList()
  const sni = sc.sslCertList({ sni: true })
  const bad = new Map()
  for (const { p } of httpsPrefixes(urls)) {
    const own = p.hostKind === 'explicit' ? sni.filter((b) => Number(b.port) === p.port && String(b.host).toLowerCase() === p.host) : []
    const serving = own.length > 0 ? own : ip.filter((b) => Number(b.port) === p.port)
    for (const b of serving) {
      if ((Number(b.flags) & NEGOTIATE_CLIENT_CERT) !== 0) continue
      const key = b.host ? { port: Number(b.port), host: b.host } : { port: Number(b.port), ip: b.ip }
      const binding = where(key)
      bad.set(binding, { binding, ...key, thumbprint: String(b.hash), flags: Number(b.flags) || 0 })
    }
  }
  return [...bad.values()]
}

/** The command that makes a binding ask for client certificates (same certificate). */
function negotiateCommand (b) {
  return `httpsys cert add --port ${b.port}${b.host ? ` --host ${b.host}` : b.ip && b.ip !== '0.0.0.0' ? ` --ip ${b.ip}` : ''} --thumbprint ${b.thumbprint} --client-cert`
}

module.exports = {
  NEGOTIATE_CLIENT_CERT,
  NO_REVOCATION_CHECK,
  NO_CERTIFICATE,
  parseCa,
  verifyChain,
  ClientCertPolicy,
  policyLookup,
  bindingsWithoutNegotiation,
  negotiateCommand
}
