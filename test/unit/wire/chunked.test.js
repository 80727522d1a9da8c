'use strict'

// unchunk: the chunked framing src/http writes, taken off a whole body (the hub's output
// cache stores bodies bare; Wine and cacheable HTTP.SYS responses go as one piece).

const { unchunk } = require('../../../src/wire/chunked')

const b = (s) => Buffer.from(s, 'latin1')

test.each([
  ['one chunk', 'c\r\nhello world\n\r\n0\r\n\r\n', 'hello world\n'],
  ['several chunks, upper-case hex and extensions', '3;x=1\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n', 'abc0123456789'],
  ['an empty body', '0\r\n\r\n', '']
])('%s', (what, framed, bare) => {
  const seen = { trailers: null }
  expect(unchunk(b(framed), seen).toString('latin1')).toBe(bare)
  expect(seen.trailers).toBe(false)
})

test('trailers are dropped and reported', () => {
  const seen = { trailers: null }
  expect(unchunk(b('3\r\nabc\r\n0\r\nX-Checksum: 1\r\nX-More: 2\r\n\r\n'), seen).toString()).toBe('abc')
  expect(seen.trailers).toBe(true)
})

test.each([
  ['a chunk longer than its size', '3\r\nabcd\r\n0\r\n\r\n'],
  ['no last chunk', '3\r\nabc\r\n'],
  ['a size that is not hex', 'zz\r\nab\r\n0\r\n\r\n'],
  ['a size line without CRLF', '3'],
  ['no final CRLF', '3\r\nabc\r\n0\r\n'],
  ['bytes after the trailer section', '0\r\n\r\nextra'],
  ['a size too large to be real', 'fffffffffffffff\r\n']
])('%s is not a whole chunked body: null', (what, framed) => {
  expect(unchunk(b(framed))).toBe(null)
})
