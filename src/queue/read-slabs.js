'use strict'

// Where the worker's socket to the router reads into (net.connect's `onread`), instead of
// the 64 KiB buffer node allocates for every read.
//
// Each read goes into the free tail of a slab, and the bytes it brings are handed on as a
// view of it: no slab region is written twice, so what the frame reader holds (a frame
// split across reads) and the body chunks the app is given stay valid. A read may fill
// the whole tail: during an upload the router has hundreds of KiB queued for the worker
// (its send buffer to the worker is 1 MiB, the body grants 512 KiB), so a 1 MB body
// arrives in a few reads, not 16 of 64 KiB, each with its syscall, its turn of the event
// loop and (node's own read path) an allocation, a copy into a buffer of the read's size
// and garbage (bench/results/router-profile.md, "The worker's reads").
//
// A body chunk the app keeps keeps its whole slab alive, as a chunk node reads keeps its
// read's buffer (up to 64 KiB) alive. So that a kept small body cannot hold a slab, body
// chunks under COPY_BELOW are copied out (own()): a kept chunk holds at most
// SLAB_SIZE / COPY_BELOW times its size. The router's BODY frames of an upload are 32 KiB.

const SLAB_SIZE = 256 * 1024
// a slab whose tail is shorter is left for a new one (at most this much of each unused)
const MIN_READ = 16 * 1024
const COPY_BELOW = 16 * 1024

class ReadSlabs {
  constructor (slabSize = SLAB_SIZE, minRead = MIN_READ) {
    this.slabSize = slabSize
    this.minRead = minRead
    this.slab = null
    this.pos = 0
  }

  /** The buffer the next read fills: the current slab's tail, or a new slab. */
  next () {
    if (this.slab === null || this.slab.length - this.pos < this.minRead) {
      this.slab = Buffer.allocUnsafeSlow(this.slabSize)
      this.pos = 0
    }
    return this.slab.subarray(this.pos)
  }

  /**
   * The n bytes a read brought into buf (the last next()'s), as a view that stays
   * valid: the slab's next read starts after them.
   */
  take (n, buf) {
    this.pos += n
    return buf.subarray(0, n)
  }
}

/** A body chunk read into a slab, as the app gets it: a small one copied (see above). */
function own (chunk) {
  return chunk.length < COPY_BELOW ? Buffer.from(chunk) : chunk
}

module.exports = { ReadSlabs, own, SLAB_SIZE, MIN_READ, COPY_BELOW }
