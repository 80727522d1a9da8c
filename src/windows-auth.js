'use strict'

// Windows authentication (README "Windows authentication"): what an app's `auth` and
// `promote_server_vars` mean, in one place for the config check, the supervisor, doctor
// and the worker. HTTP.SYS does the exchange itself, in the kernel, for the schemes a URL
// group enables (docs/http-sys.md 8); the worker only reads the result and exposes it as
// req.windowsIdentity. The hub has no Windows logon: an app with `auth` runs there only
// with a development identity, which every request then carries. That is not
// authentication, and nothing here pretends it is.

const crypto = require('node:crypto')
const { codes } = require('./errors')

// The config's names -> the scheme's name on the wire (the WWW-Authenticate token, and
// HTTP_REQUEST_AUTH_TYPE's names: ne-http-http_request_auth_type)
const SCHEMES = Object.freeze({ negotiate: 'Negotiate', kerberos: 'Kerberos', ntlm: 'NTLM', basic: 'Basic', digest: 'Digest' })
// The order of the challenges in a 401, strongest first: a client takes the first it can
// do (RFC 9110 11.6.1 leaves it to the client; ASP.NET Core's HttpSys orders them so)
const CHALLENGE_ORDER = Object.freeze(['kerberos', 'negotiate', 'ntlm', 'digest', 'basic'])

// promote_server_vars: the IIS server variables iisnode's promoteServerVars hands an app
// as x-iisnode-<name> request headers, as far as they concern the logon
const SERVER_VARS = Object.freeze(['AUTH_USER', 'AUTH_TYPE', 'LOGON_USER', 'REMOTE_USER'])
const SERVER_VAR_PREFIX = 'x-iisnode-'

/** The scheme a development identity reports (req.windowsIdentity.scheme, AUTH_TYPE). */
const DEV_SCHEME = 'Development'
const DEV_ENV = 'HTTPSYS_DEV_IDENTITY'
// realm, domain, names: a quoted challenge parameter and a UTF-16 string of HTTP.SYS's
const MAX_TEXT = 255
const SID = /^S-1-\d+(-\d+)+$/i

/** A text value that can go into a quoted header parameter and an HTTP.SYS string. */
function textProblem (value) {
  if (typeof value !== 'string' || value.trim() === '') return 'must be a non-empty string'
  if (value.length > MAX_TEXT) return `must be at most ${MAX_TEXT} characters`
  // eslint-disable-next-line no-control-regex
  if (/["\x00-\x1f\x7f]/.test(value)) return 'must not hold a double quote or a control character'
  return null
}

/**
 * A development identity as written (a name, or { user, sid?, groups? }) -> { user, sid,
 * groups: [{ name, sid }] }. A SID that is not given is made up from the name, the same
 * on every run (an app that keys something by SID keeps working across restarts).
 * @param {unknown} value
 * @param {(path: Array<string|number>, reason: string, fix: string) => never} fail
 */
function normalizeDevIdentity (value, fail) {
  const example = '{ user: \'DEV\\\\alice\', groups: [\'DEV\\\\Staff\'] }'
  if (typeof value === 'string') value = { user: value }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    fail([], 'must be a user name or { user, sid?, groups? }', `For example ${example}.`)
  }
  for (const key of Object.keys(value)) {
    if (!['user', 'sid', 'groups'].includes(key)) fail([key], 'is not a known key', 'Known keys: user, sid, groups.')
  }
  const problem = textProblem(value.user)
  if (problem !== null) fail(['user'], value.user === undefined ? 'is required' : problem, 'For example user: \'DEV\\\\alice\'.')
  const sidOf = (v, at, name) => {
    if (v === undefined) return madeUpSid(name)
    if (typeof v !== 'string' || !SID.test(v)) fail(at, `must be a SID (S-1-5-21-...), got ${JSON.stringify(v)}`, '`whoami /user` shows one; or leave it out for a made-up one.')
    return v.toUpperCase()
  }
  const groups = []
  if (value.groups !== undefined) {
    if (!Array.isArray(value.groups)) fail(['groups'], 'must be an array of group names or { name, sid }', 'For example groups: [\'DEV\\\\Staff\'].')
    value.groups.forEach((g, i) => {
      const entry = typeof g === 'string' ? { name: g } : g
      if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) fail(['groups', i], 'must be a group name or { name, sid }', 'For example \'DEV\\\\Staff\'.')
      for (const key of Object.keys(entry)) if (key !== 'name' && key !== 'sid') fail(['groups', i, key], 'is not a known key', 'Known keys: name, sid.')
      const p = textProblem(entry.name)
      if (p !== null) fail(['groups', i, 'name'], p, 'For example \'DEV\\\\Staff\'.')
      groups.push({ name: entry.name, sid: sidOf(entry.sid, ['groups', i, 'sid'], entry.name) })
    })
  }
  return { user: value.user, sid: sidOf(value.sid, ['sid'], value.user), groups }
}

// S-1-5-21-0-0-0-<rid>: the shape of a local account's SID, with a domain part of zeros
// no real machine has
function madeUpSid (name) {
  const rid = 1000 + (crypto.createHash('sha256').update(String(name).toLowerCase()).digest().readUInt32BE(0) % 1000000000)
  return `S-1-5-21-0-0-0-${rid}`
}

/**
 * HTTPSYS_DEV_IDENTITY: `DOMAIN\user`, or JSON { user, sid?, groups? }.
 * @returns {object|null} normalizeDevIdentity()'s, null when unset
 * @throws ERR_HTTPSYS_CONFIG_INVALID (key HTTPSYS_DEV_IDENTITY)
 */
function devIdentityFromEnv (text) {
  if (text === undefined || text === null || text === '') return null
  let value = text
  const fail = (at, reason, fix) => {
    throw new codes.ERR_HTTPSYS_CONFIG_INVALID({ key: [DEV_ENV, ...at].join('.'), reason, fix })
  }
  if (/^\s*\{/.test(text)) {
    try {
      value = JSON.parse(text)
    } catch (err) {
      fail([], `is not valid JSON (${err.message})`, `Write ${DEV_ENV}='DEV\\alice' or ${DEV_ENV}='{"user":"DEV\\\\alice","groups":["DEV\\\\Staff"]}'.`)
    }
  }
  return normalizeDevIdentity(value, fail)
}

/**
 * What a worker of the app needs (HTTPSYS_AUTH): its auth and promote_server_vars, as
 * JSON, or undefined when it has neither.
 */
function authEnv (app) {
  const promote = app.promote_server_vars || []
  if (!app.auth && promote.length === 0) return undefined
  const a = app.auth
  return JSON.stringify({
    auth: a
      ? { schemes: a.schemes, anonymous: a.anonymous, realm: a.realm, domain: a.domain, kerberosCredentialCaching: a.kerberos_credential_caching, devIdentity: a.dev_identity }
      : null,
    promote
  })
}

/** HTTPSYS_AUTH -> { auth, promote }; null when unset. Something else is a broken install: refused. */
function readAuthEnv (text) {
  if (text === undefined || text === '') return null
  let value
  try {
    value = JSON.parse(text)
  } catch {
    value = null
  }
  const schemes = value && value.auth ? value.auth.schemes : []
  if (value === null || typeof value !== 'object' || !Array.isArray(value.promote) || !Array.isArray(schemes) ||
      !schemes.every((s) => Object.hasOwn(SCHEMES, s)) || !value.promote.every((v) => SERVER_VARS.includes(v))) {
    throw new codes.ERR_HTTPSYS_CONFIG_INVALID({ key: 'HTTPSYS_AUTH', reason: 'is not what the supervisor hands its workers', fix: 'Start the app with `httpsys start`; HTTPSYS_AUTH is not set by hand.' })
  }
  return { auth: value.auth || null, promote: value.promote }
}

/**
 * The WWW-Authenticate values a 401 carries for these schemes, in CHALLENGE_ORDER. Basic
 * names its realm (RFC 7617 2 requires one): the configured one, else the host the
 * client asked for, as IIS does. Digest goes bare: HTTP.SYS holds its realm and domain
 * (HTTP_SERVER_AUTHENTICATION_DIGEST_PARAMS) and the nonce is its own.
 * @param {string[]} schemes config names
 * @param {string|null} realm
 * @param {string} host the request's Host, without its port
 */
function challenges (schemes, realm, host) {
  const out = []
  for (const s of CHALLENGE_ORDER) {
    if (!schemes.includes(s)) continue
    if (s === 'basic') out.push(`Basic realm="${(realm || host || 'httpsys').replace(/["\\]/g, '')}"`)
    else out.push(SCHEMES[s])
  }
  return out
}

/**
 * Whether the chosen router can serve the config's `auth` apps, at start:
 * - HTTP.SYS: yes; a development identity is ignored there (a warning says so);
 * - the hub on Windows because HTTP.SYS could not be had (auto's fallback): refused, even
 *   with a development identity, so that a production config never silently hands
 *   every request one because the addon did not load;
 * - the hub otherwise: with a development identity (the app's dev_identity, or
 *   HTTPSYS_DEV_IDENTITY in its environment or httpsys's), else refused.
 * @param {object[]} apps validated apps
 * @param {{ backend: string, fallback?: boolean, reason?: string, fix?: string }} choice
 * @param {object} [env=process.env] httpsys's environment (the workers inherit it)
 * @returns {string[]} warnings, one per app
 * @throws ERR_HTTPSYS_AUTH_UNAVAILABLE naming the first app that cannot be served;
 *   ERR_HTTPSYS_CONFIG_INVALID for a malformed HTTPSYS_DEV_IDENTITY
 */
function checkRouter (apps, choice, env = process.env) {
  const warnings = []
  for (const app of apps) {
    if (!app.auth || app.type === 'worker') continue
    const fromEnv = devIdentityFromEnv(app.env[DEV_ENV] !== undefined ? app.env[DEV_ENV] : env[DEV_ENV])
    const dev = fromEnv || app.auth.dev_identity
    const schemes = app.auth.schemes
    if (choice.backend === 'httpsys') {
      if (dev) warnings.push(`app ${JSON.stringify(app.name)}: the development identity (${fromEnv ? DEV_ENV : 'auth.dev_identity'}) is ignored on HTTP.SYS, which authenticates every request itself`)
      continue
    }
    if (choice.fallback) {
      throw new codes.ERR_HTTPSYS_AUTH_UNAVAILABLE({
        app: app.name,
        schemes,
        router: 'the native router',
        reason: `HTTP.SYS could not be used: ${choice.reason}`,
        fix: `Fix that to run on HTTP.SYS: ${choice.fix || '`httpsys doctor` says how'}. ` +
          (dev ? 'The development identity is handed out only when --backend hub asks for the native router, never on this fallback.' : '')
      })
    }
    if (!dev) throw new codes.ERR_HTTPSYS_AUTH_UNAVAILABLE({ app: app.name, schemes, router: 'the native router', reason: choice.reason })
    warnings.push(`app ${JSON.stringify(app.name)}: every request carries the development identity ${dev.user} (${fromEnv ? DEV_ENV : 'auth.dev_identity'}): the native router authenticates nobody`)
  }
  return warnings
}

module.exports = {
  SCHEMES,
  CHALLENGE_ORDER,
  SERVER_VARS,
  SERVER_VAR_PREFIX,
  DEV_SCHEME,
  DEV_ENV,
  MAX_TEXT,
  textProblem,
  normalizeDevIdentity,
  devIdentityFromEnv,
  authEnv,
  readAuthEnv,
  challenges,
  checkRouter
}
