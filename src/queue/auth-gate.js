'use strict'

// The worker's side of an app's `auth` and `promote_server_vars` (README "Windows
// authentication"), the same for both routers:
//
// - every request's identity (QueueRequest.identity, which src/http shows as
//   req.windowsIdentity): HTTP.SYS's, from the request's access token
//   (httpsys/token-identities.js), or on the hub the development identity;
// - promote_server_vars: the x-iisnode-<var> headers iisnode adds, and a client's own
//   x-iisnode-* headers dropped first, so no client can claim to be someone;
// - on HTTP.SYS, anonymous: false: a request HTTP.SYS did not authenticate is answered
//   401 with the challenges and never reaches the app (ASP.NET Core's AllowAnonymous);
//   and any 401 the app sends gets the challenges of the app's schemes, which is how a
//   client learns it may authenticate (HTTP.SYS does the rest of the exchange itself:
//   "the application ... sends the initial 401 challenge", win32/http/authentication-in-http-version-2-0).

const { codes } = require('../errors')
const { ENV, readWorkerEnv } = require('../worker-interface')
const { HANDLERS } = require('../wire/contract')
const { SERVER_VAR_PREFIX, DEV_ENV, DEV_SCHEME, readAuthEnv, devIdentityFromEnv, challenges } = require('../windows-auth')
const { developmentIdentity } = require('./windows-identity')

class AuthGate {
  /**
   * @param {object} options
   * @param {object|null} options.auth HTTPSYS_AUTH's auth: { schemes, anonymous, realm, ... }
   * @param {string[]} options.promote server variables to promote
   * @param {object|null} [options.development] a WindowsIdentity every request carries (the hub)
   */
  constructor ({ auth, promote, development = null }) {
    this.auth = auth
    this.promote = promote
    this.development = development
  }

  /** Whether a request without an identity is answered 401 instead of reaching the app. */
  get challengesAnonymous () {
    return this.auth !== null && this.auth.anonymous === false && this.development === null
  }

  /**
   * Gives a request its identity and its headers, in place. A client's own x-iisnode-*
   * headers go whenever the app promotes any, whatever the variable: an app that reads
   * one it does not promote (passport-windowsauth reads x-iisnode-logon_user) must not
   * get a forged one.
   * @param {object} req the QueueRequest (rawHeaders replaced, identity set)
   * @param {object|null} identity HTTP.SYS's, or null (the development one where set)
   */
  admit (req, identity) {
    if (this.development !== null) identity = this.development
    req.identity = identity
    if (this.promote.length === 0) return
    const raw = scrub(req.rawHeaders)
    for (const name of this.promote) raw.push(SERVER_VAR_PREFIX + name.toLowerCase(), headerValue(serverVar(name, identity)))
    req.rawHeaders = raw
  }

  /**
   * The headers of a 401 with the challenges of the app's schemes added, except those
   * it sent itself; other statuses, and an app without auth, unchanged.
   * @param {number} status
   * @param {Array} headers the response's rawHeaders
   * @param {Array} requestHeaders the request's (its Host names Basic's default realm)
   */
  withChallenges (status, headers, requestHeaders) {
    if (status !== 401 || this.auth === null || this.development !== null) return headers
    const sent = []
    for (let i = 0; i < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === 'www-authenticate') sent.push(String(headers[i + 1]).trim().split(/[\s,]/)[0].toLowerCase())
    }
    const out = headers.slice()
    for (const value of challenges(this.auth.schemes, this.auth.realm, hostOf(requestHeaders))) {
      if (!sent.includes(value.split(' ')[0].toLowerCase())) out.push('WWW-Authenticate', value)
    }
    return out
  }

  /** The 401 the worker sends for an anonymous request the app does not take. */
  challenge (requestHeaders) {
    const text = 'Unauthorized'
    return {
      status: 401,
      reason: 'Unauthorized',
      headers: this.withChallenges(401, ['Content-Type', 'text/plain', 'Content-Length', String(text.length)], requestHeaders),
      body: text
    }
  }
}

/**
 * The gate of an HTTP.SYS worker, from its environment; null when the app has neither
 * auth nor promote_server_vars. A development identity is never used here.
 * @throws ERR_HTTPSYS_CONFIG_INVALID for an HTTPSYS_AUTH the supervisor did not write
 */
function httpSysGate (env = process.env) {
  const decoded = readAuthEnv(env[ENV.AUTH])
  if (decoded === null) return null
  return new AuthGate({ auth: decoded.auth, promote: decoded.promote })
}

/**
 * The gate of a worker on the hub, from its environment:
 * - an app with auth: its development identity (HTTPSYS_DEV_IDENTITY wins over the
 *   config's dev_identity) on every request, else no attach at all;
 * - promote_server_vars alone: the headers, every request anonymous;
 * - standalone (no supervisor: no config), HTTPSYS_DEV_IDENTITY alone: the identity on
 *   every request of the process's servers;
 * - otherwise none.
 * @returns {AuthGate|null}
 * @throws ERR_HTTPSYS_AUTH_UNAVAILABLE, ERR_HTTPSYS_CONFIG_INVALID
 */
function hubGate (env = process.env) {
  const decoded = readAuthEnv(env[ENV.AUTH])
  const fromEnv = devIdentityFromEnv(env[DEV_ENV])
  if (decoded !== null && decoded.auth !== null) {
    const dev = fromEnv || decoded.auth.devIdentity
    if (!dev) {
      const worker = readWorkerEnv(env)
      throw new codes.ERR_HTTPSYS_AUTH_UNAVAILABLE({ app: worker.app || 'this app', schemes: decoded.auth.schemes, router: 'the native router' })
    }
    return new AuthGate({ auth: decoded.auth, promote: decoded.promote, development: developmentIdentity(dev, DEV_SCHEME) })
  }
  if (decoded !== null) return new AuthGate({ auth: null, promote: decoded.promote })
  const worker = readWorkerEnv(env)
  if (fromEnv !== null && worker.hub === null && worker.supervisorPid === null) {
    return new AuthGate({ auth: null, promote: [], development: developmentIdentity(fromEnv, DEV_SCHEME) })
  }
  return null
}

/**
 * A hub attachment's handlers with the gate in front of onRequest (each handler still
 * called on the object it came from).
 */
function gatedHandlers (handlers, gate) {
  if (gate === null) return handlers
  const out = {}
  for (const name of HANDLERS) if (typeof handlers[name] === 'function') out[name] = handlers[name].bind(handlers)
  const onRequest = out.onRequest
  out.onRequest = (req) => {
    gate.admit(req, null)
    onRequest(req)
  }
  return out
}

/** rawHeaders without any x-iisnode-* header (a new array). */
function scrub (raw) {
  const out = []
  for (let i = 0; i < raw.length; i += 2) {
    const name = String(raw[i])
    if (name.length > SERVER_VAR_PREFIX.length && name.slice(0, SERVER_VAR_PREFIX.length).toLowerCase() === SERVER_VAR_PREFIX) continue
    out.push(raw[i], raw[i + 1])
  }
  return out
}

// IIS's values: the logon name for the three user variables, the scheme for AUTH_TYPE,
// empty for an anonymous request (iisnode still adds the header)
function serverVar (name, identity) {
  if (identity === null) return ''
  if (name === 'AUTH_TYPE') return identity.scheme
  return identity.name || ''
}

// header bytes travel as latin1 strings here: a name outside ASCII goes as its UTF-8 bytes
function headerValue (text) {
  return /^[\x20-\x7e]*$/.test(text) ? text : Buffer.from(text, 'utf8').toString('latin1')
}

function hostOf (raw) {
  for (let i = 0; i < raw.length; i += 2) {
    if (String(raw[i]).toLowerCase() === 'host') return String(raw[i + 1]).replace(/:\d*$/, '').replace(/^\[|\]$/g, '')
  }
  return ''
}

module.exports = { AuthGate, httpSysGate, hubGate, gatedHandlers, scrub }
