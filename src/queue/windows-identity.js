'use strict'

// req.windowsIdentity (README "Windows authentication"): who the request is from.
//
// On HTTP.SYS it is read from the request's access token, only as far as the app asks:
// the user's SID and the token's groups with GetTokenInformation (a local call), their
// names with LookupAccountSid, which may ask a domain controller, so names are cached
// by SID for the whole process for a while. The token is valid only while its request
// is in flight (ns-http-http_request_auth_info): when the request ends the worker calls
// release(); an identity the app has begun to read keeps what it read, and reads the
// rest of the token then, so logging in 'finish' or after an await keeps working. One
// the app never touched before its request ended cannot be read any more
// (ERR_HTTPSYS_AUTH_TOKEN_CLOSED).
//
// On the hub it is the development identity: everything is known, nothing is read, and
// nothing was authenticated.
//
// Named windowsIdentity, not user: passport and most auth middleware own req.user.

const { codes } = require('../errors')

const kState = Symbol('httpsys.identity.state')

// TOKEN_GROUPS attributes (winnt.h): a group counts when it is enabled, is not there for
// deny only, and is not the logon session's own SID (as WindowsIdentity.Groups takes them)
const SE_GROUP_ENABLED = 0x4
const SE_GROUP_USE_FOR_DENY_ONLY = 0x10
const SE_GROUP_LOGON_ID = 0xc0000000

// names by SID, for every identity of this process
const NAME_TTL_MS = 10 * 60 * 1000
const NAME_CACHE_MAX = 10000
const names = new Map() // SID -> { name, at }
const SID = /^S-1-\d+(-\d+)+$/i

class WindowsIdentity {
  /**
   * @param {object} source
   * @param {string} source.scheme 'Negotiate', 'NTLM', 'Kerberos', 'Basic', 'Digest', 'Development'
   * @param {string} [source.sid] known up front (the development identity)
   * @param {string} [source.name]
   * @param {{name: string, sid: string}[]} [source.groups] known up front
   * @param {() => string|undefined} [source.readUser] the token's user SID (undefined: the token is closed)
   * @param {() => {sid: string, attributes: number}[]|undefined} [source.readGroups]
   * @param {(sid: string) => string|null} [source.lookupSid] DOMAIN\name of a SID
   * @param {() => void} [source.close] lets go of the token
   * @param {() => number} [now]
   */
  constructor (source, now = Date.now) {
    this[kState] = {
      source,
      now,
      sid: source.sid !== undefined ? source.sid : undefined,
      name: source.name !== undefined ? source.name : undefined,
      groupSids: source.groups !== undefined ? source.groups.map((g) => g.sid) : undefined,
      groups: source.groups !== undefined ? Object.freeze(source.groups.map((g) => Object.freeze({ name: g.name, sid: g.sid }))) : undefined,
      touched: false,
      closed: false
    }
  }

  /** The scheme HTTP.SYS authenticated with (HTTP_REQUEST_AUTH_TYPE), or 'Development'. */
  get scheme () { return this[kState].source.scheme }

  get isAuthenticated () { return true }

  /** The user's SID ('S-1-5-21-...'). */
  get sid () {
    const st = this[kState]
    st.touched = true
    if (st.sid === undefined) st.sid = readOrThrow(st, 'sid', () => st.source.readUser())
    return st.sid
  }

  /** 'DOMAIN\\user' (a local account: 'MACHINE\\user'); null where the SID has no name. */
  get name () {
    const st = this[kState]
    if (st.name === undefined) {
      const sid = this.sid
      st.name = nameOf(st, sid)
    }
    return st.name
  }

  /**
   * The groups the user is in, as the token has them (enabled, not deny-only): [{ name,
   * sid }], name null where the SID has no name. Frozen; read and named on first use.
   */
  get groups () {
    const st = this[kState]
    if (st.groups === undefined) {
      const sids = groupSids(st)
      st.groups = Object.freeze(sids.map((sid) => Object.freeze({ name: nameOf(st, sid), sid })))
    }
    return st.groups
  }

  /**
   * Whether the user is, or is in, this group: a SID ('S-1-5-32-544'; the same in every
   * language, so the safe way to name a built-in group) or a name ('CONTOSO\\Staff', or
   * 'Staff' for that name in any domain), compared without regard to case. A SID needs
   * no name lookup.
   */
  isInRole (role) {
    if (typeof role !== 'string' || role === '') {
      throw new codes.ERR_INVALID_ARG_TYPE({ name: 'role', expected: 'a group name or SID', actual: role })
    }
    if (SID.test(role)) {
      const want = role.toUpperCase()
      return this.sid.toUpperCase() === want || groupSids(this[kState]).some((s) => s.toUpperCase() === want)
    }
    const want = role.toLowerCase()
    const bare = !want.includes('\\')
    const matches = (name) => {
      if (typeof name !== 'string') return false
      const n = name.toLowerCase()
      return n === want || (bare && n.slice(n.lastIndexOf('\\') + 1) === want)
    }
    return matches(this.name) || this.groups.some((g) => matches(g.name))
  }

  /** { name, sid, scheme }: what a log line or a session needs, without the groups. */
  toJSON () {
    return { name: this.name, sid: this.sid, scheme: this.scheme }
  }
}

/**
 * The request ended: an identity the app has read from keeps what it needs (the token's
 * user and groups, as SIDs; names need no token), then the token goes.
 */
function release (identity) {
  const st = identity[kState]
  if (st.closed) return
  if (st.touched && st.source.readUser) {
    try {
      if (st.sid === undefined) st.sid = st.source.readUser()
      if (st.groupSids === undefined) st.groupSids = enabled(st.source.readGroups())
    } catch {}
  }
  st.closed = true
  if (typeof st.source.close === 'function') st.source.close()
}

function readOrThrow (st, what, read) {
  const value = st.closed ? undefined : read()
  if (value === undefined) throw new codes.ERR_HTTPSYS_AUTH_TOKEN_CLOSED({ what })
  return value
}

function groupSids (st) {
  st.touched = true
  if (st.groupSids === undefined) st.groupSids = readOrThrow(st, 'groups', () => enabled(st.source.readGroups()))
  return st.groupSids
}

function enabled (list) {
  if (list === undefined) return undefined
  return list.filter((g) => (g.attributes & (SE_GROUP_ENABLED | SE_GROUP_USE_FOR_DENY_ONLY | SE_GROUP_LOGON_ID)) === SE_GROUP_ENABLED).map((g) => g.sid)
}

function nameOf (st, sid) {
  if (typeof st.source.lookupSid !== 'function') return null
  const now = st.now()
  const hit = names.get(sid)
  if (hit !== undefined && now - hit.at < NAME_TTL_MS) return hit.name
  const name = st.source.lookupSid(sid)
  names.delete(sid)
  if (names.size >= NAME_CACHE_MAX) names.delete(names.keys().next().value)
  names.set(sid, { name, at: now })
  return name
}

/** The development identity (src/windows-auth.js normalizeDevIdentity()'s) as an identity. */
function developmentIdentity ({ user, sid, groups }, scheme) {
  return new WindowsIdentity({ scheme, sid, name: user, groups })
}

module.exports = { WindowsIdentity, release, developmentIdentity, clearNameCache: () => names.clear() }
