'use strict'

// Response body pieces as they go to the backend: as the app wrote them, or in chunked
// framing (RFC 9112 7.1), which src/http writes itself because routers never frame
// (contract.js, sendBody). Strings stay strings (the backend encodes them as utf8)
// so that the common all-string case costs no Buffer copies.

function byteLength (parts) {
  if (parts === null) return 0
  let n = 0
  for (let i = 0; i < parts.length; i++) {
    const p = parts[i]
    n += typeof p === 'string' ? Buffer.byteLength(p) : p.length
  }
  return n
}

const CRLF = '\r\n'

/**
 * One backend piece from the pending chunks: as given, or in chunked framing (RFC 9112
 * 7.1) with the last-chunk and trailers when `trailer` is a string.
 * @returns {string|Buffer|Uint8Array|null}
 */
function frame (parts, chunked, trailer) {
  if (!chunked) {
    if (parts === null) return null
    if (parts.length === 1) return parts[0]
    return join(parts)
  }
  let allStrings = true
  if (parts !== null) {
    for (let i = 0; i < parts.length; i++) if (typeof parts[i] !== 'string') allStrings = false
  }
  const end = trailer === null ? '' : '0\r\n' + trailer + CRLF
  if (allStrings) {
    let s = ''
    if (parts !== null) {
      for (let i = 0; i < parts.length; i++) {
        const p = parts[i]
        if (p.length > 0) s += Buffer.byteLength(p).toString(16) + CRLF + p + CRLF
      }
    }
    s += end
    return s === '' ? null : s
  }
  const list = []
  for (let i = 0; i < parts.length; i++) {
    const p = typeof parts[i] === 'string' ? Buffer.from(parts[i]) : parts[i]
    if (p.length === 0) continue
    list.push(Buffer.from(p.length.toString(16) + CRLF, 'latin1'), p, CRLF_BUF)
  }
  if (end !== '') list.push(Buffer.from(end, 'latin1'))
  return list.length === 0 ? null : Buffer.concat(list)
}

const CRLF_BUF = Buffer.from(CRLF, 'latin1')

function join (parts) {
  let allStrings = true
  for (let i = 0; i < parts.length; i++) if (typeof parts[i] !== 'string') allStrings = false
  if (allStrings) return parts.join('')
  const list = new Array(parts.length)
  for (let i = 0; i < parts.length; i++) list[i] = typeof parts[i] === 'string' ? Buffer.from(parts[i]) : parts[i]
  return Buffer.concat(list)
}

module.exports = { frame, byteLength }
