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
//
// Every log file httpsys writes (these, the daemon's, the Windows service's) is opened
// with openLogFile(): a symlink, hard link or FIFO planted in a shared folder would have
// the supervisor append app output, secrets the apps print included, to a file the
// planter chose (issue 23), and the files are created 0640, not world-readable.

const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../errors')

const RETRY_MS = 30 * 1000
// created owner rw, group r: the apps' output is no one else's to read (the daemon's own
// log is 0600); an existing file keeps the mode its owner gave it
const FILE_MODE = 0o640
const DIR_MODE = 0o750
// Windows has neither flag (0): openLogFile() checks with lstat there. O_NONBLOCK: a FIFO
// with no reader fails open() (ENXIO) instead of blocking the supervisor, which hosts
// the router; on a regular file it changes nothing.
const { O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW = 0, O_NONBLOCK = 0 } = fs.constants

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
    fs.mkdirSync(this.dir, { recursive: true, mode: DIR_MODE })
    this.fd = openLogFile(this.file)
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
    this.fd = openLogFile(this.file)
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

/**
 * Opens a log file for appending, creating it with `mode`; refuses (ERR_HTTPSYS_LOG_FILE_UNSAFE)
 * a symlink, a file with other hard links, or anything but a regular file.
 * @param {string} file
 * @param {number} [mode=0o640] for a file that does not exist yet
 * @returns {number} the fd
 */
function openLogFile (file, mode = FILE_MODE) {
  // no O_NOFOLLOW (Windows): a link there takes SeCreateSymbolicLinkPrivilege, and this
  // check leaves only the window until the open below
  if (O_NOFOLLOW === 0) refuseUnsafe(file)
  let fd
  try {
    fd = fs.openSync(file, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, mode)
  } catch (err) {
    // ELOOP (EMLINK on FreeBSD) for a symlink, ENXIO for a FIFO: say what is there
    refuseUnsafe(file)
    throw err
  }
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) throw unsafe(file, 'it is not a regular file')
    // a hard link to another file is followed by any open (macOS has no protected_hardlinks)
    if (stat.nlink > 1) throw unsafe(file, `it has ${stat.nlink - 1} other hard link${stat.nlink > 2 ? 's' : ''}, so writing it would write another file too`)
  } catch (err) {
    fs.closeSync(fd)
    throw err
  }
  return fd
}

function refuseUnsafe (file) {
  let stat
  try { stat = fs.lstatSync(file) } catch { return }
  if (stat.isSymbolicLink()) {
    let target = ''
    try { target = ` to ${fs.readlinkSync(file)}` } catch {}
    throw unsafe(file, `it is a symbolic link${target}`)
  }
  if (!stat.isFile()) throw unsafe(file, 'it is not a regular file')
}

function unsafe (file, reason) {
  return new codes.ERR_HTTPSYS_LOG_FILE_UNSAFE({ file, dir: path.dirname(file), reason, windows: process.platform === 'win32' })
}

function today () {
  const d = new Date()
  return `${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}`
}

module.exports = { LogFile, openLogFile }
