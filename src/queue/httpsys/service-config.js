'use strict'

// Machine-wide HTTP.SYS configuration through the addon, for the setup commands
// (`httpsys urlacl`, `httpsys cert`): URL reservations and TLS certificate bindings.
// They need an elevated process on Windows. Under Wine these calls succeed and do
// nothing (and every query finds nothing), so only a real Windows run tests them.
//
// Codes other than 0 become ERR_HTTPSYS_NATIVE_CALL with the call and the code's name;
// whether "already there" (183) is fine is the caller's decision.

const { codes } = require('../../errors')

const ERROR_FILE_NOT_FOUND = 2
const ERROR_NOT_SUPPORTED = 50

// The AppId recorded with the certificate bindings httpsys makes. HTTP.SYS only stores
// it; `netsh http show sslcert` shows it, so httpsys's bindings can be told apart.
const HTTPSYS_APP_ID = '{6e1c3b42-8f0a-4c5d-9b7e-2a61f0d4c9a1}'

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

  function check (code, syscall, details = {}) {
    if (code === 0) return
    throw new codes.ERR_HTTPSYS_NATIVE_CALL({ ...details, syscall, win32: code, win32Name: names && names[code] })
  }

  /** Account name (DOMAIN\user, a group, a well-known name) -> { sid, domain, name, type } */
  function lookupAccount (name) {
    const result = addon().lookupAccount(name || '')
    check(result.code, 'LookupAccountNameW', { account: name })
    return { sid: result.sid, domain: result.domain, name: result.name, type: result.type }
  }

  return {
    /**
     * Reserves `prefix` for `user` (default: the current user) or for a raw `sddl`.
     * SIDs, not names, go into the descriptor: account names are localised.
     * @returns {{prefix: string, sddl: string}}
     */
    urlAclAdd (prefix, { user, sddl, replace = false } = {}) {
      const b = addon()
      const descriptor = sddl || `D:(A;;GX;;;${lookupAccount(user || currentUser()).sid})`
      if (replace) b.urlAclDelete(prefix)
      check(b.urlAclSet(prefix, descriptor), 'HttpSetServiceConfiguration', { prefix })
      return { prefix, sddl: descriptor }
    },

    urlAclDelete (prefix) {
      check(addon().urlAclDelete(prefix), 'HttpDeleteServiceConfiguration', { prefix })
    },

    /** @returns {{prefix: string, sddl: string}[]} every reservation, or only `prefix`'s */
    urlAclList (prefix) {
      const { code, records } = addon().urlAclList(prefix || '')
      if (code !== ERROR_FILE_NOT_FOUND) check(code, 'HttpQueryServiceConfiguration', { prefix })
      return records
    },

    /**
     * Binds a certificate of the LocalMachine store to ip:port, or to host:port (SNI).
     * `update` swaps an existing binding atomically where the OS has
     * HttpUpdateServiceConfiguration, else deletes and sets.
     */
    sslCertAdd ({ ip = '0.0.0.0', port, host, hash, appId = HTTPSYS_APP_ID, store = 'MY', flags = 0, checkMode = 0 }, { update = false } = {}) {
      const b = addon()
      const spec = { ip, port, host, hash: thumbprint(hash), appId, store, flags, checkMode }
      let code = b.sslCertSet(spec, update)
      if (update && code === ERROR_NOT_SUPPORTED) {
        b.sslCertDelete(spec)
        code = b.sslCertSet(spec, false)
      }
      check(code, update ? 'HttpUpdateServiceConfiguration' : 'HttpSetServiceConfiguration', { binding: where(spec) })
    },

    sslCertDelete ({ ip = '0.0.0.0', port, host }) {
      const spec = { ip, port, host }
      check(addon().sslCertDelete(spec), 'HttpDeleteServiceConfiguration', { binding: where(spec) })
    },

    /** @returns {object[]} the ip:port bindings, or the host:port ones with { sni: true } */
    sslCertList ({ sni = false } = {}) {
      const { code, records } = addon().sslCertList(sni)
      if (code !== ERROR_FILE_NOT_FOUND) check(code, 'HttpQueryServiceConfiguration')
      return records
    },

    lookupAccount
  }
}

/** A SHA-1 thumbprint as people paste it (any case, spaces or colons) -> 20 bytes. */
function thumbprint (hash) {
  const hex = String(hash || '').replace(/[\s:]/g, '')
  if (!/^[0-9a-fA-F]{40}$/.test(hex)) {
    throw new codes.ERR_INVALID_ARG_VALUE({ name: 'hash', value: hash, reason: 'must be a certificate thumbprint (40 hex digits)' })
  }
  return Buffer.from(hex, 'hex')
}

function where ({ ip, port, host }) {
  return host ? `${host}:${port}` : `${ip}:${port}`
}

/** DOMAIN\user of this process (Windows sets both variables for every logon). */
function currentUser () {
  const { USERDOMAIN, USERNAME } = process.env
  return USERNAME ? (USERDOMAIN ? `${USERDOMAIN}\\${USERNAME}` : USERNAME) : undefined
}

module.exports = { createServiceConfig, currentUser, thumbprint, HTTPSYS_APP_ID }
