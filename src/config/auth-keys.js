'use strict'

// An app's `auth` and `promote_server_vars` keys (README "Windows authentication"),
// checked once here like every other key (schema.js rows call these). The names follow
// ASP.NET Core's HttpSys options: schemes ~ AuthenticationSchemes, anonymous ~
// AllowAnonymous (true by default there too).

const { didYouMean } = require('./suggest')
// schema.js requires this file only when it checks a value: loaded in full by then
const { describe: kind } = require('./schema')
const { SCHEMES, SERVER_VARS, textProblem, normalizeDevIdentity } = require('../windows-auth')

const AUTH_KEYS = ['schemes', 'anonymous', 'realm', 'domain', 'basic_over_http', 'kerberos_credential_caching', 'dev_identity']
const EXAMPLE = '{ schemes: ["negotiate", "ntlm"], anonymous: false }'

/**
 * @returns {object|null} { schemes, anonymous, realm, domain, basic_over_http,
 *   kerberos_credential_caching, dev_identity }, null for none (false or null)
 */
function checkAuth (value, ctx) {
  if (value === null || value === false) return null
  if (typeof value !== 'object' || Array.isArray(value)) ctx.fail(`must be an object, got ${kind(value)}`, `For example ${ctx.ex(EXAMPLE)}.`)
  for (const key of Object.keys(value)) {
    if (AUTH_KEYS.includes(key)) continue
    const guess = didYouMean(key, AUTH_KEYS)
    ctx.at(key).fail('is not a known key', (guess ? `Did you mean ${JSON.stringify(guess)}? ` : '') + `Known keys: ${AUTH_KEYS.join(', ')}.`)
  }
  if (ctx.app.type === 'worker') ctx.fail('is set on an app of type "worker", which serves no HTTP', 'Remove auth, or make the app type: "web".')
  const schemes = checkSchemes(value.schemes, ctx.at('schemes'))
  const out = {
    schemes,
    anonymous: bool(value.anonymous, ctx.at('anonymous'), true),
    realm: text(value.realm, ctx.at('realm')),
    domain: text(value.domain, ctx.at('domain')),
    basic_over_http: bool(value.basic_over_http, ctx.at('basic_over_http'), false),
    kerberos_credential_caching: bool(value.kerberos_credential_caching, ctx.at('kerberos_credential_caching'), false),
    dev_identity: value.dev_identity === undefined || value.dev_identity === null
      ? null
      : normalizeDevIdentity(value.dev_identity, (at, reason, fix) => {
        let c = ctx.at('dev_identity')
        for (const seg of at) c = c.at(seg)
        c.fail(reason, fix)
      })
  }
  const basic = schemes.includes('basic')
  const digest = schemes.includes('digest')
  if (out.realm !== null && !basic && !digest) ctx.at('realm').fail('applies to the basic and digest schemes only', 'Remove it, or add "basic" to schemes.')
  if (out.domain !== null && !digest) ctx.at('domain').fail('is the Digest protection space (RFC 7616 3.3) and applies to the digest scheme only', 'Remove it.')
  if (out.kerberos_credential_caching && !schemes.includes('negotiate') && !schemes.includes('kerberos')) {
    ctx.at('kerberos_credential_caching').fail('needs "negotiate" or "kerberos" in schemes (HTTP_AUTH_EX_FLAG_ENABLE_KERBEROS_CREDENTIAL_CACHING)', 'Add one, or remove the key.')
  }
  const plain = ctx.app.urls.filter((u) => u.startsWith('http://'))
  if (basic && plain.length > 0) {
    if (!out.basic_over_http) {
      ctx.at('schemes').fail(`has "basic", which sends the password readable by anyone on the path, and the app has http:// prefixes (${plain.join(' ')})`,
        'Serve the app on https:// prefixes only, or, on a network you trust, say so with basic_over_http: true.')
    }
    ctx.opts.warnings.push(`${ctx.label}${ctx.appName ? ` (app ${ctx.appName})` : ''}: basic_over_http: Basic sends each password readable by anyone on the path to ${plain.join(' ')}`)
  }
  if (digest) {
    ctx.opts.warnings.push(`${ctx.label}${ctx.appName ? ` (app ${ctx.appName})` : ''}: digest is HTTP.SYS's WDigest, which needs Active Directory accounts whose passwords are stored reversibly; httpsys's own tests do not cover it (test/windows/README.md)`)
  }
  return out
}

function checkSchemes (value, ctx) {
  const example = '["negotiate", "ntlm"]'
  if (value === undefined) ctx.fail('is required', `For example ${ctx.ex(example)}.`)
  const list = typeof value === 'string' ? [value] : value
  if (!Array.isArray(list) || list.length === 0) ctx.fail(`must be a list of schemes, got ${kind(value)}`, `For example ${ctx.ex(example)}.`)
  const out = []
  list.forEach((item, i) => {
    const at = typeof value === 'string' ? ctx : ctx.at(i)
    const name = typeof item === 'string' ? item.trim().toLowerCase() : item
    if (!Object.hasOwn(SCHEMES, name)) {
      const guess = typeof item === 'string' ? didYouMean(name, Object.keys(SCHEMES)) : null
      at.fail(`must be one of ${Object.keys(SCHEMES).map((s) => JSON.stringify(s)).join(', ')}, got ${kind(item)}`,
        guess ? `Did you mean ${JSON.stringify(guess)}?` : `For example ${ctx.ex(example)}.`)
    }
    if (!out.includes(name)) out.push(name)
  })
  return out
}

/** promote_server_vars: ["AUTH_USER", ...] (any case, as iisnode's promoteServerVars takes them) */
function checkServerVars (value, ctx) {
  if (value === null || value === false) return []
  const list = typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter(Boolean) : value
  if (!Array.isArray(list)) ctx.fail(`must be a list of server variables, got ${kind(value)}`, `For example ${ctx.ex('["AUTH_USER", "AUTH_TYPE", "LOGON_USER"]')}.`)
  const out = []
  list.forEach((item, i) => {
    const at = typeof value === 'string' ? ctx : ctx.at(i)
    const name = typeof item === 'string' ? item.trim().toUpperCase() : item
    if (!SERVER_VARS.includes(name)) {
      at.fail(`must be one of ${SERVER_VARS.join(', ')}, got ${kind(item)}`,
        'httpsys promotes the logon variables; the others are on the request already (req.socket.remoteAddress, req.socket.encrypted, ...).')
    }
    if (!out.includes(name)) out.push(name)
  })
  if (out.length > 0 && ctx.app.type === 'worker') ctx.fail('is set on an app of type "worker", which serves no HTTP', 'Remove it, or make the app type: "web".')
  return out
}

function bool (value, ctx, fallback) {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean') ctx.fail(`must be true or false, got ${kind(value)}`, `For example ${ctx.ex('true')}.`)
  return value
}

function text (value, ctx) {
  if (value === undefined || value === null) return null
  const problem = textProblem(value)
  if (problem !== null) ctx.fail(`${problem}, got ${kind(value)}`, `For example ${ctx.ex('"Intranet"')}.`)
  return value
}

module.exports = { checkAuth, checkServerVars, AUTH_KEYS }
