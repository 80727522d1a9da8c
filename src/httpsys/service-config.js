'use strict'

// Machine-wide HTTP.SYS configuration through the addon, for the setup commands
// (src/setup: `httpsys urlacl`, `httpsys cert`, `httpsys doctor`) and for a worker that
// binds its app's certificate under `httpsys start --setup` (app-cert.js): URL
// reservations, TLS certificate bindings, the certificate store, and what doctor asks
// the system.
// Changes need an elevated process. Under Wine the configuration calls succeed and
// store nothing (every query finds nothing), so only a real Windows run tests them
// (test/windows/README.md lists the manual checks).
//
// This file only turns the addon's Win32 codes into coded errors (by the code's name in
// the addon's own table); what is idempotent, what conflicts and what to print is
// src/setup's policy. `context` gives the words: { what, command } for the fix.

const os = require('node:os')
const { codes } = require('../errors')
const urlprefix = require('../urlprefix')

// The AppId recorded with the certificate bindings httpsys makes. HTTP.SYS only stores
// it; `netsh http show sslcert` shows it, so httpsys's bindings can be told apart.
const HTTPSYS_APP_ID = '{6e1c3b42-8f0a-4c5d-9b7e-2a61f0d4c9a1}'

/** The account a failed call was about: the name given, else the SIDs of the SDDL. */
function accountOf (context) {
  if (context.account) return context.account
  const sids = String(context.sddl || '').match(/S-\d+(?:-\d+)+/g)
  return sids ? sids.join(', ') : context.sddl
}

/**
 * @param {() => object} getAddon loads the addon
 */
function createServiceConfig (getAddon) {
  let names = null
  const addon = () => {
    const b = getAddon()
    if (names === null) names = b.errors()
    return b
  }
  const nameOf = (code) => (names && names[code]) || undefined

  /** Throws the coded error for a failed call; returns nothing for 0. */
  function check (code, syscall, context = {}) {
    if (code === 0) return
    const name = nameOf(code)
    const base = { win32: code, win32Name: name, syscall }
    switch (name) {
      case 'ERROR_ACCESS_DENIED':
        throw new codes.ERR_HTTPSYS_NOT_ELEVATED({ ...base, what: context.what, command: context.command })
      case 'ERROR_NONE_MAPPED':
        throw new codes.ERR_HTTPSYS_ACCOUNT_UNKNOWN({ ...base, account: accountOf(context) })
      case 'ERROR_NO_SUCH_LOGON_SESSION':
        if (context.thumbprint) {
          throw new codes.ERR_HTTPSYS_CERT_UNUSABLE({ ...base, thumbprint: context.thumbprint, binding: context.binding, store: context.store, port: context.port })
        }
        // a reservation for an account Windows cannot log on (a SID nobody has)
        if (context.account || context.sddl) throw new codes.ERR_HTTPSYS_ACCOUNT_UNKNOWN({ ...base, account: accountOf(context) })
        break
      case 'ERROR_INVALID_PARAMETER':
        // the prefix passed httpsys's own grammar (src/urlprefix.js) before the call, so
        // what HTTP.SYS refused is one of its own stricter rules, or the SDDL
        if (context.prefix) {
          throw new codes.ERR_HTTPSYS_BAD_PREFIX({
            ...base,
            prefix: context.prefix,
            reason: 'HTTP.SYS rejected it (ERROR_INVALID_PARAMETER, 87): it takes a host that is a name, +, * or an IP address (an IPv6 address in [brackets], no zone id), ' +
              'a port from 1 to 65535, and a path without escaped characters' + (context.sddl ? `; or the SDDL ${context.sddl} is not one it accepts (it must grant GX or GA to SIDs)` : '')
          })
        }
        break
    }
    throw new codes.ERR_HTTPSYS_NATIVE_CALL({ ...base, prefix: context.prefix, binding: context.binding })
  }

  const is = (code, name) => code !== 0 && nameOf(code) === name

  return {
    nameOf,

    /** Account name (DOMAIN\user, .\user, a group, a well-known name) -> { sid, domain, name, type } */
    lookupAccount (name, context = {}) {
      const result = addon().lookupAccount(onThisComputer(name || ''))
      check(result.code, 'LookupAccountNameW', { ...context, account: name })
      return { sid: result.sid, domain: result.domain, name: result.name, type: result.type }
    },

    /** SID -> { sid, account: 'DOMAIN\name', type } or null when Windows cannot name it */
    lookupSid (sid) {
      const result = addon().lookupSid(sid)
      if (!result || result.code !== 0) return null
      return { sid, account: result.domain ? `${result.domain}\\${result.name}` : result.name, type: result.type }
    },

    /** @returns {'set'|'exists'} exists: some reservation for this exact prefix is there */
    urlAclSet (prefix, sddl, context = {}) {
      const code = addon().urlAclSet(prefix, sddl)
      if (is(code, 'ERROR_ALREADY_EXISTS')) return 'exists'
      check(code, 'HttpSetServiceConfiguration', { ...context, prefix, sddl })
      return 'set'
    },

    /** @returns {boolean} false when there was no such reservation */
    urlAclDelete (prefix, context = {}) {
      const code = addon().urlAclDelete(prefix)
      if (is(code, 'ERROR_FILE_NOT_FOUND')) return false
      check(code, 'HttpDeleteServiceConfiguration', { ...context, prefix })
      return true
    },

    /** @returns {{prefix: string, sddl: string}[]} every reservation, or only `prefix`'s */
    urlAclList (prefix) {
      const { code, records } = addon().urlAclList(prefix || '')
      if (!is(code, 'ERROR_FILE_NOT_FOUND')) check(code, 'HttpQueryServiceConfiguration', { prefix })
      return records
    },

    /**
     * Binds a certificate of the LocalMachine store to ip:port, or host:port (SNI).
     * `update` replaces an existing binding (HttpUpdateServiceConfiguration where the OS
     * has it, else delete and set; a set that fails then puts the old binding back, so
     * the port is not left unbound). The other fields of HTTP_SERVICE_CONFIG_SSL_PARAM
     * (SSL_PARAM_FIELDS) are written as given: what sslCertList() read, for a rotation.
     * @returns {'set'|'exists'}
     */
    sslCertSet ({ ip = '0.0.0.0', port, host, hash, appId = HTTPSYS_APP_ID, store = 'MY', flags = 0, checkMode = 0, ...rest }, { update = false } = {}, context = {}) {
      const b = addon()
      const spec = { ip, port, host, hash: thumbprint(hash), appId, store, flags, checkMode, ...sslParamFields(rest) }
      let code = b.sslCertSet(spec, update)
      let restore = null
      if (update && is(code, 'ERROR_NOT_SUPPORTED')) ({ code, restore } = deleteAndSet(b, spec))
      if (!update && is(code, 'ERROR_ALREADY_EXISTS')) return 'exists'
      const binding = where(spec)
      try {
        check(code, update ? 'HttpUpdateServiceConfiguration' : 'HttpSetServiceConfiguration', {
          ...context, binding, thumbprint: spec.hash.toString('hex'), store, port
        })
      } catch (err) {
        if (restore !== null) {
          err.restored = restore.code === 0
          if (!err.restored) {
            err.message += ` The old binding of ${binding} (certificate ${restore.old.hash}) could not be put back (${nameOf(restore.code) || 'Win32 error'}, ${restore.code}): ` +
              `${binding} has no certificate now. Bind one: \`${bindCommand(restore.old)}\`.`
          }
        }
        throw err
      }
      return 'set'
    },

    /** @returns {boolean} false when there was no such binding */
    sslCertDelete ({ ip = '0.0.0.0', port, host }, context = {}) {
      const spec = { ip, port, host }
      const code = addon().sslCertDelete(spec)
      if (is(code, 'ERROR_FILE_NOT_FOUND')) return false
      check(code, 'HttpDeleteServiceConfiguration', { ...context, binding: where(spec) })
      return true
    },

    /** @returns {object[]} the ip:port bindings, or the host:port (SNI) ones */
    sslCertList ({ sni = false } = {}) {
      const { code, records } = addon().sslCertList(sni)
      if (!is(code, 'ERROR_FILE_NOT_FOUND')) check(code, 'HttpQueryServiceConfiguration')
      return records
    },

    /**
     * Imports a certificate with its private key into LocalMachine\<store> (only that
     * certificate: cert-import.js puts a chain's intermediates where they belong).
     * @param {object} source { pfx: Buffer, passphrase, cng } or { certPem, keyPem } (one
     *   certificate, its key as PKCS#8)
     * @returns {{thumbprint: string, keyProvider: {name: string, cng: boolean}|null, chain: Buffer[]}}
     *   chain: the PFX's certificates that came without a key (DER)
     */
    certImport (source, { store = 'My', file } = {}, context = {}) {
      const result = addon().certImport({ ...source, store })
      if (result.code === 0) return { thumbprint: result.thumbprint, keyProvider: result.keyProvider || null, chain: result.chain || [] }
      const name = nameOf(result.code)
      if (name === 'ERROR_INVALID_PASSWORD') {
        throw new codes.ERR_HTTPSYS_CERT_FILE({ file, reason: 'the passphrase is wrong', win32: result.code })
      }
      if (name === 'ERROR_FILE_NOT_FOUND') {
        throw new codes.ERR_HTTPSYS_CERT_FILE({ file, reason: `the certificate store LocalMachine\\${store} does not exist`, win32: result.code })
      }
      if (name === 'NTE_BAD_PUBLIC_KEY') {
        throw new codes.ERR_HTTPSYS_CERT_FILE({ file, reason: 'the private key does not belong to the certificate', win32: result.code })
      }
      if (name !== 'ERROR_ACCESS_DENIED' && name !== undefined && name !== 'ERROR_NOT_SUPPORTED') {
        throw new codes.ERR_HTTPSYS_CERT_FILE({ file, reason: `Windows could not import it (${name}, ${result.code})`, win32: result.code })
      }
      check(result.code, 'PFXImportCertStore', context)
      return null
    },

    /**
     * Adds a certificate without a key (DER) to LocalMachine\<store>; one that is there
     * stays as it is.
     * @returns {string} its thumbprint (hex)
     */
    certAdd (der, { store }, context = {}) {
      const result = addon().certAdd({ der, store })
      check(result.code, 'CertAddEncodedCertificateToStore', context)
      return result.thumbprint
    },

    /**
     * A certificate of LocalMachine\<store> by thumbprint.
     * @returns {{subject, issuer, notBefore: Date, notAfter: Date, hasPrivateKey, privateKey, keyProvider, dnsNames}|null}
     *   privateKey: 'none', 'usable' (opens for this account and matches), 'mismatch'
     *   (another certificate's key) or 'unreadable' (there, but this account cannot open it)
     */
    certFind (hash, { store = 'My' } = {}) {
      const result = addon().certFind({ thumbprint: thumbprint(hash).toString('hex'), store })
      if (result.code !== 0 || !result.found) return null
      const code = result.privateKeyCode === undefined ? null : result.privateKeyCode
      const codeName = code ? (nameOf(code) || `code ${code}`) : null
      return {
        thumbprint: thumbprint(hash).toString('hex'),
        subject: result.subject,
        issuer: result.issuer,
        notBefore: new Date(result.notBefore),
        notAfter: new Date(result.notAfter),
        hasPrivateKey: result.hasPrivateKey,
        privateKey: !result.hasPrivateKey ? 'none' : !code ? 'usable' : codeName === 'NTE_BAD_PUBLIC_KEY' ? 'mismatch' : 'unreadable',
        // 0: this account can open the key and it matches; else why not (a Win32 code)
        privateKeyCode: code,
        privateKeyProblem: codeName,
        keyProvider: result.keyProvider || null,
        dnsNames: result.dnsNames || []
      }
    },

    /** @returns {boolean|null} whether this process runs elevated (null: unknown) */
    isElevated () {
      const value = addon().isElevated()
      return typeof value === 'boolean' ? value : null
    },

    /** @returns {{state: string, startType: string}|null} a Windows service's state */
    serviceStatus (name) {
      const result = addon().serviceStatus(name)
      if (!result || result.code !== 0) return null
      return { state: result.state, startType: result.startType }
    },

    /** @returns {{address: string, port: number, pid: number, family: number}[]|null} TCP listeners */
    tcpListeners () {
      const result = addon().tcpListeners()
      return result && result.code === 0 ? result.list : null
    },

    processName (pid) {
      return addon().processName(pid) || null
    },

    /**
     * HTTP.SYS's machine-wide HeaderWait and IdleConnection timers, in seconds: what
     * holds a connection until its first request reaches a queue (docs/http-sys.md 1).
     * @returns {{headerWait: number, idleConnection: number, set: boolean}|null} the 120 s
     *   default where none is set (set: false); null when they could not be read
     */
    machineTimeouts () {
      const b = addon()
      if (typeof b.machineTimeouts !== 'function') return null
      const result = b.machineTimeouts()
      if (!result || result.code !== 0) return null
      const { headerWait, idleConnection } = result
      return { headerWait: headerWait ?? 120, idleConnection: idleConnection ?? 120, set: headerWait != null || idleConnection != null }
    },

    /** whether the addon runs under Wine (its configuration calls store nothing) */
    wine () {
      return addon().platform().wine || null
    }
  }
}

/** A SHA-1 thumbprint as people paste it (any case, spaces, colons, an invisible mark) -> 20 bytes. */
function thumbprint (hash) {
  // certmgr's copy button puts an invisible left-to-right mark in front (a known cause of 87)
  const hex = Buffer.isBuffer(hash) ? hash.toString('hex') : String(hash || '').replace(/[\s:\u200e\u200f\ufeff]/g, '')
  if (!/^[0-9a-fA-F]{40}$/.test(hex)) {
    throw new codes.ERR_INVALID_ARG_VALUE({ name: 'thumbprint', value: hash, reason: 'must be a certificate thumbprint (40 hex digits)' })
  }
  return Buffer.from(hex, 'hex')
}

/**
 * Why HTTP.SYS could not serve a certificate of the store (certFind()'s answer), or
 * null: HTTP.SYS accepts a binding to such a certificate and fails every handshake later
 * (docs/http-sys.md 4). `httpsys cert add` and a worker under `httpsys start --setup`
 * (app-cert.js) check it before they bind; `cert list` and `doctor` report it.
 * A private key that is there but does not open for this account is not a problem:
 * a machine key imported elevated usually does not open for another account or an
 * unelevated token, and HTTP.SYS uses it as SYSTEM, through LSASS (keyNotes() says so).
 * @param {object|null} found certFind()'s answer
 * @param {string} store
 * @param {Date} now
 * @returns {string|null}
 */
function certProblem (found, store, now) {
  if (found === null) return `it is not in LocalMachine\\${store}`
  if (!found.hasPrivateKey) return `it has no private key in LocalMachine\\${store}`
  if (found.privateKey === 'mismatch') return `its private key belongs to another certificate (${found.privateKeyProblem})`
  if (found.notAfter.getTime() < now.getTime()) return `it expired on ${found.notAfter.toISOString().slice(0, 10)}`
  if (found.notBefore.getTime() > now.getTime()) return `it is not valid before ${found.notBefore.toISOString().slice(0, 10)}`
  return null
}

/**
 * What is worth knowing about a usable certificate's private key (certFind()'s answer):
 * `unreadable`, there but not for this account (fine: HTTP.SYS uses it as SYSTEM), and
 * `legacyProvider`, held by a CryptoAPI provider, which cannot sign with RSA-PSS, so
 * TLS 1.3 handshakes (Windows Server 2022, Windows 11) may fail.
 * @returns {{unreadable: string|null, legacyProvider: string|null}}
 */
function keyNotes (found) {
  const out = { unreadable: null, legacyProvider: null }
  if (found === null || !found.hasPrivateKey) return out
  if (found.privateKey === 'unreadable') {
    out.unreadable = `its private key is there but this account cannot open it (${found.privateKeyProblem}); HTTP.SYS can, as SYSTEM`
  }
  if (found.keyProvider && found.keyProvider.cng === false) {
    out.legacyProvider = `its private key is in ${found.keyProvider.name || 'a CryptoAPI provider'}, a CryptoAPI provider that cannot sign with RSA-PSS, ` +
      'so TLS 1.3 clients may fail to connect (Windows Server 2022, Windows 11): import it again with `httpsys cert add`, which puts the key in a CNG provider'
  }
  return out
}

/** The https prefixes among urls, parsed (urlprefix.js); others and unparsable ones left out. */
function httpsPrefixes (urls) {
  const out = []
  for (const url of urls) {
    let p
    try {
      p = urlprefix.parse(url)
    } catch {
      continue
    }
    if (p.scheme === 'https') out.push({ url, p })
  }
  return out
}

function where ({ ip, port, host }) {
  return host ? `${host}:${port}` : `${ip && ip.includes(':') ? `[${ip}]` : ip}:${port}`
}

// The fields of HTTP_SERVICE_CONFIG_SSL_PARAM besides the certificate, the AppId and the
// two httpsys sets (flags, checkMode): netsh (revocationfreshnesstime,
// urlretrievaltimeout, sslctlidentifier, sslctlstorename) and IIS set them, and a rotation
// must keep them (https://learn.microsoft.com/windows/win32/api/http/ns-http-http_service_config_ssl_param).
const SSL_PARAM_FIELDS = ['revocationFreshnessTime', 'urlRetrievalTimeout', 'ctlIdentifier', 'ctlStoreName']

/** The SSL_PARAM_FIELDS of a binding record (or spec) that are set. */
function sslParamFields (r) {
  const out = {}
  for (const k of SSL_PARAM_FIELDS) if (r[k] !== undefined && r[k] !== null && r[k] !== '' && r[k] !== 0) out[k] = r[k]
  return out
}

/**
 * A rotation where the OS has no HttpUpdateServiceConfiguration: delete, then set. The
 * old binding is read first, and put back if the set fails (a certificate HTTP.SYS
 * refuses, 1312): the port keeps serving what it served.
 * @returns {{code: number, restore: {old: object, code: number}|null}}
 */
function deleteAndSet (b, spec) {
  const { records } = b.sslCertList(Boolean(spec.host))
  const old = (records || []).find((r) => sameBinding(r, spec)) || null
  const deleted = b.sslCertDelete(spec)
  if (deleted !== 0 && old !== null) return { code: deleted, restore: null } // nothing changed
  const code = b.sslCertSet(spec, false)
  if (code === 0 || old === null) return { code, restore: null }
  const back = { ...old, port: Number(old.port), hash: thumbprint(old.hash), flags: Number(old.flags) || 0, checkMode: Number(old.checkMode) || 0 }
  return { code, restore: { old, code: b.sslCertSet(back, false) } }
}

function sameBinding (r, spec) {
  if (Number(r.port) !== Number(spec.port)) return false
  if (spec.host) return String(r.host || '').toLowerCase() === String(spec.host).toLowerCase()
  const ip = (v) => String(v || '').replace(/^\[|\]$/g, '').toLowerCase()
  return !r.host && ip(r.ip) === ip(spec.ip)
}

function bindCommand (r) {
  const key = r.host ? ` --host ${r.host}` : r.ip && r.ip !== '0.0.0.0' ? ` --ip ${r.ip}` : ''
  return `httpsys cert add --port ${r.port}${key} --thumbprint ${r.hash}`
}

/**
 * `.\user`, a local account as sc.exe and the services console write it, as
 * COMPUTERNAME\user: LookupAccountNameW knows no `.`.
 */
function onThisComputer (name, env = process.env) {
  if (!name.startsWith('.\\')) return name
  return `${env.COMPUTERNAME || os.hostname()}\\${name.slice(2)}`
}

/** DOMAIN\user of this process (Windows sets both variables for every logon). */
function currentUser (env = process.env) {
  const { USERDOMAIN, USERNAME } = env
  return USERNAME ? (USERDOMAIN ? `${USERDOMAIN}\\${USERNAME}` : USERNAME) : undefined
}

module.exports = { createServiceConfig, currentUser, thumbprint, where, httpsPrefixes, certProblem, keyNotes, sslParamFields, HTTPSYS_APP_ID }
