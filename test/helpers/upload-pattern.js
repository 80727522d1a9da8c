'use strict'

// Upload bodies no two requests share a byte-run of: every 8 bytes at word k of the
// request tagged t (a u32 naming the client and its request) are t and k, big-endian.
// A byte of one client's body that reaches another's request, or a block written over
// before its bytes went out (router/internal/wire/block.go), shows as a word that names
// another tag or another offset.

/** The bytes at [offset, offset + len) of tag's body. */
function pattern (tag, offset, len) {
  const first = Math.floor(offset / 8)
  const last = Math.ceil((offset + len) / 8)
  const words = Buffer.allocUnsafe((last - first) * 8)
  for (let k = first, p = 0; k < last; k++, p += 8) {
    words.writeUInt32BE(tag >>> 0, p)
    words.writeUInt32BE(k >>> 0, p + 4)
  }
  const skip = offset - first * 8
  return words.subarray(skip, skip + len)
}

/** The first index of chunk (tag's bytes from offset) that is not the pattern, or -1. */
function firstBad (tag, offset, chunk) {
  const want = pattern(tag, offset, chunk.length)
  if (want.equals(chunk)) return -1
  for (let i = 0; i < chunk.length; i++) if (chunk[i] !== want[i]) return i
  return -1
}

module.exports = { pattern, firstBad }
