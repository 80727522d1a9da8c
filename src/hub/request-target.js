'use strict'

// Why routing refused a request: HTTP.SYS answers a target it cannot canonicalise with
// "400 Bad Request - Invalid URL" before it looks at the host, and a host nobody
// registered with "400 Bad Request - Invalid Hostname". The routing table only says
// 400, so this cold-path check (it runs only after a 400) tells the two apart, by the
// same rules the table canonicalises with (src/urlprefix.js): an origin-form or
// http(s) absolute-form target whose path has no bare or malformed percent escape.
// https://learn.microsoft.com/troubleshoot/developer/webapps/iis/iisadmin-service-inetinfo/httpsys-registry-windows
//
// isValidHostPort() is the Host port rule, shared by the HTTP/1.1 parser (Host, and an
// absolute-form target's authority) and h2 (:authority): HTTP.SYS refuses a Host whose
// port is not digits, and the app and the output cache both see the Host's port, so
// `Host: a:'onmouseover=...` must never reach an app whose page reflects its Host
// (issue 23; docs/output-cache.md "Keys").

const ABSOLUTE = /^https?:\/\//i

/**
 * @param {string} target the raw request target (path + query, undecoded)
 * @returns {boolean} true when HTTP.SYS would call it an invalid URL
 */
function isInvalidUrl (target) {
  if (typeof target !== 'string') return true
  if (target === '' || target === '*') return false
  let i = 0
  if (target.charCodeAt(0) !== 47) { // not '/'
    const m = ABSOLUTE.exec(target)
    if (m === null) return true
    i = m[0].length
    while (i < target.length && !isPathStart(target.charCodeAt(i))) i++
  }
  for (; i < target.length; i++) {
    const c = target.charCodeAt(i)
    if (c === 63 || c === 35) return false // '?' or '#': the query is the app's business
    if (c === 37 && !(isHex(target.charCodeAt(i + 1)) && isHex(target.charCodeAt(i + 2)))) return true
  }
  return false
}

/**
 * RFC 3986 3.2.3 (port = *DIGIT): whether a Host value (or an authority) has no port, or
 * a port of digits only. An IP literal's port follows its "]"; nothing else may.
 * @param {string} host
 * @returns {boolean}
 */
function isValidHostPort (host) {
  let i
  if (host.charCodeAt(0) === 91) { // '['
    i = host.indexOf(']') + 1
    if (i === 0) return false
    if (i === host.length) return true
    if (host.charCodeAt(i) !== 58) return false // ':'
  } else {
    i = host.indexOf(':')
    if (i === -1) return true
  }
  for (i++; i < host.length; i++) {
    const c = host.charCodeAt(i)
    if (c < 48 || c > 57) return false
  }
  return true
}

function isPathStart (c) {
  return c === 47 || c === 63 || c === 35
}

function isHex (c) {
  return (c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 102)
}

module.exports = { isInvalidUrl, isValidHostPort }
