'use strict'

// The certificate an https app passes to https.createServer(), on HTTP.SYS. HTTP.SYS
// serves only the machine's certificate bindings (docs/http-sys.md 4), never an app's key:
// an https prefix on a port no binding covers fails every handshake, and the app never
// hears of it. Under `httpsys start --setup` (ENV.SETUP) the worker binds the app's own
// certificate there: it checks it with node's crypto (the key belongs to the certificate,
// valid today), imports it with its key into LocalMachine\My and its chain's intermediates
// into LocalMachine\CA (cert-import.js, as `httpsys cert add` does) and binds it with
// httpsys's AppId to 0.0.0.0:port, or to host:port (SNI) for a prefix that names its host.
// Without --setup, index.js warns.
//
// What it never does:
// - replace a binding: a port (or a host) some binding covers is left alone, and so is a
//   binding that appears between the look and the set (183 is an answer, not an error);
// - log or write the private key: it goes from the app's options to the addon in memory
//   (as PKCS#8 text, or the pfx with its passphrase); records carry the thumbprint, the
//   subject and the dates;
// - import a certificate already in the store with its key: one whose key this account
//   cannot open is there all the same (HTTP.SYS uses it as SYSTEM; certProblem());
// - stop the app: a certificate that cannot be bound is one error record with the fix.
// Two instances of the app attaching at once: the certificate already in the store with
// its key is not imported again, the import itself is idempotent by thumbprint (the addon
// names the key after it and replaces the same certificate), and the second set finds the
// first one's binding (183).

const crypto = require('node:crypto')
const { codes } = require('../errors')
const { certProblem, where, httpsPrefixes, HTTPSYS_APP_ID } = require('./service-config')
const { importCertificate } = require('./cert-import')
const { loadMaterial, subjectOf } = require('../tls-material')
const { NEGOTIATE_CLIENT_CERT } = require('./client-certs')

const APP_LABEL = 'the key and certificate the app passed to https.createServer()'
const WILDCARD_V4 = '0.0.0.0'

/**
 * The bindings the https prefixes need and the machine does not have: one per port for
 * the wildcard and IP hosts (0.0.0.0:port), one per named host (host:port, SNI). A prefix
 * counts as covered by any binding on its port when its host is a wildcard, and by its
 * host's SNI binding or any IP:port binding of its port when it names one.
 * @param {object} sc the service configuration (service-config.js)
 * @param {string[]} urls the prefixes the server is attached to
 * @returns {{port: number, host?: string, ip?: string, binding: string, prefixes: string[]}[]}
 * @throws when the configuration cannot be read
 */
function unboundTargets (sc, urls) {
  const targets = new Map()
  for (const { url, p } of httpsPrefixes(urls)) {
    const key = p.hostKind === 'explicit' ? { port: p.port, host: p.host } : { port: p.port, ip: WILDCARD_V4 }
    const binding = where(key)
    if (!targets.has(binding)) targets.set(binding, { ...key, binding, prefixes: [] })
    targets.get(binding).prefixes.push(url)
  }
  if (targets.size === 0) return []
  const bindings = [...sc.sslCertList(), ...sc.sslCertList({ sni: true })]
  return [...targets.values()].filter((t) => !bindings.some((b) => covers(b, t)))
}

function covers (b, target) {
  if (Number(b.port) !== target.port) return false
  if (target.host === undefined || !b.host) return true
  return String(b.host).toLowerCase() === target.host
}

/**
 * The certificate the app passed, checked as the hub checks it (src/tls-material.js:
 * the key belongs to the certificate, the passphrase opens it, valid today), and what
 * cert-import.js imports: the certificates the app passed (the one the context serves,
 * and its chain) with the served one's key, or the pfx with its passphrase.
 * @param {object} options the app's TLS options: key + cert (PEM text or Buffers, arrays
 *   as node takes them, passphrase), or pfx + passphrase
 * @param {object} [where] { port, host, now } for the message and the dates
 * @returns {{source: object, thumbprint: string, subject: string, notAfter: Date}}
 * @throws ERR_HTTPSYS_TLS_CERT naming what is wrong
 */
function appCertificate (options, { port, host, now = new Date() } = {}) {
  const m = loadMaterial(options, { fromApp: true, port, host, now })
  const x509 = m.x509
  let source
  if (m.options.pfx !== undefined) {
    const item = [].concat(m.options.pfx)[0]
    const object = item !== null && typeof item === 'object' && !Buffer.isBuffer(item)
    const raw = object ? item.buf : item
    const passphrase = object && typeof item.passphrase === 'string' ? item.passphrase : m.options.passphrase
    source = { pfx: typeof raw === 'string' ? Buffer.from(raw) : raw, passphrase: typeof passphrase === 'string' ? passphrase : '' }
  } else {
    // node takes several key/cert pairs (an RSA and an ECDSA one): a binding holds the one served
    const key = [].concat(m.options.key).map((k) => {
      const object = k !== null && typeof k === 'object' && !Buffer.isBuffer(k)
      return crypto.createPrivateKey({ key: object ? k.pem : k, passphrase: object && k.passphrase !== undefined ? k.passphrase : m.options.passphrase })
    }).find((k) => x509.checkPrivateKey(k))
    // every certificate passed: the served one and the intermediates its chain needs
    const certs = [].concat(m.options.cert).map((c) => Buffer.isBuffer(c) ? c.toString('latin1') : String(c)).join('\n')
    source = { cert: certs, key: key.export({ type: 'pkcs8', format: 'pem' }) }
  }
  return { source, thumbprint: x509.fingerprint.replace(/:/g, '').toLowerCase(), subject: subjectOf(x509), notAfter: new Date(x509.validTo) }
}

/**
 * Imports and binds the app's certificate to one target unboundTargets() found.
 * @param {object} sc the service configuration
 * @param {object} options the app's TLS options
 * @param {object} target
 * @param {object} opts { now: Date, store }
 * @returns {{result: 'set'|'exists', thumbprint: string, subject: string, notAfter: Date, imported: boolean}}
 * @throws ERR_HTTPSYS_TLS_CERT, ERR_HTTPSYS_NOT_ELEVATED, ERR_HTTPSYS_CERT_UNUSABLE, ERR_HTTPSYS_NATIVE_CALL
 */
function bindTarget (sc, options, target, { now, store }) {
  const cert = appCertificate(options, { port: target.port, host: target.host, now })
  const context = {
    what: `Binding the certificate the app passed to https.createServer() (${cert.subject}, thumbprint ${cert.thumbprint}) to ${target.binding}`,
    command: 'httpsys start --setup'
  }
  let hash = cert.thumbprint
  let imported = false
  if (certProblem(sc.certFind(hash, { store }), store, now) !== null) {
    try {
      hash = importCertificate(sc, cert.source, {
        store,
        file: APP_LABEL,
        context: {
          what: `Importing the certificate the app passed to https.createServer() (${cert.subject}) into LocalMachine\\${store}`,
          command: context.command
        }
      }).thumbprint
    } catch (err) {
      if (err.code !== 'ERR_HTTPSYS_CERT_FILE') throw err
      // what Windows refused in the material itself (NTE_BAD_PUBLIC_KEY: not this certificate's key)
      throw new codes.ERR_HTTPSYS_TLS_CERT({ file: APP_LABEL, reason: err.reason, port: target.port, host: target.host, fromApp: true, win32: err.win32 })
    }
    imported = true
    const why = certProblem(sc.certFind(hash, { store }), store, now)
    if (why !== null) {
      throw new codes.ERR_HTTPSYS_CERT_UNUSABLE({ thumbprint: hash, binding: target.binding, store, port: target.port, reason: why })
    }
  }
  const key = target.host !== undefined ? { port: target.port, host: target.host } : { port: target.port, ip: target.ip }
  // an app that asks clients for a certificate gets a binding that has HTTP.SYS ask for one
  const flags = options.requestCert === true ? NEGOTIATE_CLIENT_CERT : 0
  const result = sc.sslCertSet({ ...key, hash, store: store.toUpperCase(), appId: HTTPSYS_APP_ID, flags }, { update: false }, context)
  return { result, thumbprint: hash, subject: cert.subject, notAfter: cert.notAfter, imported }
}

/**
 * `httpsys start --setup`, worker side: binds the app's certificate to each target, and
 * logs one record each: `tls-bound` (info) with what was bound, or `tls-bind-failed`
 * (error) with the coded error and its fix. Never throws.
 * @param {object} sc the service configuration
 * @param {object} options the app's TLS options (secret: never logged)
 * @param {object[]} targets unboundTargets()'s
 * @param {object} opts
 * @param {(level: string, fields: object, message: string) => void} opts.log
 * @param {Date} [opts.now]
 * @param {string} [opts.store='My']
 */
function setupAppCertificate (sc, options, targets, { log, now = new Date(), store = 'My' }) {
  for (const target of targets) {
    const { port, host, binding, prefixes } = target
    let done
    try {
      done = bindTarget(sc, options, target, { now, store })
    } catch (err) {
      log('error', { event: 'tls-bind-failed', code: err.code, binding, port, host, prefixes, err: describe(err) },
        `${prefixes.join(' ')}: no certificate is bound to ${binding}, so HTTP.SYS refuses every TLS handshake there, ` +
        `and httpsys start --setup could not bind the app's: ${err.message}` +
        (err.code === 'ERR_HTTPSYS_NOT_ELEVATED' ? ' Once made, the binding stays: later starts need no elevation.' : ''))
      continue
    }
    if (done.result === 'exists') {
      // bound in the meantime: by another instance of this app, or by someone else; left as it is
      log('debug', { event: 'tls-bound-meanwhile', binding, port, host, thumbprint: done.thumbprint },
        `${binding} was bound meanwhile (another instance of the app, or someone else): left as it is`)
      continue
    }
    const notAfter = done.notAfter.toISOString()
    const remove = `httpsys cert delete --port ${port}${host !== undefined ? ` --host ${host}` : ''}`
    log('info', {
      event: 'tls-bound',
      binding,
      port,
      host,
      prefixes,
      thumbprint: done.thumbprint,
      subject: done.subject,
      notAfter,
      store,
      imported: done.imported,
      appId: HTTPSYS_APP_ID
    }, `bound the certificate the app passed to https.createServer() to ${binding} for ${prefixes.join(' ')}: ` +
      `${done.subject}, thumbprint ${done.thumbprint}, valid until ${notAfter.slice(0, 10)}` +
      `${done.imported ? `, imported into LocalMachine\\${store}` : `, already in LocalMachine\\${store}`}. ` +
      `The binding stays after the app stops: \`httpsys cert list\` shows it, \`${remove}\` removes it.`)
  }
}

/** The coded error as a record holds it: its code, words and details; never a cause. */
function describe (err) {
  const out = { type: err.name, code: err.code, message: err.message }
  for (const key of ['file', 'reason', 'thumbprint', 'binding', 'store', 'syscall', 'win32', 'win32Name']) {
    if (err[key] !== undefined) out[key] = err[key]
  }
  return out
}

module.exports = { unboundTargets, appCertificate, setupAppCertificate, APP_LABEL }
