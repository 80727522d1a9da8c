'use strict'

// The output cache's rules, one table for both routers (docs/output-cache.md). The
// worker decides a response's time to live from them (src/http/server-handle.js) and
// passes it with respond(): HTTP.SYS gets it as HTTP_CACHE_POLICY, the router in the
// RESPONSE frame. The router checks the same rules again before it stores anything
// (router/internal/cache), so a worker that says otherwise cannot cache what the
// rules forbid. They are HTTP.SYS's and ASP.NET HttpSys's (EnableResponseCaching):
//
// - request: GET (a HEAD is answered from a cached GET), no Authorization, no body,
//   no query string unless the app's config rule for the path allows one; the rule is
//   looked up on the target the client sent (the one the router keys on), never on the
//   req.url an app's router rewrote (a mount point strips its prefix): else
//   /account/static/x.css under a /static/ rule stores an /account page (issue 23);
// - a client certificate: like Authorization (RFC 9111 3.5), unless the response says
//   Cache-Control: public (publicResponse);
// - response: status 200, no Set-Cookie, Vary or Pragma, Cache-Control neither
//   private, no-store nor no-cache;
// - time to live: s-maxage (it speaks to shared caches, which the router is); else the
//   app's config rule for the path (`cache: [{ path, ttl }]`: it wins over max-age,
//   which speaks to browsers: express.static's `public, max-age=0` stays cacheable
//   there); else `public` with max-age, or with Expires (minus Date).

/** A request method the cache stores a response for. */
const STORE_METHOD = 'GET'

/**
 * @typedef {object} CacheRule
 * @property {string} path a URL path prefix ("/static/"); a prefix ending in "/" also
 *   matches the path without it ("/static")
 * @property {number} ttl seconds
 * @property {boolean} query whether URLs with a query string are cached (each query its own entry)
 */

/**
 * @typedef {object} CacheControl
 * @property {boolean} public
 * @property {boolean} private
 * @property {boolean} noStore
 * @property {boolean} noCache
 * @property {number} maxAge -1 when absent
 * @property {number} sMaxAge -1 when absent
 */

/**
 * Parses Cache-Control directives (RFC 9111 5.2): names case-insensitive, values as
 * tokens or quoted strings; an unparsable delta-seconds counts as absent.
 * @param {string} value one header value, or several joined with ","
 * @returns {CacheControl}
 */
function parseCacheControl (value) {
  const cc = { public: false, private: false, noStore: false, noCache: false, maxAge: -1, sMaxAge: -1 }
  for (const part of value.split(',')) {
    const eq = part.indexOf('=')
    const name = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase()
    let arg = eq === -1 ? '' : part.slice(eq + 1).trim()
    if (arg.length >= 2 && arg[0] === '"' && arg[arg.length - 1] === '"') arg = arg.slice(1, -1)
    switch (name) {
      case 'public': cc.public = true; break
      case 'private': cc.private = true; break
      case 'no-store': cc.noStore = true; break
      case 'no-cache': cc.noCache = true; break
      case 'max-age': cc.maxAge = seconds(arg); break
      case 's-maxage': cc.sMaxAge = seconds(arg); break
    }
  }
  return cc
}

function seconds (arg) {
  return /^\d{1,10}$/.test(arg) ? Number(arg) : -1
}

/**
 * The config rule for a request target, or null: the longest matching path prefix.
 * A target with a query string matches only a rule that allows queries.
 * @param {CacheRule[]} rules
 * @param {string} url the request target (origin-form)
 * @returns {CacheRule|null}
 */
function ruleFor (rules, url) {
  if (rules.length === 0) return null
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  let best = null
  for (const r of rules) {
    const p = r.path
    const hit = path.startsWith(p) || (p.length > 1 && p.endsWith('/') && path === p.slice(0, -1))
    if (hit && (best === null || p.length > best.path.length)) best = r
  }
  if (best !== null && q !== -1 && !best.query) return null
  return best
}

/**
 * Whether a request may be answered from the cache, or have its response stored:
 * no Authorization (RFC 9111 3.5: a shared cache never reuses a response for one
 * without an explicit permission; HTTP.SYS never caches one) and no body.
 * @param {string[]} rawHeaders [name, value, ...]
 */
function requestAllows (rawHeaders) {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const n = rawHeaders[i]
    if (n.length === 13 && n.toLowerCase() === 'authorization') return false
  }
  return true
}

/**
 * The response's time to live in the cache, in seconds; 0: not cached.
 * @param {number} status
 * @param {string[]} rawHeaders the response's [name, value, ...]
 * @param {CacheRule|null} rule the app's config rule for the request's path
 * @param {number} [now=Date.now()] for Expires
 * @returns {number}
 */
function responseTtl (status, rawHeaders, rule, now = Date.now()) {
  if (status !== 200) return 0
  let cc = null
  let expires = null
  let date = null
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const n = rawHeaders[i]
    switch (n.length) {
      case 4:
        if (n.toLowerCase() === 'vary') return 0
        if (n.toLowerCase() === 'date') date = String(rawHeaders[i + 1])
        break
      case 6:
        if (n.toLowerCase() === 'pragma') return 0
        break
      case 7:
        if (n.toLowerCase() === 'expires') expires = String(rawHeaders[i + 1])
        break
      case 10:
        if (n.toLowerCase() === 'set-cookie') return 0
        break
      case 13:
        if (n.toLowerCase() === 'cache-control') cc = cc === null ? String(rawHeaders[i + 1]) : cc + ',' + rawHeaders[i + 1]
        break
    }
  }
  const c = cc === null ? null : parseCacheControl(cc)
  if (c !== null && (c.private || c.noStore || c.noCache)) return 0
  if (c !== null && c.sMaxAge >= 0) return c.sMaxAge
  if (rule !== null) return rule.ttl
  if (c === null || !c.public) return 0
  if (c.maxAge >= 0) return c.maxAge
  if (expires !== null) {
    const at = Date.parse(expires)
    const base = date !== null ? Date.parse(date) : now
    if (Number.isFinite(at) && Number.isFinite(base) && at > base) return Math.floor((at - base) / 1000)
  }
  return 0
}

const ANY_RULE = { path: '/', ttl: 1, query: true }

/**
 * Whether the response says `Cache-Control: public`: a response to a client that sent a
 * certificate is stored only then, and only such an entry answers such a client (RFC
 * 9111 3.5 says the same of Authorization; issue 23). s-maxage alone is not enough: it
 * says how long, not that the page is the same for every client.
 * @param {string[]} rawHeaders [name, value, ...]
 */
function publicResponse (rawHeaders) {
  let cc = null
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const n = rawHeaders[i]
    if (n.length === 13 && n.toLowerCase() === 'cache-control') cc = cc === null ? String(rawHeaders[i + 1]) : cc + ',' + rawHeaders[i + 1]
  }
  return cc !== null && parseCacheControl(cc).public
}

/**
 * Whether the response's own headers forbid caching it (Set-Cookie, Vary, Pragma,
 * Cache-Control private, no-store, no-cache or s-maxage=0), whatever its time to live.
 * @param {string[]} rawHeaders [name, value, ...]
 */
function responseRefused (rawHeaders) {
  return responseTtl(200, rawHeaders, ANY_RULE) === 0
}

/**
 * Whether a response to this request may be stored at all (before looking at the
 * response): a GET with no Authorization and no body, on a path the config allows
 * (no query string unless its rule says so).
 * @param {string} method
 * @param {string} url
 * @param {string[]} rawHeaders the request's
 * @param {boolean} hasBody
 * @param {CacheRule[]} rules
 * @returns {{rule: CacheRule|null}|null} null: never cached
 */
function storable (method, url, rawHeaders, hasBody, rules) {
  if (method !== STORE_METHOD || hasBody) return null
  const rule = ruleFor(rules, url)
  if (rule === null && url.indexOf('?') !== -1) return null
  if (!requestAllows(rawHeaders)) return null
  return { rule }
}

module.exports = { parseCacheControl, ruleFor, requestAllows, responseTtl, responseRefused, publicResponse, storable }
