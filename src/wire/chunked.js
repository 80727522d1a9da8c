'use strict'

// HTTP/1.1 chunked framing (RFC 9112 7.1) taken off a whole body a worker framed
// (src/http frames; routers never do): for the hub's output cache, which stores bodies
// bare, and for HTTP.SYS sends that must go as one piece (Wine, and cacheable ones).

const CRLF = Buffer.from('\r\n', 'latin1')

/**
 * @param {Buffer} buf a complete chunked body, last chunk and final CRLF included
 * @param {{ trailers: boolean }} [out] set to whether the body carried trailer fields
 * @returns {Buffer|null} the body without its framing; null when buf is not a whole,
 *   well-formed chunked body
 */
function unchunk (buf, out = null) {
  const parts = []
  let bytes = 0
  let p = 0
  for (;;) {
    const eol = buf.indexOf(CRLF, p)
    if (eol === -1) return null
    // chunk extensions after ';' are ignored (looked for in this line only: a search
    // of the whole rest per chunk would make a body of many chunks quadratic)
    const semi = buf.subarray(p, eol).indexOf(59)
    const sizeText = buf.latin1Slice(p, semi === -1 ? eol : p + semi).trim()
    if (!/^[0-9a-fA-F]{1,12}$/.test(sizeText)) return null
    const size = parseInt(sizeText, 16)
    if (size === 0) {
      // the trailer section: fields up to an empty line
      const rest = buf.subarray(eol + 2)
      if (out !== null) out.trailers = rest.length > 2
      if (rest.length < 2 || rest[rest.length - 2] !== 13 || rest[rest.length - 1] !== 10) return null
      if (rest.length > 2 && rest.indexOf('\r\n\r\n', 0, 'latin1') !== rest.length - 4) return null
      break
    }
    const start = eol + 2
    const end = start + size
    if (end + 2 > buf.length || buf[end] !== 13 || buf[end + 1] !== 10) return null
    parts.push(buf.subarray(start, end))
    bytes += size
    p = end + 2
  }
  return parts.length === 1 ? parts[0] : Buffer.concat(parts, bytes)
}

module.exports = { unchunk }
