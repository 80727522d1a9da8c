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

const { codes } = require('../../errors')
const urlprefix = require('../../urlprefix')

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

    /** Account name (DOMAIN\user, a group, a well-known name) -> { sid, domain, name, type } */
    lookupAccount (name, context = {}) {
      const result = addon().lookupAccount(name || '')
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
     * has it, else delete and set).
     * @returns {'set'|'exists'}
     */
    sslCertSet ({ ip = '0.0.0.0', port, host, hash, appId = HTTPSYS_APP_ID, store = 'MY', flags = 0, checkMode = 0 }, { update = false } = {}, context = {}) {
      const b = addon()
      const spec = { ip, port, host, hash: thumbprint(hash), appId, store, flags, checkMode }
      let code = b.sslCertSet(spec, update)
      if (update && is(code, 'ERROR_NOT_SUPPORTED')) {
        b.sslCertDelete(spec)
        code = b.sslCertSet(spec, false)
      }
      if (!update && is(code, 'ERROR_ALREADY_EXISTS')) return 'exists'
      const binding = where(spec)
      check(code, update ? 'HttpUpdateServiceConfiguration' : 'HttpSetServiceConfiguration', {
        ...context, binding, thumbprint: spec.hash.toString('hex'), store, port
      })
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
     * Imports a certificate with its private key into LocalMachine\<store>.
     * @param {object} source { pfx: Buffer, passphrase } or { certPem, keyPem }
     * @returns {string} the imported certificate's thumbprint (hex)
     */
    certImport (source, { store = 'My', file } = {}, context = {}) {
      const result = addon().certImport({ ...source, store })
      if (result.code === 0) return result.thumbprint
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
     * A certificate of LocalMachine\<store> by thumbprint.
     * @returns {{subject, issuer, notBefore: Date, notAfter: Date, hasPrivateKey, dnsNames}|null}
     */
    certFind (hash, { store = 'My' } = {}) {
      const result = addon().certFind({ thumbprint: thumbprint(hash).toString('hex'), store })
      if (result.code !== 0 || !result.found) return null
      return {
        thumbprint: thumbprint(hash).toString('hex'),
        subject: result.subject,
        issuer: result.issuer,
        notBefore: new Date(result.notBefore),
        notAfter: new Date(result.notAfter),
        hasPrivateKey: result.hasPrivateKey,
        // 0: this account can open the key and it matches; else why not (a Win32 code)
        privateKeyCode: result.privateKeyCode === undefined ? null : result.privateKeyCode,
        privateKeyProblem: result.privateKeyCode ? (nameOf(result.privateKeyCode) || `code ${result.privateKeyCode}`) : null,
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
 * (app-cert.js) check it before they bind.
 * @param {object|null} found certFind()'s answer
 * @param {string} store
 * @param {Date} now
 * @returns {string|null}
 */
function certProblem (found, store, now) {
  if (found === null) return `it is not in LocalMachine\\${store}`
  if (!found.hasPrivateKey) return `it has no private key in LocalMachine\\${store}`
  if (found.privateKeyProblem) return `its private key cannot be used (${found.privateKeyProblem})`
  if (found.notAfter.getTime() < now.getTime()) return `it expired on ${found.notAfter.toISOString().slice(0, 10)}`
  if (found.notBefore.getTime() > now.getTime()) return `it is not valid before ${found.notBefore.toISOString().slice(0, 10)}`
  return null
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

/** DOMAIN\user of this process (Windows sets both variables for every logon). */
function currentUser (env = process.env) {
  const { USERDOMAIN, USERNAME } = env
  return USERNAME ? (USERDOMAIN ? `${USERDOMAIN}\\${USERNAME}` : USERNAME) : undefined
}

module.exports = { createServiceConfig, currentUser, thumbprint, where, httpsPrefixes, certProblem, HTTPSYS_APP_ID }
