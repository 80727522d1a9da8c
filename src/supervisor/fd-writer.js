'use strict'

// The supervisor's stdout: records gathered during a tick and written in one
// synchronous write (100k lines of one app are a few hundred writes, not 100k).
//
// The supervisor hosts the router, so a reader that stops (`httpsys start | less`
// left on a page, a stalled pipe) must not stop it. A full pipe is never waited for:
// what it does not take is kept and retried on a timer while the event loop goes on.
// Past maxBacklog bytes kept, records are dropped (and counted) once the reader has
// taken nothing for stallMs, or past maxMemory in any case; one record says how many
// once the reader has caught up. A reader that is merely slower than a burst (a 100k
// line flood into a pipe) loses nothing. (sonic-boom, pino.destination({ sync: true }),
// sleeps 100 ms per EAGAIN instead and the whole supervisor with it.)
//
// A pipe or socket on stdout is only non-blocking once node has opened it as
// process.stdout (libuv sets O_NONBLOCK); without that a write to a full pipe blocks in
// the kernel, so the writer opens it. A terminal stays blocking: node would leave it
// non-blocking for the shell after us.
//
// At exit (process.exit() after stopping the apps) what is kept is written with a
// bounded synchronous wait: the last records survive a slow reader, not a stopped one.

const fs = require('node:fs')

const FLUSH_AT = 64 * 1024
const MAX_BACKLOG = 8 * 1024 * 1024
const MAX_MEMORY = 64 * 1024 * 1024
const STALL_MS = 1000
const RETRY_MIN_MS = 1
const RETRY_MAX_MS = 50
const EXIT_FLUSH_MS = 1000
const WRITEV_MAX = 64

// writers holding records not written yet, flushed when the process exits
const unflushed = new Set()
let exitHookInstalled = false

class FdWriter {
  /**
   * @param {number} fd
   * @param {object} [options]
   * @param {number} [options.maxBacklog=8 MiB] bytes kept for a reader that has stopped; past it records are dropped
   * @param {number} [options.stallMs=1000] a reader that took nothing for this long has stopped
   * @param {number} [options.maxMemory=64 MiB] bytes kept for a reader that is merely slow
   * @param {number} [options.exitFlushMs=1000] how long flushSync() waits for a full pipe
   * @param {(record: object) => string} [options.formatNotice] how the "records dropped" record is written (default NDJSON)
   */
  constructor (fd, { maxBacklog = MAX_BACKLOG, stallMs = STALL_MS, maxMemory = MAX_MEMORY, exitFlushMs = EXIT_FLUSH_MS, formatNotice } = {}) {
    this.fd = fd
    this.maxBacklog = maxBacklog
    this.stallMs = stallMs
    this.maxMemory = Math.max(maxMemory, maxBacklog)
    this.stalledSince = 0 // when the fd last refused a write it was offered (0: it took the last one)
    this.exitFlushMs = exitFlushMs
    this.formatNotice = formatNotice || ((record) => JSON.stringify(record) + '\n')
    this.pending = []
    this.pendingLength = 0
    this.chunks = [] // joined records the fd did not take yet, oldest first
    this.chunkBytes = 0
    this.dropped = 0
    this.scheduled = false
    this.timer = null
    this.retryMs = RETRY_MIN_MS
    this.broken = false
    this.flushBound = () => {
      this.scheduled = false
      this.flushSome()
    }
    this.retryBound = () => {
      this.timer = null
      this.flushSome()
    }
    this.sleeper = new Int32Array(new SharedArrayBuffer(4))
    makeNonBlocking(fd)
  }

  /** @param {string} line */
  write (line) {
    if (this.broken) return true
    // once dropping, keep dropping until the reader has read everything kept: the
    // notice then sits exactly where the gap is
    if (this.dropped > 0 || this.mustDrop()) {
      this.dropped++
      return true
    }
    this.pending.push(line)
    this.pendingLength += line.length
    track(this)
    if (this.timer !== null) return true // the reader is behind: the retry writes it
    if (this.pendingLength >= FLUSH_AT) {
      this.flushSome()
    } else if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.flushBound)
    }
    return true
  }

  mustDrop () {
    const kept = this.chunkBytes + this.pendingLength
    if (kept <= this.maxBacklog) return false
    return kept > this.maxMemory || (this.stalledSince > 0 && Date.now() - this.stalledSince >= this.stallMs)
  }

  /**
   * Writes what the fd takes without waiting; the rest is retried on a timer.
   * @returns {boolean} whether nothing is left
   */
  flushSome () {
    if (this.broken) return true
    if (this.pending.length > 0) {
      const buf = Buffer.from(this.pending.join(''))
      this.pending = []
      this.pendingLength = 0
      this.chunks.push(buf)
      this.chunkBytes += buf.length
    }
    while (this.chunks.length > 0) {
      let n
      try {
        n = fs.writevSync(this.fd, this.chunks.length > WRITEV_MAX ? this.chunks.slice(0, WRITEV_MAX) : this.chunks)
      } catch (err) {
        if (err.code === 'EAGAIN') n = 0
        else {
          // EPIPE (the reader went away), EBADF (a closed terminal after SIGHUP): the
          // supervisor must still stop its apps; only these records are lost
          this.broken = true
          this.chunks = []
          this.chunkBytes = 0
          this.pending = []
          untrack(this)
          return true
        }
      }
      if (n === 0) {
        if (this.stalledSince === 0) this.stalledSince = Date.now()
        this.retryLater()
        return false
      }
      this.stalledSince = 0
      this.consume(n)
      this.retryMs = RETRY_MIN_MS
    }
    if (this.dropped > 0) {
      const count = this.dropped
      this.dropped = 0
      const notice = Buffer.from(this.formatNotice({
        level: 40, time: Date.now(), event: 'output:dropped', count, msg: `${count} records dropped: stdout was not read`
      }))
      this.chunks.push(notice)
      this.chunkBytes += notice.length
      return this.flushSome()
    }
    untrack(this)
    return true
  }

  consume (n) {
    this.chunkBytes -= n
    while (n > 0) {
      const first = this.chunks[0]
      if (first.length <= n) {
        n -= first.length
        this.chunks.shift()
      } else {
        this.chunks[0] = first.subarray(n)
        n = 0
      }
    }
  }

  retryLater () {
    if (this.timer !== null) return
    // unref: a supervisor that is done must not stay for its reader; the exit hook
    // writes what it can
    this.timer = setTimeout(this.retryBound, this.retryMs).unref()
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS)
  }

  /** Writes everything kept, waiting at most exitFlushMs for a full pipe (before exit). */
  flushSync () {
    this.scheduled = false
    const deadline = Date.now() + this.exitFlushMs
    while (!this.flushSome() && Date.now() < deadline) Atomics.wait(this.sleeper, 0, 0, RETRY_MIN_MS)
  }

  // pino calls these when present
  flush (cb) {
    this.flushSync()
    if (typeof cb === 'function') cb()
  }

  on () { return this }
}

function track (writer) {
  unflushed.add(writer)
  if (!exitHookInstalled) {
    exitHookInstalled = true
    process.on('exit', () => {
      for (const w of unflushed) w.flushSync()
    })
  }
}

function untrack (writer) {
  unflushed.delete(writer)
}

function makeNonBlocking (fd) {
  if (process.platform === 'win32' || (fd !== 1 && fd !== 2)) return
  let stat
  try {
    stat = fs.fstatSync(fd)
  } catch {
    return
  }
  if (!stat.isFIFO() && !stat.isSocket()) return
  // opening the stdio stream is what sets O_NONBLOCK; it is not written to
  const stream = fd === 1 ? process.stdout : process.stderr
  return stream.writable
}

module.exports = { FdWriter }
