'use strict'

// The HTTP.SYS UrlPrefix grammar and its routing rules, shared by the hub (which must route
// exactly as HTTP.SYS does) and by src/http (which maps listen() to a prefix).
// Grammar and routing: https://learn.microsoft.com/windows/win32/http/urlprefix-strings
// URL canonicalisation (backslash -> slash, dot segments): Microsoft KB 896287.

const { isIPv4, isIPv6 } = require('node:net')
const { domainToASCII } = require('node:url')
const { codes } = require('./errors')

const BAD_REQUEST = Object.freeze({ status: 400 })
const NOT_FOUND = Object.freeze({ status: 404 })

// Host headers and local addresses repeat endlessly; caching their normal form keeps the
// hot path free of allocations. Bounded because the Host header is client-controlled.
const CACHE_MAX = 256

/**
 * Parse and normalise a UrlPrefix (`scheme://host:port/path/`).
 * @param {string} input what the user typed
 * @param {object} [opts]
 * @param {boolean} [opts.allowPortZero=false] accept port 0 (listen(0): "pick a free port")
 * @returns {Readonly<{prefix: string, scheme: string, host: string, hostKind: string,
 *   port: number, path: string, ip: string|null}>}
 */
function parse (input, opts) {
  const allowPortZero = Boolean(opts && opts.allowPortZero)
  const fail = (reason) => { throw new codes.ERR_HTTPSYS_BAD_PREFIX({ prefix: input, reason }) }

  if (typeof input !== 'string') fail(`a URL prefix must be a string, not ${input === null ? 'null' : typeof input}`)
  if (input.length === 0) fail('the prefix is empty')
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(input)) fail('whitespace and control characters are not allowed')

  const sep = input.indexOf('://')
  if (sep <= 0) fail('missing scheme: a prefix starts with http:// or https://')
  const scheme = input.slice(0, sep).toLowerCase()
  if (scheme !== 'http' && scheme !== 'https') fail(`the scheme must be http or https, not ${JSON.stringify(input.slice(0, sep))}`)
  if (input.includes('?')) fail('a query string (?) is not allowed in a prefix')
  if (input.includes('#')) fail('a fragment (#) is not allowed in a prefix')

  const rest = input.slice(sep + 3)
  const slash = rest.indexOf('/')
  const authority = slash === -1 ? rest : rest.slice(0, slash)
  const rawPath = slash === -1 ? '/' : rest.slice(slash)
  if (authority.includes('@')) fail('user info (user@) is not allowed in a prefix')

  let hostPart
  let portPart
  if (authority[0] === '[') {
    const close = authority.indexOf(']')
    if (close === -1) fail('bad IPv6 literal: the closing ] is missing')
    hostPart = authority.slice(0, close + 1)
    const after = authority.slice(close + 1)
    if (after === '') fail('a port is required (http://host:port/); it is never implied by the scheme')
    if (after[0] !== ':') fail('bad IPv6 literal: only :port may follow the closing ]')
    portPart = after.slice(1)
  } else {
    const colon = authority.lastIndexOf(':')
    if (colon === -1) fail('a port is required (http://host:port/); it is never implied by the scheme')
    hostPart = authority.slice(0, colon)
    portPart = authority.slice(colon + 1)
    if (hostPart.includes(':')) fail('a host may contain ":" only as an IPv6 literal in brackets, e.g. http://[::1]:8080/')
  }
  if (hostPart === '') fail('the host is empty: use +, *, a host name or an IP address')

  const port = parsePort(portPart, allowPortZero, fail)
  const { host, hostKind, ip } = parseHost(hostPart, fail)
  const path = parsePath(rawPath, fail)

  return Object.freeze({ prefix: `${scheme}://${host}:${port}${path}`, scheme, host, hostKind, port, path, ip })
}

/**
 * @param {string} input
 * @param {object} [opts] as for parse()
 * @returns {string} the normalised prefix
 */
function normalize (input, opts) {
  return parse(input, opts).prefix
}

/**
 * The prefix a node `listen(port, host)` call stands for.
 * @param {object} opts
 * @param {number|string} [opts.port=0] 0 picks a free port
 * @param {string} [opts.host] what was passed to listen()
 * @param {string} [opts.scheme='http'] 'https' for https servers
 * @returns {string}
 */
function fromListen ({ port = 0, host, scheme = 'http' } = {}) {
  let h = '+'
  if (host !== undefined && host !== null && host !== '') {
    const raw = String(host)
    const bare = raw[0] === '[' && raw[raw.length - 1] === ']' ? raw.slice(1, -1) : raw
    const v6 = ipv6Text(bare)
    if (v6 !== null) {
      // '::' is node's "every address": HTTP.SYS says that with the strong wildcard.
      h = v6 === '::' ? '+' : `[${v6}]`
    } else if (bare === '0.0.0.0') {
      h = '+'
    } else if (bare.toLowerCase() === 'localhost') {
      // node binds loopback for 'localhost'; we keep that binding meaning (IP-bound to
      // 127.0.0.1) rather than turning it into a Host-header filter, so requests for
      // http://127.0.0.1:port/ keep reaching the app as they did on node.
      h = '127.0.0.1'
    } else {
      h = raw
    }
  }
  return normalize(`${scheme}://${h}:${port}/`, { allowPortZero: true })
}

/**
 * One router's registrations, for every port, and the HTTP.SYS routing decision.
 */
class RoutingTable {
  #entries = new Map() // conflict key -> entry
  #ports = new Map() // port -> { http: Bucket|null, https: Bucket|null }
  #hostCache = new Map()
  #addrCache = new Map()

  get size () { return this.#entries.size }

  /**
   * @param {string|{prefix: string}} prefix
   * @param {*} target what route() returns for requests under this prefix
   * @returns {object} the parsed prefix
   */
  add (prefix, target) {
    const parsed = parse(typeof prefix === 'object' && prefix !== null ? prefix.prefix : prefix)
    const key = conflictKey(parsed)
    const existing = this.#entries.get(key)
    if (existing) {
      const t = existing.target
      const owner = t === undefined || t === null ? undefined : String(t.name ?? t)
      throw new codes.ERR_HTTPSYS_URL_CONFLICT({ prefix: parsed.prefix, owner })
    }
    const entry = {
      key,
      parsed,
      target,
      pathKey: pathKey(parsed.path),
      hostKey: hostKeyOf(parsed),
      result: Object.freeze({ target, prefix: parsed.prefix })
    }
    this.#entries.set(key, entry)
    insertSorted(this.#listFor(entry, true), entry)
    return parsed
  }

  /** @returns {boolean} whether the prefix was registered (an invalid prefix never is) */
  remove (prefix) {
    const entry = this.#lookup(prefix)
    if (!entry) return false
    this.#entries.delete(entry.key)
    const list = this.#listFor(entry, false)
    list.splice(list.indexOf(entry), 1)
    this.#prune(entry)
    return true
  }

  /** @returns {boolean} */
  has (prefix) {
    return this.#lookup(prefix) !== null
  }

  /** @returns {Array<{prefix: string, target: *, parsed: object}>} in registration order */
  entries () {
    const out = []
    for (const e of this.#entries.values()) out.push({ prefix: e.parsed.prefix, target: e.target, parsed: e.parsed })
    return out
  }

  /** @returns {number[]} distinct ports, ascending */
  ports () {
    return [...this.#ports.keys()].sort((a, b) => a - b)
  }

  /**
   * Route one request as HTTP.SYS does: categories strong, explicit, IP-bound, weak; the
   * first with a host+path match wins, longest path first.
   * @param {object} req
   * @param {string} [req.scheme='http']
   * @param {number} req.port the local port the connection arrived on
   * @param {string} [req.host] the raw Host header value
   * @param {string} [req.localAddress] the local address the connection arrived on
   * @param {string} req.path the raw request target (path + query, undecoded)
   * @returns {{target: *, prefix: string} | {status: number}}
   */
  route ({ scheme = 'http', port, host, localAddress, path }) {
    const schemes = this.#ports.get(port)
    if (schemes === undefined) return BAD_REQUEST
    const bucket = scheme === 'http' ? schemes.http : scheme === 'https' ? schemes.https : null
    if (!bucket) return BAD_REQUEST

    let p = path
    let end = typeof p === 'string' ? fastPathEnd(p) : -1
    if (end === -1) {
      const slow = canonicalTarget(p)
      if (slow === null) return BAD_REQUEST
      p = slow.path
      end = p.length
      // An absolute-form target names the host itself (RFC 9112 section 3.2.2).
      if (slow.host !== null) host = slow.host
    }

    let hostMatched = false
    let hit
    if (bucket.strong.length !== 0) {
      hostMatched = true
      if ((hit = longestMatch(bucket.strong, p, end)) !== null) return hit.result
    }
    if (bucket.explicit.size !== 0 && host) {
      const list = bucket.explicit.get(cached(this.#hostCache, host, hostnameOf))
      if (list !== undefined) {
        hostMatched = true
        if ((hit = longestMatch(list, p, end)) !== null) return hit.result
      }
    }
    if (bucket.ip.size !== 0 && localAddress) {
      const list = bucket.ip.get(cached(this.#addrCache, localAddress, addressKey))
      if (list !== undefined) {
        hostMatched = true
        if ((hit = longestMatch(list, p, end)) !== null) return hit.result
      }
    }
    if (bucket.weak.length !== 0) {
      hostMatched = true
      if ((hit = longestMatch(bucket.weak, p, end)) !== null) return hit.result
    }
    // HTTP.SYS: no registration for the Host -> "Bad Request - Invalid Hostname" (400);
    // a host that is served but not under this path -> 404.
    return hostMatched ? NOT_FOUND : BAD_REQUEST
  }

  #lookup (prefix) {
    let parsed
    try {
      parsed = parse(typeof prefix === 'object' && prefix !== null ? prefix.prefix : prefix)
    } catch {
      return null
    }
    return this.#entries.get(conflictKey(parsed)) ?? null
  }

  #listFor (entry, create) {
    const { port, scheme, hostKind } = entry.parsed
    let schemes = this.#ports.get(port)
    if (schemes === undefined) {
      schemes = { http: null, https: null }
      this.#ports.set(port, schemes)
    }
    let bucket = schemes[scheme]
    if (bucket === null) {
      bucket = schemes[scheme] = { strong: [], explicit: new Map(), ip: new Map(), weak: [] }
    }
    if (hostKind === 'strong' || hostKind === 'weak') return bucket[hostKind]
    const byHost = bucket[hostKind]
    let list = byHost.get(entry.hostKey)
    if (list === undefined && create) byHost.set(entry.hostKey, (list = []))
    return list
  }

  #prune ({ parsed, hostKey }) {
    const schemes = this.#ports.get(parsed.port)
    const bucket = schemes[parsed.scheme]
    const byHost = bucket[parsed.hostKind]
    if (byHost instanceof Map && byHost.get(hostKey).length === 0) byHost.delete(hostKey)
    if (bucket.strong.length === 0 && bucket.weak.length === 0 && bucket.explicit.size === 0 && bucket.ip.size === 0) {
      schemes[parsed.scheme] = null
    }
    if (schemes.http === null && schemes.https === null) this.#ports.delete(parsed.port)
  }
}

// ---------------------------------------------------------------------------
// Grammar helpers

function parsePort (text, allowZero, fail) {
  if (text === '') fail('a port is required (http://host:port/); it is never implied by the scheme')
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c < 48 || c > 57) fail(`the port must be a decimal number (no wildcard), not ${JSON.stringify(text)}`)
  }
  if (text.length > 1 && text[0] === '0') fail('the port must not start with 0')
  const port = text.length > 5 ? Infinity : Number(text)
  if (port === 0 && allowZero) return 0
  if (port < 1 || port > 65535) fail(`port ${text} is out of range (1-65535)`)
  return port
}

function parseHost (text, fail) {
  if (text === '+') return { host: '+', hostKind: 'strong', ip: null }
  if (text === '*') return { host: '*', hostKind: 'weak', ip: null }
  if (text[0] === '[') {
    const inner = text.slice(1, -1)
    if (inner.includes('%')) fail('bad IPv6 literal: zone ids (%...) are not allowed')
    const ip = ipv6Text(inner)
    if (ip === null) fail(`bad IPv6 literal ${text}`)
    if (ip === '::') fail('[::] is not an interface address: use + (every host) or * (what nobody else takes)')
    return { host: `[${ip}]`, hostKind: 'ip', ip }
  }
  if (text.includes('*') || text.includes('+')) {
    fail('a wildcard (* or +) must be the whole host, not part of a host name')
  }
  if (/^[0-9.]+$/.test(text)) {
    if (!isIPv4(text)) fail(`bad IPv4 literal ${text} (four numbers 0-255, no leading zeros)`)
    if (text === '0.0.0.0') fail('0.0.0.0 is not an interface address: use + (every host) or * (what nobody else takes)')
    return { host: text, hostKind: 'ip', ip: text }
  }
  let name = text.toLowerCase()
  // eslint-disable-next-line no-control-regex
  if (/[^\u0000-\u007f]/.test(name)) {
    // Clients send international names in punycode; register what they will send.
    name = domainToASCII(name)
    if (name === '') fail(`bad host name ${JSON.stringify(text)}`)
  }
  if (name.length > 253) fail('the host name is longer than 253 characters')
  const labels = name.split('.')
  for (const label of labels) {
    if (label === '') fail(`bad host name ${JSON.stringify(text)}: empty label`)
    if (label.length > 63) fail('a host name label is longer than 63 characters')
    if (!/^[a-z0-9_-]+$/.test(label)) fail(`bad host name ${JSON.stringify(text)}: only letters, digits, - and _ are allowed`)
  }
  return { host: name, hostKind: 'explicit', ip: null }
}

const UNRESERVED = new Uint8Array(128)
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~') UNRESERVED[c.charCodeAt(0)] = 1
// RFC 3986 pchar minus pct-encoded, plus '/': what a prefix path may hold literally.
const PATH_CHAR = new Uint8Array(128)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/") PATH_CHAR[c.charCodeAt(0)] = 1

function parsePath (raw, fail) {
  let out = ''
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c === 37) {
      const v = hexByte(raw, i + 1)
      if (v === -1) fail('bad percent-encoding in the path (% must be followed by two hex digits)')
      out += v < 128 && UNRESERVED[v] ? String.fromCharCode(v) : '%' + raw.slice(i + 1, i + 3).toUpperCase()
      i += 2
    } else if (c === 92) {
      fail('a backslash is not allowed in the path (use /)')
    } else if (c < 128 && !PATH_CHAR[c]) {
      fail(`the character ${JSON.stringify(raw[i])} is not allowed in the path (percent-encode it)`)
    } else {
      out += raw[i]
    }
  }
  if (!out.endsWith('/')) out += '/'
  const segments = out.split('/')
  for (let i = 1; i < segments.length - 1; i++) {
    if (segments[i] === '') fail('empty path segment (//) in the path')
    if (segments[i] === '.' || segments[i] === '..') fail('dot segments (. or ..) are not allowed in the path')
  }
  try {
    encodeURI(out)
  } catch {
    fail('the path is not valid Unicode')
  }
  return out
}

function conflictKey (parsed) {
  return `${parsed.scheme} ${parsed.hostKind} ${hostKeyOf(parsed)} ${parsed.port} ${pathKey(parsed.path)}`
}

// Routing identity of a host: v4-mapped IPv6 and the IPv4 address reach the same socket.
function hostKeyOf ({ host, ip }) {
  return ip === null ? host : unmapped(ip)
}

// The matching form of a prefix path: lower case, non-ASCII as UTF-8 %xx (what clients send).
function pathKey (path) {
  let out = ''
  for (const ch of path) {
    out += ch.charCodeAt(0) < 128 ? ch.toLowerCase() : encodeURIComponent(ch).toLowerCase()
  }
  return out
}

// ---------------------------------------------------------------------------
// Request-side helpers (hot path)

// End of the path in a raw target when it needs no canonicalisation, else -1.
function fastPathEnd (p) {
  if (p.charCodeAt(0) !== 47) return -1
  const n = p.length
  for (let i = 1; i < n; i++) {
    const c = p.charCodeAt(i)
    if (c === 63 || c === 35) return i
    if (c === 37 || c === 92 || c > 126) return -1
    if (c === 46 && p.charCodeAt(i - 1) === 47) return -1
  }
  return n
}

/**
 * Canonicalise a raw target the way HTTP.SYS does before routing: drop the query, decode
 * %-encoded unreserved characters, turn \ into /, resolve dot segments without climbing
 * above /. Raw targets are byte strings (latin1, as node's parser delivers them), so a
 * char up to 0xff is one byte; larger chars were decoded by someone and become UTF-8.
 * @returns {{path: string, host: string|null} | null} null when the target is malformed
 */
function canonicalTarget (raw) {
  if (typeof raw !== 'string' || raw === '' || raw === '*') return { path: '/', host: null }
  let start = 0
  let host = null
  if (raw.charCodeAt(0) !== 47) {
    const m = /^https?:\/\//i.exec(raw)
    if (m === null) return null
    const authStart = m[0].length
    let authEnd = authStart
    while (authEnd < raw.length && !'/?#'.includes(raw[authEnd])) authEnd++
    host = raw.slice(authStart, authEnd)
    const at = host.lastIndexOf('@')
    if (at !== -1) host = host.slice(at + 1)
    start = authEnd
  }
  let out = '/'
  let i = raw.charCodeAt(start) === 47 ? start + 1 : start
  for (; i < raw.length; i++) {
    const c = raw.charCodeAt(i)
    if (c === 63 || c === 35) break
    if (c === 37) {
      const v = hexByte(raw, i + 1)
      if (v === -1) return null // HTTP.SYS never accepts a bare % in a path
      out += v < 128 && UNRESERVED[v] ? String.fromCharCode(v | (v >= 65 && v <= 90 ? 32 : 0)) : '%' + raw.slice(i + 1, i + 3).toLowerCase()
      i += 2
    } else if (c === 92) {
      out += '/'
    } else if (c < 128) {
      out += c >= 65 && c <= 90 ? String.fromCharCode(c | 32) : raw[i]
    } else if (c < 256) {
      out += '%' + c.toString(16).padStart(2, '0')
    } else {
      const cp = raw.codePointAt(i)
      if (cp > 0xffff) i++
      try {
        out += encodeURIComponent(String.fromCodePoint(cp)).toLowerCase()
      } catch {
        return null
      }
    }
  }
  return { path: removeDotSegments(out), host }
}

// RFC 3986 section 5.2.4 on an absolute path; '..' at the root stays at the root.
function removeDotSegments (path) {
  if (!path.includes('.')) return path
  const segments = path.split('/')
  const out = []
  const last = segments.length - 1
  for (let i = 1; i <= last; i++) {
    const s = segments[i]
    if (s === '.' || s === '..') {
      if (s === '..') out.pop()
      if (i === last) out.push('')
    } else {
      out.push(s)
    }
  }
  return '/' + out.join('/')
}

// ---------------------------------------------------------------------------
// The request target an app sees (README "The router's rules"): the path the router
// routed on, so an app's own path checks see what routing saw. The native router has its
// own (router/internal/route/target.go, the same rules); the HTTP.SYS worker uses this before
// src/http sees a request (src/queue/httpsys/attachment.js; HTTP.SYS routes on its
// cooked URL but hands over the raw one).

// RFC 3986 3.2.2 host and 3.2.3 port characters: what an authority may hold once
// userinfo is refused (the same set the hub's parser accepts in a Host header).
const AUTHORITY_CHAR = new Uint8Array(128)
for (const c of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+,;=:[]") AUTHORITY_CHAR[c.charCodeAt(0)] = 1

/**
 * Turns a request's target into what the app sees, in place: origin-form (RFC 9112
 * 3.2.1), its path canonicalised as routing canonicalises it (backslashes become
 * slashes, %-encoded unreserved characters are decoded, dot segments are resolved
 * without climbing above /), case and every other escape kept, the query untouched.
 * An absolute-form target (RFC 9112 3.2.2) also names the host: a server "MUST ignore
 * the received Host header field" and use the target's authority, so that authority
 * replaces the Host header. Cheap when there is nothing to do: an origin-form target
 * whose path has no '%', '\' or '/.' is returned as it is, with no allocation.
 * @param {{url: string, rawHeaders: string[]}} req changed in place (url, and the Host
 *   entries of rawHeaders for an absolute-form target)
 * @returns {string|null} null when the target is malformed (400 Invalid URL); the
 *   authority that became the Host; '' when the Host stays as sent
 */
function canonicalizeTarget (req) {
  const raw = req.url
  if (isCanonicalPath(raw) || raw === '*') return ''
  let start = 0
  let host = ''
  if (raw.charCodeAt(0) !== 47) {
    const m = /^https?:\/\//i.exec(raw)
    if (m === null) return null
    start = m[0].length
    while (start < raw.length && !isPathStart(raw.charCodeAt(start))) start++
    host = raw.slice(m[0].length, start)
    if (!isAuthority(host)) return null
  }
  let end = start
  while (end < raw.length && raw.charCodeAt(end) !== 63 && raw.charCodeAt(end) !== 35) end++
  let path = '/'
  for (let i = raw.charCodeAt(start) === 47 ? start + 1 : start; i < end; i++) {
    const c = raw.charCodeAt(i)
    if (c === 37) {
      const v = hexByte(raw, i + 1)
      if (v === -1) return null // HTTP.SYS never accepts a bare % in a path
      path += v < 128 && UNRESERVED[v] ? String.fromCharCode(v) : raw.slice(i, i + 3)
      i += 2
    } else {
      path += c === 92 ? '/' : raw[i]
    }
  }
  req.url = removeDotSegments(path) + raw.slice(end)
  if (host !== '') replaceHost(req.rawHeaders, host)
  return host
}

/**
 * A matcher for the paths a set of prefixes covers (HTTP.SYS's rule: case-insensitive,
 * on segment boundaries). For a router that routed a request on a URL of its own (the
 * HTTP.SYS worker): whether the target the app will see is still inside the queue's
 * prefixes, after canonicalizeTarget().
 * @param {string[]} prefixes
 * @returns {(target: string) => boolean} target: origin-form, the query allowed
 */
function prefixPathMatcher (prefixes) {
  const keys = []
  for (const u of prefixes) {
    try {
      keys.push(pathKey(parse(u).path))
    } catch {}
  }
  return (target) => {
    let end = target.indexOf('?')
    if (end === -1) end = target.length
    for (let i = 0; i < keys.length; i++) if (pathMatches(target, end, keys[i])) return true
    return keys.length === 0
  }
}

// An origin-form target that canonicalizeTarget() would give back unchanged.
function isCanonicalPath (p) {
  if (typeof p !== 'string' || p.charCodeAt(0) !== 47) return false
  const n = p.length
  for (let i = 1; i < n; i++) {
    const c = p.charCodeAt(i)
    if (c === 63 || c === 35) return true
    if (c === 37 || c === 92 || (c === 46 && p.charCodeAt(i - 1) === 47)) return false
  }
  return true
}

function isPathStart (c) {
  return c === 47 || c === 63 || c === 35
}

// A non-empty host[:port] (RFC 9110 4.2.1: an http URI with an empty host is invalid),
// without userinfo (RFC 9110 4.2.4: a recipient treats it as an error).
function isAuthority (a) {
  if (a === '' || a.charCodeAt(0) === 58) return false
  for (let i = 0; i < a.length; i++) {
    const c = a.charCodeAt(i)
    if (c >= 128 || AUTHORITY_CHAR[c] !== 1) return false
  }
  return true
}

// Every Host entry of rawHeaders becomes `host`; one is added when there was none
// (HTTP/1.0 needs no Host header).
function replaceHost (raw, host) {
  let found = false
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') {
      raw[i + 1] = host
      found = true
    }
  }
  if (!found) raw.push('Host', host)
}

function longestMatch (list, p, end) {
  for (let i = 0; i < list.length; i++) {
    if (pathMatches(p, end, list[i].pathKey)) return list[i]
  }
  return null
}

// Case-insensitive prefix test on segment boundaries: key '/api/' takes '/api/x' and '/api',
// never '/apix'. The key is lower case; p[0, end) is folded on the fly.
function pathMatches (p, end, key) {
  const len = key.length
  let n
  if (end >= len) n = len
  else if (end === len - 1) n = end
  else return false
  for (let i = n - 1; i > 0; i--) {
    let c = p.charCodeAt(i)
    if (c >= 65 && c <= 90) c |= 32
    if (c !== key.charCodeAt(i)) return false
  }
  return true
}

function cached (cache, raw, fn) {
  let v = cache.get(raw)
  if (v === undefined) {
    v = fn(raw)
    if (cache.size >= CACHE_MAX) cache.clear()
    cache.set(raw, v)
  }
  return v
}

// Host header -> the name explicit prefixes are keyed by (lower case, port dropped).
function hostnameOf (host) {
  const h = host.toLowerCase()
  if (h[0] === '[') {
    const close = h.indexOf(']')
    return close === -1 ? h : h.slice(0, close + 1)
  }
  const colon = h.indexOf(':')
  return colon === -1 ? h : h.slice(0, colon)
}

// A socket address -> the key IP-bound prefixes are indexed by; '' when not an address.
function addressKey (addr) {
  let a = addr[0] === '[' ? addr.slice(1, -1) : addr
  const zone = a.indexOf('%')
  if (zone !== -1) a = a.slice(0, zone)
  if (isIPv4(a)) return a
  const text = ipv6Text(a)
  return text === null ? '' : unmapped(text)
}

// ---------------------------------------------------------------------------
// IP literals

// WHATWG's IPv6 serialiser is RFC 5952 text (lower case, no leading zeros, the first
// longest run of zero groups as '::'), so the URL parser normalises literals for us.
function ipv6Text (text) {
  return isIPv6(text) && !text.includes('%') ? new URL(`http://[${text}]/`).hostname.slice(1, -1) : null
}

// '::ffff:7f00:1' -> '127.0.0.1': an IPv4-mapped address reaches the IPv4 socket.
function unmapped (text) {
  const m = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(text)
  if (m === null) return text
  const hi = parseInt(m[1], 16)
  const lo = parseInt(m[2], 16)
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`
}

function hexByte (s, i) {
  const hi = hexDigit(s.charCodeAt(i))
  const lo = hexDigit(s.charCodeAt(i + 1))
  return hi === -1 || lo === -1 ? -1 : (hi << 4) | lo
}

function hexDigit (c) {
  if (c >= 48 && c <= 57) return c - 48
  c |= 32
  if (c >= 97 && c <= 102) return c - 87
  return -1
}

function insertSorted (list, entry) {
  let i = 0
  while (i < list.length && list[i].pathKey.length >= entry.pathKey.length) i++
  list.splice(i, 0, entry)
}

module.exports = { parse, normalize, fromListen, RoutingTable, canonicalizeTarget, prefixPathMatcher, hostnameOf }
