'use strict'

const http = require('node:http')

// node's 'clientError' for what the router of a server's own port could not parse
// (wire CONN_ERROR: the router's status and its parser's words), and node's own answer
// when no listener takes it (lib/_http_server.js socketOnError).

// llhttp's code and message for each of the router parser's reasons
// (router/internal/parse): what node's err.code and err.message say for the same bytes
// (err.message is 'Parse Error: ' and the message). Where the two parsers cut the
// cases differently, llhttp's words for the commonest of them.
const INVALID_URL = ['HPE_INVALID_URL', 'Invalid characters in url']
const HEADER_TOKEN = ['HPE_INVALID_HEADER_TOKEN', 'Invalid header token']
const LF_AFTER_VALUE = ['HPE_LF_EXPECTED', 'Missing expected LF after header value']
const BAD_TE = ['HPE_INVALID_TRANSFER_ENCODING', 'Request has invalid `Transfer-Encoding`']
const VERSION = ['HPE_INVALID_VERSION', 'Invalid HTTP version']
const BY_REASON = new Map([
  ['invalid character in request-target', ['HPE_INVALID_URL', 'Invalid char in url path']],
  ['request-target is neither origin-form nor absolute-form', INVALID_URL],
  ['asterisk-form request-target outside OPTIONS', INVALID_URL],
  ['empty request-target', INVALID_URL],
  ['invalid port in the request-target', INVALID_URL],
  ['missing HTTP version', VERSION],
  ['invalid HTTP version', VERSION],
  ['HTTP version not supported', VERSION],
  // llhttp refuses the second of the two headers, named after it
  ['both Content-Length and Transfer-Encoding, Transfer-Encoding last', ['HPE_INVALID_TRANSFER_ENCODING', 'Transfer-Encoding can\'t be present with Content-Length']],
  ['both Content-Length and Transfer-Encoding, Content-Length last', ['HPE_INVALID_CONTENT_LENGTH', 'Content-Length can\'t be present with Transfer-Encoding']],
  ['Transfer-Encoding whose final coding is not chunked', BAD_TE],
  ['Transfer-Encoding in an HTTP/1.0 request', BAD_TE],
  ['several different Content-Length values', ['HPE_UNEXPECTED_CONTENT_LENGTH', 'Duplicate Content-Length']],
  ['invalid Content-Length', ['HPE_INVALID_CONTENT_LENGTH', 'Invalid character in Content-Length']],
  ['empty Content-Length', ['HPE_INVALID_CONTENT_LENGTH', 'Empty Content-Length']],
  ['Content-Length above the body size limit', ['HPE_INVALID_CONTENT_LENGTH', 'Content-Length overflow']],
  ['invalid character in header name', HEADER_TOKEN],
  ['whitespace before the colon of a header', HEADER_TOKEN],
  ['empty header name', HEADER_TOKEN],
  ['malformed line', HEADER_TOKEN],
  ['invalid character in header value', ['HPE_INVALID_HEADER_TOKEN', 'Invalid header value char']],
  ['obsolete line folding', ['HPE_INVALID_HEADER_TOKEN', 'Unexpected whitespace after header value']],
  ['bare CR in header value', LF_AFTER_VALUE],
  ['bare CR in the header section', LF_AFTER_VALUE],
  ['bare CR in the trailer section', LF_AFTER_VALUE],
  ['invalid chunk size', ['HPE_INVALID_CHUNK_SIZE', 'Invalid character in chunk size']],
  ['chunk size too large', ['HPE_INVALID_CHUNK_SIZE', 'Chunk size overflow']],
  ['invalid chunk extension', ['HPE_STRICT', 'Invalid character in chunk extensions']],
  ['bare CR in chunk size line', ['HPE_STRICT', 'Expected LF after chunk size']],
  ['missing CRLF after chunk data', ['HPE_STRICT', 'Expected LF after chunk data']],
  ['chunk extensions too large', ['HPE_CHUNK_EXTENSIONS_OVERFLOW', 'Chunk extensions overflow']],
  // the client's FIN inside a request: node's parser.finish() error has no words
  ['connection closed before the request was complete', ['HPE_INVALID_EOF_STATE', null]]
])
// what the router refuses and node would not (several Host values, ...): the router's words
const FALLBACK = [
  [/Host/, 'HPE_INVALID_HEADER_TOKEN'],
  [/chunk/, 'HPE_INVALID_CHUNK_SIZE']
]
// the router's reasons for a request line whose method llhttp refuses
const METHOD_REASONS = new Set(['unknown method', 'invalid method', 'bare CR before the request line'])
// llhttp matches a request's method against its whole table: node's http.METHODS, PRI
// (the HTTP/2 preface) and RTSP's methods; a token is refused at the first byte that no
// entry continues (err.bytesParsed)
const LLHTTP_METHODS = [...http.METHODS, 'PRI', 'DESCRIBE', 'ANNOUNCE', 'SETUP', 'PLAY', 'PAUSE', 'TEARDOWN',
  'GET_PARAMETER', 'SET_PARAMETER', 'REDIRECT', 'RECORD', 'FLUSH']

const BAD_REQUEST = Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', 'latin1')
const ANSWERS = {
  HPE_HEADER_OVERFLOW: Buffer.from('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n', 'latin1'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: Buffer.from('HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n', 'latin1'),
  ERR_HTTP_REQUEST_TIMEOUT: Buffer.from('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n', 'latin1')
}

/**
 * Where llhttp refuses the method of the request line at the start of raw, and why.
 * @param {Buffer} raw
 * @returns {{at: number, message: string}}
 */
function methodError (raw) {
  let at = 0
  while (at < raw.length && (raw[at] === 13 || raw[at] === 10)) at++
  const start = at
  let candidates = LLHTTP_METHODS
  while (at < raw.length) {
    const k = at - start
    const c = String.fromCharCode(raw[at])
    const next = candidates.filter((m) => m.length > k && m[k] === c)
    if (next.length === 0) break
    candidates = next
    at++
  }
  // a whole method read (GET in "GETX"): llhttp wants the space after it there
  const whole = at > start && candidates.includes(raw.latin1Slice(start, at))
  return { at, message: whole ? 'Expected space after method' : 'Invalid method encountered' }
}

/**
 * The error node's server gives 'clientError'.
 * @param {{status: number, reason: string, raw: Buffer}} e status 408: the head did not
 *   come within headersTimeout
 * @returns {Error}
 */
function clientErrorOf ({ status, reason, raw }) {
  if (status === 408) {
    const t = new Error('Request timeout')
    t.code = 'ERR_HTTP_REQUEST_TIMEOUT'
    return t
  }
  const why = reason || 'malformed request'
  const bytes = raw !== null && raw !== undefined && raw.length > 0 ? raw : undefined
  let code = 'HPE_INVALID_CONSTANT'
  let message = why
  // (node's: how far into the bytes it was parsing its parser failed; here known for
  // the method only, else 0)
  let bytesParsed = 0
  if (status === 431) {
    code = 'HPE_HEADER_OVERFLOW'
    message = 'Header overflow'
  } else if (METHOD_REASONS.has(why)) {
    code = 'HPE_INVALID_METHOD'
    const m = methodError(bytes || Buffer.alloc(0))
    bytesParsed = m.at
    message = m.message
  } else if (BY_REASON.has(why)) {
    [code, message] = BY_REASON.get(why)
  } else {
    for (const [re, c] of FALLBACK) if (re.test(why)) { code = c; break }
  }
  const err = new Error(message === null ? 'Parse Error' : `Parse Error: ${message}`)
  err.code = code
  err.reason = why
  err.bytesParsed = bytesParsed
  // (node's: the bytes it was parsing when it failed)
  err.rawPacket = bytes
  return err
}

/** What node writes for a 'clientError' no listener took, by the error's code. */
function nodeClientError (code) {
  return ANSWERS[code] || BAD_REQUEST
}

module.exports = { clientErrorOf, nodeClientError }
