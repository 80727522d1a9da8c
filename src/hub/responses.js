'use strict'

// The bytes the hub writes to clients: the head of a worker's response (status line +
// the worker's header block + connection management), and the small pages the hub
// answers itself, worded like HTTP.SYS's ("Bad Request - Invalid Hostname", ...).
// https://learn.microsoft.com/troubleshoot/developer/webapps/iis/iisadmin-service-inetinfo/httpsys-registry-windows

const { STATUS_CODES } = require('node:http')
const clock = require('./clock')

const HTTP11 = Buffer.from('HTTP/1.1 ', 'latin1')
const CONN_CLOSE = Buffer.from('Connection: close\r\n', 'latin1')
const CONN_KEEP_ALIVE = Buffer.from('Connection: keep-alive\r\n', 'latin1')
const CONTINUE = Buffer.from('HTTP/1.1 100 Continue\r\n\r\n', 'latin1')
// node's answer to a request head that did not arrive within headersTimeout
const REQUEST_TIMEOUT = Buffer.from('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n', 'latin1')
// node's own answers to a request it could not parse (lib/_http_server.js socketOnError)
const NODE_CLIENT_ERROR = {
  HPE_HEADER_OVERFLOW: Buffer.from('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n', 'latin1'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: Buffer.from('HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n', 'latin1'),
  ERR_HTTP_REQUEST_TIMEOUT: REQUEST_TIMEOUT
}
const NODE_BAD_REQUEST = Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', 'latin1')

/** What node writes for a 'clientError' no listener took, by the error's code. */
function nodeClientError (code) {
  return NODE_CLIENT_ERROR[code] || NODE_BAD_REQUEST
}
// Header names (lower case, with the colon) the hub drops when its close wins.
const CONNECTION = Buffer.from('connection:', 'latin1')
const KEEP_ALIVE = Buffer.from('keep-alive:', 'latin1')

// Which connection header the hub adds. Normally the worker's own Connection header
// wins and the hub adds none; when the hub closes the connection anyway (the client
// asked, HTTP/1.0, the hub is closing) its decision wins: ADD_REPLACE_CLOSE drops the
// worker's Connection and Keep-Alive lines, so no client reads "keep-alive" and then
// sees the connection close.
const ADD_NONE = 0
const ADD_CLOSE = 1
const ADD_KEEP_ALIVE = 2
const ADD_REPLACE_CLOSE = 3
// The Connection line of each, in a head the hub writes from text (its own pages, the
// output cache's answers)
const CONNECTION_LINES = ['', 'Connection: close\r\n', 'Connection: keep-alive\r\n', 'Connection: close\r\n']

/**
 * Builds the head the client gets for a RESPONSE frame (checked by
 * protocol.checkResponse): status line, the worker's header block, the hub's Connection
 * header and the blank line, followed by the body bytes b[bodyStart, copyEnd) when the
 * caller wants a small body in the same buffer (one write). A large body is not copied:
 * the caller writes it from the frame after this head.
 * @param {Buffer} b frame buffer; payload from p
 * @param {number} bodyStart where the body starts in b
 * @param {number} copyEnd bodyStart (no body here) up to the frame's end
 * @param {number} add ADD_NONE | ADD_CLOSE | ADD_KEEP_ALIVE | ADD_REPLACE_CLOSE
 * @returns {Buffer}
 */
function fromFrame (b, p, bodyStart, copyEnd, add) {
  const status = b.readUInt16LE(p)
  const rlen = b.readUInt16LE(p + 8)
  const rs = p + 10
  const bs = rs + rlen + 4
  const bl = bodyStart - bs
  const conn = add === ADD_KEEP_ALIVE ? CONN_KEEP_ALIVE : add === ADD_NONE ? null : CONN_CLOSE
  const bodyLen = copyEnd - bodyStart
  const total = 9 + 4 + rlen + 2 + bl + (conn === null ? 0 : conn.length) + 2 + bodyLen
  const out = Buffer.allocUnsafe(total)
  HTTP11.copy(out, 0)
  out[9] = 48 + ((status / 100) | 0) % 10
  out[10] = 48 + ((status / 10) | 0) % 10
  out[11] = 48 + status % 10
  out[12] = 32
  let o = 13
  if (rlen > 0) o += b.copy(out, o, rs, rs + rlen)
  out[o] = 13
  out[o + 1] = 10
  o += 2
  if (add === ADD_REPLACE_CLOSE) o = copyWithoutConnection(b, bs, bodyStart, out, o)
  else if (bl > 0) o += b.copy(out, o, bs, bodyStart)
  if (conn !== null) o += conn.copy(out, o)
  out[o] = 13
  out[o + 1] = 10
  o += 2
  if (bodyLen > 0) o += b.copy(out, o, bodyStart, copyEnd)
  return o === total ? out : out.subarray(0, o)
}

// Copies the header lines of b[start, end) (each ends in CRLF) except Connection and
// Keep-Alive; returns the new write offset.
function copyWithoutConnection (b, start, end, out, o) {
  let ls = start
  while (ls < end) {
    let le = b.indexOf(10, ls) + 1
    if (le <= 0 || le > end) le = end
    if (!isNamed(b, ls, le, CONNECTION) && !isNamed(b, ls, le, KEEP_ALIVE)) o += b.copy(out, o, ls, le)
    ls = le
  }
  return o
}

// Whether the line b[ls, le) starts with `name` (lower case, colon included), ignoring case.
function isNamed (b, ls, le, name) {
  const n = name.length
  if (le - ls < n) return false
  for (let i = 0; i < n; i++) {
    let c = b[ls + i]
    if (c >= 65 && c <= 90) c |= 32
    if (c !== name[i]) return false
  }
  return true
}

const PAGES = {
  400: 'The request is badly formed.',
  404: 'The requested resource is not found.',
  408: 'The request timed out.',
  413: 'The request body is too large.',
  421: 'The request was sent on a connection made for another host: send it on a connection of its own.',
  431: 'The request header fields are too large.',
  308: 'The resource is served over https at the address in the Location header.',
  501: 'The server does not support the feature the response needed.',
  502: 'The application handling this request went away before it answered.',
  503: 'The service is unavailable.',
  505: 'The HTTP version is not supported.'
}

// Variants of a status with their own title and text.
const VARIANTS = {
  hostname: { status: 400, title: 'Bad Request - Invalid Hostname', text: 'The request hostname is invalid.' },
  url: { status: 400, title: 'Bad Request - Invalid URL', text: 'The request URL is invalid.' },
  queueFull: { status: 503, title: 'Service Unavailable', text: 'The request queue is full; try again shortly.' },
  queueTimeout: { status: 503, title: 'Service Unavailable', text: 'No application instance took the request in time; try again shortly.' },
  noQueue: { status: 503, title: 'Service Unavailable', text: 'The service is shutting down or was removed.' },
  appDown: { status: 503, title: 'Service Unavailable', text: 'The application is not running: it failed to start, or ended, and nothing restarts it.' },
  opaque: { status: 501, title: 'Not Implemented', text: 'A 101 (Switching Protocols) answers only an HTTP/1.1 request that asked to upgrade.' }
}

const pageCache = new Map()

function page (status, variant) {
  const key = variant || status
  let p = pageCache.get(key)
  if (p === undefined) {
    const v = variant ? VARIANTS[variant] : null
    const reason = STATUS_CODES[status] || 'Unknown'
    const title = v ? v.title : reason
    const text = v ? v.text : (PAGES[status] || reason + '.')
    const html = '<!DOCTYPE html>\r\n<html><head><title>' + title + '</title>\r\n' +
      '<meta http-equiv="Content-Type" content="text/html; charset=us-ascii"></head>\r\n' +
      '<body><h2>' + title + '</h2>\r\n<hr><p>HTTP Error ' + status + '. ' + text + '</p>\r\n</body></html>\r\n'
    p = { reason, body: Buffer.from(html, 'latin1') }
    pageCache.set(key, p)
  }
  return p
}

/**
 * A response the hub answers itself.
 * @param {number} status
 * @param {string|null} variant a key of VARIANTS, or null
 * @param {boolean} dropBody the request was HEAD
 * @param {number} add ADD_NONE | ADD_CLOSE | ADD_KEEP_ALIVE
 * @param {string} [extra] more header lines, each ending in CRLF (a redirect's Location)
 * @returns {Buffer}
 */
function local (status, variant, dropBody, add, extra = '') {
  const p = page(status, variant)
  let head = 'HTTP/1.1 ' + status + ' ' + p.reason + '\r\n' +
    'Content-Type: text/html; charset=us-ascii\r\n' +
    'Server: httpsys\r\n' +
    'Date: ' + clock.date() + '\r\n' +
    'Content-Length: ' + p.body.length + '\r\n'
  if (status === 503) head += 'Retry-After: 1\r\n'
  head += extra + CONNECTION_LINES[add] + '\r\n'
  const h = Buffer.from(head, 'latin1')
  return dropBody ? h : Buffer.concat([h, p.body], h.length + p.body.length)
}

/**
 * An interim response's bytes from an INFO payload (protocol.checkInfo passed):
 * "HTTP/1.1 103 Early Hints\r\n" + the worker's header block + "\r\n".
 */
function interim (b, p, end) {
  const status = b.readUInt16LE(p)
  const rlen = b.readUInt16LE(p + 8)
  const reason = rlen > 0 ? b.latin1Slice(p + 10, p + 10 + rlen) : (require('node:http').STATUS_CODES[status] || 'Interim')
  const bs = p + 14 + rlen
  const line = Buffer.from(`HTTP/1.1 ${status} ${reason}\r\n`, 'latin1')
  return Buffer.concat([line, b.subarray(bs, end), CRLF])
}

const CRLF = Buffer.from('\r\n', 'latin1')

module.exports = { interim, fromFrame, local, page, nodeClientError, CONTINUE, REQUEST_TIMEOUT, ADD_NONE, ADD_CLOSE, ADD_KEEP_ALIVE, ADD_REPLACE_CLOSE, CONNECTION_LINES }
