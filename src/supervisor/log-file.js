'use strict'

// One app's log file, <log_dir>/<name>.log, NDJSON. The supervisor is its only writer,
// so rotation is close -> rename -> reopen between two whole records: no line is lost
// or split, and no copy-truncate (pm2-logrotate#200 loses the lines written between
// the copy and the truncate). Rotated files are <name>.<local time>-<n>.log, the newest
// `keep` kept (a name never repeats, so a rotation never overwrites: pm2-logrotate#135).
//
// Lines are gathered during a tick and written in one synchronous write: the
// supervisor ends with process.exit() and must not leave records in a buffer, and one
// write per tick keeps the syscalls few when an app prints 100k lines.
//
// A file that cannot be written (log_dir is a file, a full disk, no permission) must not
// take the supervisor down: it hosts the router, every app would go with it. The file's
// records are dropped (stdout still has them), onError reports it once, and opening is
// tried again after retryMs.

const fs = require('node:fs')
const path = require('node:path')

const RETRY_MS = 30 * 1000

class LogFile {
  /**
   * @param {string} dir
   * @param {string} name the app name
   * @param {object} [options]
   * @param {number} [options.maxSize=0] rotate before a write would pass this size (0: never)
   * @param {boolean} [options.daily=false] rotate at the first write of a new local day
   * @param {number} [options.keep=5] rotated files kept
   * @param {number} [options.retryMs=30000] after a failed open or write, records are dropped this long
   * @param {(failure: { file: string, code: string, message: string }) => void} [options.onError]
   *   called once when the file stops being written (again only after it worked in between)
   */
  constructor (dir, name, { maxSize = 0, daily = false, keep = 5, retryMs = RETRY_MS, onError } = {}) {
    this.dir = dir
    this.name = name
    this.file = path.join(dir, `${name}.log`)
    this.maxSize = maxSize
    this.daily = daily
    this.keep = keep
    this.fd = null
    this.size = 0
    this.day = null
    this.pending = []
    this.scheduled = false
    this.rotateFailed = 0
    this.retryMs = retryMs
    this.onError = onError
    this.retryAt = 0 // > 0: failed, records dropped until then
    this.dropped = 0
    this.flushBound = () => this.flush()
  }

  open () {
    fs.mkdirSync(this.dir, { recursive: true })
    this.fd = fs.openSync(this.file, 'a')
    this.size = fs.fstatSync(this.fd).size
    this.day = today()
  }

  /** @param {string} line one whole record, ending in '\n' */
  write (line) {
    this.pending.push(line)
    if (!this.scheduled) {
      this.scheduled = true
      setImmediate(this.flushBound)
    }
  }

  flush () {
    this.scheduled = false
    if (this.pending.length === 0) return
    const lines = this.pending
    this.pending = []
    if (this.retryAt > 0 && Date.now() < this.retryAt) {
      this.dropped += lines.length
      return
    }
    try {
      this.writeLines(lines)
      this.retryAt = 0
    } catch (err) {
      this.fail(err)
    }
  }

  writeLines (lines) {
    if (this.fd === null) this.open()
    if (this.daily && this.size > 0 && today() !== this.day) this.rotate()
    let batch = ''
    let batchBytes = 0
    for (const line of lines) {
      const bytes = Buffer.byteLength(line)
      if (this.maxSize > 0 && this.size + batchBytes + bytes > this.maxSize && this.size + batchBytes > 0) {
        this.writeOut(batch, batchBytes)
        batch = ''
        batchBytes = 0
        this.rotate()
      }
      batch += line
      batchBytes += bytes
    }
    this.writeOut(batch, batchBytes)
  }

  writeOut (text, bytes) {
    if (bytes === 0) return
    let buf = Buffer.from(text)
    // a short write (a disk filling up) is followed by one that throws: no silent loss
    while (buf.length > 0) buf = buf.subarray(fs.writeSync(this.fd, buf))
    this.size += bytes
  }

  fail (err) {
    if (this.fd !== null) {
      try { fs.closeSync(this.fd) } catch {}
      this.fd = null
    }
    const first = this.retryAt === 0
    this.retryAt = Date.now() + this.retryMs
    if (first && typeof this.onError === 'function') {
      this.onError({ file: this.file, code: err.code || 'ERR_UNKNOWN', message: err.message })
    }
  }

  rotate () {
    const target = this.rotatedName()
    try {
      fs.renameSync(this.file, target)
    } catch {
      // Windows: another program holds the file without FILE_SHARE_DELETE. Keep
      // writing to it and try again at a later write (docs/supervisor.md 4.2); a log
      // that grows beats a lost line.
      this.rotateFailed++
      return
    }
    // a failure to reopen reaches flush(), which stops writing this file for a while
    const fd = this.fd
    this.fd = null
    fs.closeSync(fd)
    this.fd = fs.openSync(this.file, 'a')
    this.size = 0
    this.day = today()
    try {
      this.prune()
    } catch {}
  }

  rotatedName () {
    const d = new Date()
    const p = (n, w = 2) => String(n).padStart(w, '0')
    const stamp = `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}-${p(d.getMilliseconds(), 3)}`
    // the counter is always there, so names sort in the order they were made
    let candidate
    for (let n = 0; candidate === undefined || fs.existsSync(candidate); n++) {
      candidate = path.join(this.dir, `${this.name}.${stamp}-${p(n, 3)}.log`)
    }
    return candidate
  }

  /** @returns {string[]} rotated files, oldest first */
  rotated () {
    const prefix = `${this.name}.`
    const re = /^\d{8}-\d{6}-\d{3}-\d{3}\.log$/
    return fs.readdirSync(this.dir)
      .filter((f) => f.startsWith(prefix) && re.test(f.slice(prefix.length)))
      .sort()
      .map((f) => path.join(this.dir, f))
  }

  prune () {
    const files = this.rotated()
    for (const f of files.slice(0, Math.max(0, files.length - this.keep))) {
      try { fs.unlinkSync(f) } catch {}
    }
  }

  close () {
    this.flush()
    if (this.fd !== null) {
      try { fs.closeSync(this.fd) } catch {}
      this.fd = null
    }
  }
}

function today () {
  const d = new Date()
  return `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`
}

module.exports = { LogFile }
