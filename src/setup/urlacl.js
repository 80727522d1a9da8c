'use strict'

// `httpsys urlacl add|delete|list`: URL reservations (HTTP.SYS URL ACLs), which let an
// account that is not an administrator register a URL prefix. Through the addon's
// service configuration, never by running netsh.
//
// Rules: prefixes are validated (src/urlprefix.js) before any call; adding the same
// reservation again changes nothing; a reservation of the prefix for another account is
// a conflict that names it; the account is stored as a SID (names are translated on
// non-English Windows); deleting what is not there is not an error.

const urlprefix = require('../urlprefix')
const { codes } = require('../errors')
const { currentUser } = require('../httpsys/service-config')
const { parseSddl, listenSddl, sameAccess } = require('./sddl')

/**
 * @param {object} config the service configuration (src/httpsys/service-config.js)
 */
function createUrlAcl (config) {
  /** The accounts a descriptor names, as DOMAIN\name where Windows can say. */
  function usersOf (sddl) {
    const entries = parseSddl(sddl) || []
    return entries.map(({ sid, rights }) => {
      const found = config.lookupSid(sid)
      return { sid, account: found ? found.account : null, rights }
    })
  }

  const describe = (users) => users.map((u) => u.account || u.sid).join(', ') || 'an unreadable descriptor'

  function find (prefix) {
    const key = prefix.toLowerCase()
    return config.urlAclList(prefix).find((r) => String(r.prefix).toLowerCase() === key) || null
  }

  return {
    /**
     * @param {string} input a URL prefix
     * @param {object} [options]
     * @param {string} [options.user] DOMAIN\user, a group, or a SID (default: the current user)
     * @param {string} [options.sddl] a whole descriptor instead of --user
     * @returns {{prefix: string, sddl: string, users: object[], result: 'added'|'unchanged'}}
     */
    add (input, { user, sddl } = {}) {
      const { prefix } = urlprefix.parse(input)
      let descriptor = sddl
      let who = user
      if (descriptor !== undefined) {
        if (user !== undefined) throw new codes.ERR_INVALID_ARG_VALUE({ name: '--sddl', value: sddl, reason: 'cannot be combined with --user (give one)' })
        if (parseSddl(descriptor) === null) {
          throw new codes.ERR_INVALID_ARG_VALUE({ name: '--sddl', value: sddl, reason: 'must be a DACL of allow entries such as D:(A;;GX;;;S-1-1-0)' })
        }
      } else {
        who = user || currentUser()
        if (!who) throw new codes.ERR_INVALID_ARG_VALUE({ name: '--user', value: user, reason: 'is needed: this process has no USERNAME to default to' })
        const sid = /^S-1(-\d+)+$/i.test(who) ? who.toUpperCase() : config.lookupAccount(who).sid
        descriptor = listenSddl(sid)
      }
      const command = `httpsys urlacl add ${prefix}${user ? ` --user ${user}` : ''}${sddl ? ` --sddl "${sddl}"` : ''}`
      const existing = find(prefix)
      if (existing !== null) {
        if (sameAccess(existing.sddl, descriptor)) return { prefix, sddl: existing.sddl, users: usersOf(existing.sddl), result: 'unchanged' }
        throw new codes.ERR_HTTPSYS_URLACL_CONFLICT({ prefix, owners: describe(usersOf(existing.sddl)), sddl: existing.sddl, user: who })
      }
      if (config.urlAclSet(prefix, descriptor, { what: `Reserving ${prefix}`, command }) === 'exists') {
        // reserved between our look and our set, or a store that answers no queries
        const now = find(prefix)
        if (now !== null && sameAccess(now.sddl, descriptor)) return { prefix, sddl: now.sddl, users: usersOf(now.sddl), result: 'unchanged' }
        throw new codes.ERR_HTTPSYS_URLACL_CONFLICT({ prefix, owners: now ? describe(usersOf(now.sddl)) : undefined, sddl: now ? now.sddl : undefined, user: who })
      }
      return { prefix, sddl: descriptor, users: usersOf(descriptor), result: 'added' }
    },

    /** @returns {{prefix: string, deleted: boolean}} */
    delete (input) {
      const { prefix } = urlprefix.parse(input)
      const deleted = config.urlAclDelete(prefix, { what: `Deleting the reservation of ${prefix}`, command: `httpsys urlacl delete ${prefix}` })
      return { prefix, deleted }
    },

    /** @returns {{prefix: string, sddl: string, users: object[]}[]} sorted by prefix */
    list ({ prefix } = {}) {
      const records = config.urlAclList(prefix ? urlprefix.parse(prefix).prefix : undefined)
      return records
        .map((r) => ({ prefix: r.prefix, sddl: r.sddl, users: usersOf(r.sddl) }))
        .sort((a, b) => a.prefix.localeCompare(b.prefix))
    }
  }
}

/**
 * Whether reservation `reserved` lets its accounts register `registered`: same scheme,
 * port and host category (a reservation for + does not cover localhost), and a path
 * that contains the other on a segment boundary. HTTP.SYS checks the registration
 * against the reservations the same way it routes (docs/http-sys.md 3).
 */
function covers (reserved, registered) {
  let r
  let p
  try {
    r = urlprefix.parse(reserved)
    p = urlprefix.parse(registered)
  } catch {
    return false
  }
  return r.scheme === p.scheme && r.port === p.port && r.hostKind === p.hostKind && r.host === p.host &&
    p.path.toLowerCase().startsWith(r.path.toLowerCase())
}

/**
 * Whether registering `prefix` needs a reservation at all: an elevated process never
 * does; others do, except http:// or https://localhost:<port above 1024>/ (HTTP.SYS
 * lets any account register loopback there; an https one still needs a certificate
 * binding, which is another matter: docs/http-sys.md 3).
 */
function needsReservation (prefix) {
  const p = urlprefix.parse(prefix)
  return !(p.host === 'localhost' && p.port > 1024)
}

// Groups every account of a kind is in, so a reservation granting listen to one of them
// lets that account register: Everyone, Authenticated Users, BUILTIN\Users (which holds
// Authenticated Users by default), and the logon's own group: INTERACTIVE for a person at
// a prompt, SERVICE for a service's account (well-known SIDs:
// https://learn.microsoft.com/windows/win32/secauthz/well-known-sids).
const ANY_ACCOUNT_SIDS = ['S-1-1-0', 'S-1-5-11', 'S-1-5-32-545']
const LOGON_SIDS = { interactive: 'S-1-5-4', service: 'S-1-5-6' }

/**
 * Whether one of `reservations` lets the account `sid` register `prefix`: a reservation
 * covering the prefix whose DACL allows listen to that SID or to a group every such
 * account is in. The one check `start --setup` and `service install` make.
 * @param {{prefix: string, sddl: string}[]} reservations sc.urlAclList()
 * @param {string} prefix
 * @param {string|null} sid the account's SID (null: only the groups count)
 * @param {'interactive'|'service'} [logon='interactive'] how the account runs
 */
function reservedFor (reservations, prefix, sid, logon = 'interactive') {
  const groups = new Set([...ANY_ACCOUNT_SIDS, LOGON_SIDS[logon]])
  return reservations.some((r) => covers(r.prefix, prefix) &&
    (parseSddl(r.sddl) || []).some((e) => e.rights.includes('listen') && (e.sid === sid || groups.has(e.sid))))
}

module.exports = { createUrlAcl, covers, needsReservation, reservedFor }
