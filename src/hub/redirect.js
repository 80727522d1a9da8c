'use strict'

// An app's `redirect_http` (README "HTTPS and HTTP/2"): plain http requests for the
// app's hosts and paths, on the port it names, answered by the hub with a redirect to
// the same URL over https. It is a routing target like a queue (the same prefixes,
// host categories and path rules), so it never shadows another app's http prefixes
// and a request for another host or path is routed as it would be without it.
//
// 308 Permanent Redirect, not 301: a 301 lets clients turn a POST into a GET (RFC 9110
// 15.4.2), so a form posted to http:// would lose its body; 308 keeps the method and
// body (RFC 9110 15.4.9), and every current browser and HTTP client follows it.

class Redirect {
  /**
   * @param {string} app the app it redirects to
   * @param {number} httpsPort where the app's https prefix listens
   */
  constructor (app, httpsPort) {
    this.name = `${app} (redirect_http)`
    this.app = app
    this.httpsPort = httpsPort
    this.redirect = this
    this.deleted = false
  }

  /**
   * @param {object} head the request head (canonical url, host)
   * @param {string} localAddress where the connection arrived (no Host: HTTP/1.0)
   * @returns {string} the Location header line
   */
  location (head, localAddress) {
    let host = hostOnly(head.host)
    if (host === '') host = localAddress.includes(':') ? `[${localAddress}]` : localAddress
    const port = this.httpsPort === 443 ? '' : `:${this.httpsPort}`
    const url = head.url.charCodeAt(0) === 47 ? head.url : '/'
    return `Location: https://${host}${port}${url}\r\n`
  }
}

/** The host of a Host value, without its port ("[::1]:80" -> "[::1]"). */
function hostOnly (host) {
  if (typeof host !== 'string' || host === '') return ''
  if (host[0] === '[') {
    const end = host.indexOf(']')
    return end === -1 ? host : host.slice(0, end + 1)
  }
  const colon = host.indexOf(':')
  return colon === -1 ? host : host.slice(0, colon)
}

module.exports = { Redirect, hostOnly }
