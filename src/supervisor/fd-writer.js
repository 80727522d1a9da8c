'use strict'

// The supervisor's stdout: records gathered during a tick and written in one
// synchronous write (100k lines of one app are a few hundred writes, not 100k), and
// nothing left in a buffer when the supervisor ends with process.exit().
//
// Why not pino.destination({ sync: true }) (sonic-boom): when the reader of a pipe is
// slower than the apps (a pipe is full at 64 KiB), it sleeps 100 ms per EAGAIN, and the
// whole supervisor (the hub routing requests included) stops with it; 15 MB of output
// then takes 20 s instead of one. Here a full pipe is retried every millisecond: the
// supervisor still waits for its reader (records are never dropped), for as little as
// the reader needs.

const fs = require('node:fs')

const FLUSH_AT = 64 * 1024
const RETRY_MS = 1

class FdWriter {
  /** @param {number} fd */
  constructor (fd) {
    this.fd = fd
    this.pending = []
    this.pendingLength = 0
    this.scheduled = false
    this.broken = false
    this.flushBound = () => this.flushSync()
    this.sleeper = new Int32Array(new SharedArrayBuffer(4))
  }

  /** @param {string} line */
  write (line) {
    if (this.broken) return true
    this.pending.push(line)
    this.pendingLength += line.length
    if (this.pendingLength >= FLUSH_AT) {
      this.flushSync()
    } else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.flushBound)
    }
    return true
  }

  flushSync () {
    this.scheduled = false
    if (this.pending.length === 0 || this.broken) return
    let buf = Buffer.from(this.pending.join(''))
    this.pending = []
    this.pendingLength = 0
    while (buf.length > 0) {
      try {
        const n = fs.writeSync(this.fd, buf)
        buf = buf.subarray(n)
      } catch (err) {
        if (err.code === 'EAGAIN') {
          Atomics.wait(this.sleeper, 0, 0, RETRY_MS)
          continue
        }
        // EPIPE (the reader went away), EBADF (a closed terminal after SIGHUP): the
        // supervisor must still stop its apps; only these records are lost
        this.broken = true
        return
      }
    }
  }

  // pino calls these when present
  flush (cb) {
    this.flushSync()
    if (typeof cb === 'function') cb()
  }

  on () { return this }
}

module.exports = { FdWriter }
