'use strict'

// A certificate the hub serves, from where users give it: a `tls` entry of the config
// (file paths or PEM text) or the options an app passed to https.createServer() (PEM
// text or Buffers, sent in HELLO); and on HTTP.SYS the app's own certificate that
// `httpsys start --setup` binds (src/httpsys/app-cert.js). Loaded and checked once, before any client sees it:
// a file that cannot be read, a key that does not match, a wrong passphrase, a
// certificate that is expired or not valid yet all fail here with the file named
// (ERR_HTTPSYS_TLS_CERT), never as a handshake failure later.

const crypto = require('node:crypto')
const fs = require('node:fs')
const tls = require('node:tls')
const { codes } = require('./errors')

// a PEM private key under a passphrase: PKCS#8's own label, or a traditional key's header
const ENCRYPTED_KEY = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED/

const PEM = /-----BEGIN [A-Z0-9 ]+-----/

/**
 * @typedef {object} TlsMaterial
 * @property {object} options for tls.createSecureContext (key, cert, pfx, passphrase, ca)
 * @property {string[]} files the files it was read from (watched for changes)
 * @property {string} label what error messages and logs call it (a file, or "the app's options")
 * @property {boolean} requestCert ask clients for a certificate
 * @property {boolean} rejectUnauthorized refuse a client whose certificate does not verify
 * @property {string} fingerprint the certificate's SHA-256, to tell a changed one
 * @property {string} validTo
 * @property {import('node:crypto').X509Certificate} x509 the leaf certificate, as the context serves it
 * @property {string} digest of everything above that matters, to skip reloading the same
 */

/**
 * @param {object} entry a config tls entry ({ cert, key | pfx, passphrase?, ca?, requestCert?,
 *   rejectUnauthorized? }: strings are paths or PEM text) or an app's decoded options
 *   (strings are PEM text, as node's https takes them)
 * @param {object} [opts]
 * @param {boolean} [opts.fromApp=false] the app's options: strings are never paths
 * @param {number} [opts.port] for the message
 * @param {string} [opts.host] for the message
 * @param {Date} [opts.now]
 * @returns {TlsMaterial}
 * @throws ERR_HTTPSYS_TLS_CERT
 */
/**
 * A config's certificate, key or CA value as node's tls takes it: PEM text (or a Buffer,
 * or the app's own values) as it is, a path read (a list, each of them).
 * @param {object} [o] { binary: a Buffer, not text; fromApp: strings are never paths;
 *   files: paths read are pushed here; port, host: for the message }
 * @throws ERR_HTTPSYS_TLS_CERT naming a file that cannot be read
 */
function readPem (value, what, { binary = false, fromApp = false, files = null, port, host } = {}) {
  if (value === undefined || value === null) return undefined
  if (Array.isArray(value)) return value.map((v) => readPem(v, what, { binary, fromApp, files, port, host }))
  if (typeof value !== 'string' || fromApp || PEM.test(value)) return value
  if (files !== null) files.push(value)
  try {
    const data = fs.readFileSync(value)
    return binary ? data : data.toString('utf8')
  } catch (err) {
    throw new codes.ERR_HTTPSYS_TLS_CERT({ file: value, reason: `the ${what} file cannot be read (${err.code || err.message})`, cause: err, port, host, fromApp })
  }
}

function loadMaterial (entry, { fromApp = false, port, host, now = new Date() } = {}) {
  const files = []
  const where = { port, host, fromApp }
  const appLabel = 'the key and certificate the app passed to https.createServer()'
  const fail = (file, reason, cause) => {
    throw new codes.ERR_HTTPSYS_TLS_CERT({ file, reason, cause, ...where })
  }
  const read = (value, what, binary) => readPem(value, what, { binary, fromApp, files, ...where })
  const options = {}
  const cert = read(entry.cert, 'certificate')
  const key = read(entry.key, 'private key')
  const pfx = read(entry.pfx, 'pfx', true)
  const ca = read(entry.ca, 'CA')
  if (cert !== undefined) options.cert = cert
  if (key !== undefined) options.key = key
  if (pfx !== undefined) options.pfx = pfx
  if (ca !== undefined) options.ca = ca
  if (typeof entry.passphrase === 'string') options.passphrase = entry.passphrase
  const label = fromApp ? appLabel : labelOf(entry)
  if (options.pfx === undefined && (options.cert === undefined || options.key === undefined)) {
    fail(label, options.cert === undefined ? 'no certificate was given (cert, or pfx)' : 'the certificate has no private key (key)')
  }

  // each piece on its own first, so that the message names the file that is wrong
  const nameOf = (key) => fromApp ? label : (typeof entry[key] === 'string' && !PEM.test(entry[key]) ? entry[key] : label)
  if (options.cert !== undefined) {
    try { new crypto.X509Certificate(first(options.cert)) } catch (err) { // eslint-disable-line no-new
      fail(nameOf('cert'), `it holds no PEM certificate (${err.message})`, err)
    }
  }
  if (options.key !== undefined && !Array.isArray(options.key) && (typeof options.key === 'string' || Buffer.isBuffer(options.key))) {
    try {
      crypto.createPrivateKey({ key: options.key, passphrase: options.passphrase })
    } catch (err) {
      // An encrypted key that does not open is a passphrase problem, whatever OpenSSL
      // says: about one wrong passphrase in 256 decrypts to bytes whose padding happens
      // to check, and then the decoder, not the cipher, refuses them ("unsupported").
      const reason = ENCRYPTED_KEY.test(String(options.key)) || /bad decrypt|passphrase|interrupted or cancelled/i.test(String(err.message))
        ? 'the private key is encrypted and the passphrase is wrong or missing'
        : `it holds no PEM private key (${err.message})`
      fail(nameOf('key'), reason, err)
    }
  }
  for (const one of [].concat(options.ca === undefined ? [] : options.ca)) {
    try { new crypto.X509Certificate(one) } catch (err) { // eslint-disable-line no-new
      fail(nameOf('ca'), `it holds no PEM CA certificate (${err.message})`, err)
    }
  }
  let context
  try {
    context = tls.createSecureContext(options)
  } catch (err) {
    fail(fileFor(err, entry, label, fromApp), explain(err), err)
  }
  // the leaf certificate as the context will serve it (for a pfx, only the context knows)
  let x509 = null
  try {
    const der = context.context.getCertificate()
    if (der) x509 = new crypto.X509Certificate(der)
  } catch {}
  if (x509 === null && typeof options.cert === 'string') {
    try { x509 = new crypto.X509Certificate(options.cert) } catch {}
  }
  const certLabel = fromApp ? appLabel : (typeof entry.pfx === 'string' && !PEM.test(entry.pfx) ? entry.pfx : labelOf(entry))
  if (x509 === null) fail(certLabel, 'it holds no certificate the router can read')
  const validFrom = new Date(x509.validFrom)
  const validTo = new Date(x509.validTo)
  if (validTo < now) fail(certLabel, `the certificate (${subjectOf(x509)}) expired on ${validTo.toISOString()}`)
  if (validFrom > now) fail(certLabel, `the certificate (${subjectOf(x509)}) is not valid before ${validFrom.toISOString()}`)

  const requestCert = entry.requestCert === true
  const rejectUnauthorized = requestCert && entry.rejectUnauthorized !== false
  return {
    options,
    files,
    label,
    requestCert,
    rejectUnauthorized,
    fingerprint: x509.fingerprint256,
    subject: subjectOf(x509),
    names: namesOf(x509),
    validTo: validTo.toISOString(),
    x509,
    digest: materialDigest(options, entry)
  }
}

/**
 * What makes two materials the same certificate setup (every instance of an app sends
 * its options again: the same ones need no new context).
 * @param {object} options the key material (cert, key, pfx, ca, passphrase) as read
 * @param {object} policy { requestCert, rejectUnauthorized }
 */
function materialDigest (options, policy) {
  const digest = crypto.createHash('sha256')
  const requestCert = policy.requestCert === true
  const rejectUnauthorized = requestCert && policy.rejectUnauthorized !== false
  for (const part of [options.cert, options.key, options.pfx, options.ca, options.passphrase, String(requestCert), String(rejectUnauthorized)]) {
    for (const v of [].concat(part === undefined ? [] : part)) {
      digest.update(typeof v === 'string' || Buffer.isBuffer(v) ? v : JSON.stringify(v)).update('\0')
    }
  }
  return digest.digest('hex')
}

function first (v) {
  return Array.isArray(v) ? v[0] : v
}

function labelOf (entry) {
  for (const key of ['cert', 'pfx', 'key']) {
    const v = entry[key]
    if (typeof v === 'string' && !PEM.test(v)) return v
  }
  return `the PEM text of the config's tls entry${entry.port ? ` for port ${entry.port}` : ''}`
}

// OpenSSL's reason, in words users can act on. The file: the key for key problems, the
// certificate (or pfx) otherwise.
function fileFor (err, entry, label, fromApp) {
  if (fromApp) return label
  const msg = String(err && err.message)
  const keyFile = typeof entry.key === 'string' && !PEM.test(entry.key) ? entry.key : null
  const certFile = typeof entry.cert === 'string' && !PEM.test(entry.cert) ? entry.cert : null
  const pfxFile = typeof entry.pfx === 'string' && !PEM.test(entry.pfx) ? entry.pfx : null
  const caFile = typeof entry.ca === 'string' && !PEM.test(entry.ca) ? entry.ca : null
  if (pfxFile) return pfxFile
  if (/mismatch/i.test(msg)) return `${certFile || label} with ${keyFile || 'its key'}`
  if (/key|decrypt|passphrase|PRIVATE/i.test(msg) && keyFile) return keyFile
  if (/ca|x509|CERTIFICATE/i.test(msg) && /ca/i.test(String(err && err.code)) && caFile) return caFile
  return certFile || keyFile || label
}

function explain (err) {
  const msg = String(err && err.message)
  if (/key values mismatch/i.test(msg)) return 'the private key does not belong to the certificate'
  if (/bad decrypt|mac verify failure|bad password|passphrase/i.test(msg)) return 'the passphrase is wrong (or missing)'
  if (/no start line|bad base64|unsupported|DECODER/i.test(msg)) return `it is not a PEM certificate and key, or not the one it claims (${msg})`
  return msg
}

function subjectOf (x509) {
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(x509.subject || '')
  return cn ? `CN=${cn[1]}` : (x509.subject || '').replace(/\n/g, ', ')
}

/** The DNS names a certificate is for (subjectAltName, else its CN), lower case. */
function namesOf (x509) {
  const out = []
  for (const part of String(x509.subjectAltName || '').split(/,\s*/)) {
    if (part.startsWith('DNS:')) out.push(part.slice(4).toLowerCase())
  }
  if (out.length === 0) {
    const cn = /(?:^|\n)CN=([^\n]*)/.exec(x509.subject || '')
    if (cn) out.push(cn[1].toLowerCase())
  }
  return out
}

module.exports = { loadMaterial, readPem, materialDigest, subjectOf, PEM }
