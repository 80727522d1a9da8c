'use strict'

// node's 'clientError' for what the router of a server's own port could not parse
// (wire CONN_ERROR: the router's status and its parser's words), and node's own answer
// when no listener takes it (lib/_http_server.js socketOnError).

// llhttp's code for the router parser's reason (the closest one where the two parsers
// name things differently)
const HPE = [
  [/method/, 'HPE_INVALID_METHOD'],
  [/version/i, 'HPE_INVALID_VERSION'],
  [/request-target/, 'HPE_INVALID_URL'],
  [/several different Content-Length/, 'HPE_UNEXPECTED_CONTENT_LENGTH'],
  [/Content-Length/, 'HPE_INVALID_CONTENT_LENGTH'],
  [/Transfer-Encoding/, 'HPE_INVALID_TRANSFER_ENCODING'],
  [/chunk extensions too large/, 'HPE_CHUNK_EXTENSIONS_OVERFLOW'],
  [/chunk/, 'HPE_INVALID_CHUNK_SIZE'],
  [/bare CR/, 'HPE_LF_EXPECTED'],
  [/header name|header value|Host|malformed line|colon|line folding/, 'HPE_INVALID_HEADER_TOKEN']
]

const BAD_REQUEST = Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', 'latin1')
const ANSWERS = {
  HPE_HEADER_OVERFLOW: Buffer.from('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n', 'latin1'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: Buffer.from('HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n', 'latin1'),
  ERR_HTTP_REQUEST_TIMEOUT: Buffer.from('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n', 'latin1')
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
  let code = 'HPE_INVALID_CONSTANT'
  if (status === 431) code = 'HPE_HEADER_OVERFLOW'
  else for (const [re, c] of HPE) if (re.test(why)) { code = c; break }
  const err = new Error(`Parse Error: ${why}`)
  err.code = code
  err.reason = why
  err.bytesParsed = 0
  // (node's: the bytes it was parsing when it failed)
  err.rawPacket = raw !== null && raw !== undefined && raw.length > 0 ? raw : undefined
  return err
}

/** What node writes for a 'clientError' no listener took, by the error's code. */
function nodeClientError (code) {
  return ANSWERS[code] || BAD_REQUEST
}

module.exports = { clientErrorOf, nodeClientError }
