'use strict'

// `httpsys cert add|delete|list`: TLS certificate bindings, which tell HTTP.SYS which
// certificate of the LocalMachine store to serve on an IP:port, or on a host:port
// through SNI. Through the addon's service configuration, never by running netsh.
//
// A certificate can come by thumbprint (already in the store), or from a .pfx or a PEM
// certificate + key (files, or PEM text from a config's tls entry; an encrypted key with
// its passphrase), which are imported into LocalMachine\My first, the chain's
// intermediates into LocalMachine\CA (src/httpsys/cert-import.js). Before binding,
// the certificate must be in the store with a private key and not expired: HTTP.SYS
// would accept the binding and fail every handshake later (ERROR_NO_SUCH_LOGON_SESSION at
// best). Adding the same binding again changes nothing; binding another certificate to
// the same key replaces it (a rotation), says which one it replaced, and keeps what
// else the binding said (its AppId, flags and revocation settings, as netsh or IIS made
// them).

const fs = require('node:fs')
const net = require('node:net')
const { codes } = require('../errors')
const { thumbprint, where, certProblem, keyNotes, sslParamFields, HTTPSYS_APP_ID } = require('../httpsys/service-config')
const { importCertificate } = require('../httpsys/cert-import')
const { PEM } = require('../tls-material')
const { NEGOTIATE_CLIENT_CERT, NO_REVOCATION_CHECK } = require('../httpsys/client-certs')

const WILDCARD_V4 = '0.0.0.0'
const WILDCARD_V6 = '::'

/**
 * @param {object} config the service configuration (src/httpsys/service-config.js)
 * @param {object} [options]
 * @param {() => Date} [options.now]
 */
function createCert (config, { now = () => new Date() } = {}) {
  function key ({ port, ip, host }) {
    const p = Number(port)
    if (!Number.isInteger(p) || p < 1 || p > 65535) {
      throw new codes.ERR_INVALID_ARG_VALUE({ name: '--port', value: port, reason: 'must be a port number (1-65535)' })
    }
    if (host !== undefined && ip !== undefined) {
      throw new codes.ERR_INVALID_ARG_VALUE({ name: '--host', value: host, reason: 'cannot be combined with --ip: a binding is by IP:port or by host name (SNI)' })
    }
    if (host !== undefined) {
      if (!/^[A-Za-z0-9*]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/.test(host)) {
        throw new codes.ERR_INVALID_ARG_VALUE({ name: '--host', value: host, reason: 'must be a host name such as example.com' })
      }
      return { port: p, host: host.toLowerCase() }
    }
    const address = ip === undefined ? WILDCARD_V4 : String(ip).replace(/^\[|\]$/g, '')
    if (!net.isIP(address)) throw new codes.ERR_INVALID_ARG_VALUE({ name: '--ip', value: ip, reason: 'must be an IPv4 or IPv6 address (0.0.0.0: every IPv4 address)' })
    return { port: p, ip: address }
  }

  /**
   * The certificate to bind: imported (a .pfx, or PEM: a file or the text itself), or
   * found by thumbprint. `from` names where PEM text came from, for messages (never the
   * text: a key is never printed).
   * @returns {{thumbprint: string, intermediates: object[]}}
   */
  function source ({ thumbprint: hash, pfx, passphrase, cert, key: keyFile, store, from }) {
    const given = [hash !== undefined, pfx !== undefined, cert !== undefined || keyFile !== undefined].filter(Boolean).length
    if (given !== 1) {
      throw new codes.ERR_INVALID_ARG_VALUE({ name: 'certificate', value: undefined, reason: 'is needed once: --thumbprint T, or --pfx file.pfx, or --cert file.pem with --key file.key' })
    }
    if (hash !== undefined) return { thumbprint: thumbprint(hash).toString('hex'), intermediates: [] }
    const context = { what: 'Importing a certificate into LocalMachine\\' + store, command: 'httpsys cert add ...' }
    if (pfx !== undefined) {
      const file = Buffer.isBuffer(pfx) ? `the pfx of ${from || 'the command'}` : pfx
      return importCertificate(config, { pfx: Buffer.isBuffer(pfx) ? pfx : readFile(pfx), passphrase }, { store, file, context })
    }
    if (cert === undefined || keyFile === undefined) {
      throw new codes.ERR_INVALID_ARG_VALUE({ name: cert === undefined ? '--cert' : '--key', value: undefined, reason: 'is needed: --cert and --key go together' })
    }
    const label = (v, what) => isText(v) ? `the PEM ${what} of ${from || 'the command'}` : v
    return importCertificate(config, { cert: pemOf(cert), key: pemOf(keyFile), passphrase }, {
      store, file: label(cert, 'certificate'), keyFile: label(keyFile, 'private key'), context
    })
  }

  /** Why HTTP.SYS could not serve this certificate, or null. */
  function problem (found, store) {
    return certProblem(found, store, now())
  }

  function all () {
    const records = []
    const more = (r) => {
      const flags = Number(r.flags) || 0
      const checkMode = Number(r.checkMode) || 0
      return {
        thumbprint: r.hash,
        store: r.store,
        appId: r.appId,
        flags,
        checkMode,
        clientCert: (flags & NEGOTIATE_CLIENT_CERT) !== 0,
        revocationCheck: (checkMode & NO_REVOCATION_CHECK) === 0,
        // the binding's other HTTP_SERVICE_CONFIG_SSL_PARAM fields, kept by a rotation
        params: sslParamFields(r)
      }
    }
    for (const r of config.sslCertList()) records.push({ kind: 'ip', ip: r.ip, port: r.port, ...more(r) })
    for (const r of config.sslCertList({ sni: true })) records.push({ kind: 'sni', host: r.host, port: r.port, ...more(r) })
    return records
  }

  return {
    /**
     * @param {object} options { port, ip | host, thumbprint | pfx (+passphrase) | cert + key
     *   (paths or PEM text; an encrypted key with passphrase), from (where PEM text came
     *   from, for messages), store, clientCert (HTTP.SYS asks clients for a certificate),
     *   revocationCheck (default true) }
     * @returns {{binding: string, thumbprint: string, clientCert: boolean, result: 'added'|'unchanged'|'replaced', replaced?: string,
     *   intermediates: {thumbprint, subject, added}[], warnings: string[]}}
     */
    add (options) {
      const store = options.store || 'My'
      const k = key(options)
      const binding = where(k)
      const { thumbprint: hash, intermediates } = source({ ...options, store })
      const found = config.certFind(hash, { store })
      const why = problem(found, store)
      if (why !== null && !config.wine()) {
        throw new codes.ERR_HTTPSYS_CERT_UNUSABLE({ thumbprint: hash, binding, store, port: k.port, reason: why })
      }
      const warnings = [keyNotes(found).legacyProvider].filter(Boolean)
      if (options.revocationCheck === false && options.clientCert !== true) {
        throw new codes.ERR_INVALID_ARG_VALUE({ name: '--no-revocation-check', value: true, reason: 'goes with --client-cert (it is about client certificates)' })
      }
      const clientCert = options.clientCert === true
      // what else a binding being replaced says stays as it was: its AppId (whose it is),
      // its other flags and check modes, its revocation and CTL settings
      const existing = all().find((r) => sameKey(r, k))
      const base = existing ? existing.flags & ~NEGOTIATE_CLIENT_CERT : 0
      const flags = base | (clientCert ? NEGOTIATE_CLIENT_CERT : 0)
      const checkBase = existing ? existing.checkMode & ~NO_REVOCATION_CHECK : 0
      const checkMode = checkBase | (clientCert && options.revocationCheck === false ? NO_REVOCATION_CHECK : 0)
      const done = { binding, thumbprint: hash, clientCert, intermediates, warnings }
      if (existing && existing.thumbprint.toLowerCase() === hash.toLowerCase() && existing.flags === flags && existing.checkMode === checkMode) {
        return { ...done, result: 'unchanged' }
      }
      const context = {
        what: `Binding a certificate to ${binding}`,
        command: `httpsys cert add --port ${k.port}${k.host ? ` --host ${k.host}` : k.ip !== WILDCARD_V4 ? ` --ip ${k.ip}` : ''} --thumbprint ${hash}` +
          (clientCert ? ' --client-cert' : '') + ((checkMode & NO_REVOCATION_CHECK) !== 0 ? ' --no-revocation-check' : '')
      }
      const spec = { ...k, ...(existing ? existing.params : {}), hash, store: store.toUpperCase(), appId: existing ? existing.appId : HTTPSYS_APP_ID, flags, checkMode }
      let result = existing ? 'replaced' : 'added'
      if (existing || config.sslCertSet(spec, { update: false }, context) === 'exists') {
        config.sslCertSet(spec, { update: true }, context)
        result = 'replaced'
      }
      return { ...done, result, replaced: existing && existing.thumbprint.toLowerCase() !== hash.toLowerCase() ? existing.thumbprint : undefined }
    },

    /** @returns {{binding: string, deleted: boolean}} */
    delete (options) {
      const k = key(options)
      const binding = where(k)
      const deleted = config.sslCertDelete(k, { what: `Deleting the certificate binding of ${binding}`, command: `httpsys cert delete --port ${k.port}${k.host ? ` --host ${k.host}` : k.ip !== WILDCARD_V4 ? ` --ip ${k.ip}` : ''}` })
      return { binding, deleted }
    },

    /**
     * Every binding, with the certificate's state and what shadows what on its port.
     * @returns {object[]}
     */
    list () {
      const records = all()
      for (const r of records) {
        r.binding = r.kind === 'sni' ? `${r.host}:${r.port}` : where(r)
        r.ours = String(r.appId).toLowerCase() === HTTPSYS_APP_ID
        const found = config.certFind(r.thumbprint, { store: r.store })
        r.certificate = found && {
          subject: found.subject,
          notAfter: found.notAfter.toISOString(),
          hasPrivateKey: found.hasPrivateKey,
          privateKey: found.privateKey,
          privateKeyProblem: found.privateKeyProblem,
          keyProvider: found.keyProvider,
          dnsNames: found.dnsNames
        }
        r.problem = problem(found, r.store)
        const notes = keyNotes(found)
        // fine (HTTP.SYS uses the key as SYSTEM): said, never a problem
        r.keyUnreadable = r.problem === null ? notes.unreadable : null
        r.keyNotes = r.problem === null && notes.legacyProvider ? [notes.legacyProvider] : []
      }
      for (const r of records) r.notes = [...shadowing(r, records), ...r.keyNotes]
      return records.sort((a, b) => a.port - b.port || a.binding.localeCompare(b.binding))
    },

    problem
  }
}

/**
 * What a binding means next to the others on its port. HTTP.SYS picks the certificate
 * for a connection from the most specific record: an IP:port binding for the address
 * the client connected to before the wildcard 0.0.0.0:port one; SNI bindings serve the
 * host names clients ask for, but a specific IP:port binding has been seen to win over
 * them (win-acme issues 94 and 1686), so that case is worth a warning.
 * @returns {string[]}
 */
function shadowing (r, records) {
  const same = records.filter((o) => o !== r && o.port === r.port)
  const notes = []
  const specificIp = (o) => o.kind === 'ip' && o.ip !== WILDCARD_V4 && o.ip !== WILDCARD_V6
  if (r.kind === 'ip' && (r.ip === WILDCARD_V4 || r.ip === WILDCARD_V6)) {
    for (const o of same.filter(specificIp)) notes.push(`shadowed by ${where(o)} for connections to ${o.ip}`)
    const other = r.ip === WILDCARD_V4 ? WILDCARD_V6 : WILDCARD_V4
    if (!same.some((o) => o.kind === 'ip' && o.ip === other)) notes.push(`${other === WILDCARD_V6 ? 'IPv6' : 'IPv4'} clients are not covered: bind ${where({ ip: other, port: r.port })} too`)
  }
  if (r.kind === 'ip' && specificIp(r)) {
    if (same.some((o) => o.kind === 'sni')) notes.push(`may take precedence over the SNI bindings of port ${r.port} for connections to ${r.ip}`)
  }
  if (r.kind === 'sni') {
    for (const o of same.filter(specificIp)) notes.push(`may be overridden by ${where(o)} for connections to ${o.ip}`)
  }
  return notes
}

function sameKey (r, k) {
  if (Number(r.port) !== k.port) return false
  if (k.host !== undefined) return r.kind === 'sni' && String(r.host).toLowerCase() === k.host
  return r.kind === 'ip' && normalIp(r.ip) === normalIp(k.ip)
}

function normalIp (ip) {
  return String(ip).replace(/^\[|\]$/g, '').toLowerCase()
}

/** A config's cert or key given as PEM text, not as a path. */
function isText (v) {
  return typeof v === 'string' && PEM.test(v)
}

/** PEM text as it is; a Buffer as it is; a path read. */
function pemOf (v) {
  return Buffer.isBuffer(v) || isText(v) ? v : readFile(v)
}

function readFile (file) {
  try {
    return fs.readFileSync(file)
  } catch (err) {
    throw new codes.ERR_HTTPSYS_CERT_FILE({ file, reason: err.code === 'ENOENT' ? 'it does not exist' : err.message })
  }
}

module.exports = { createCert, shadowing, isText }
