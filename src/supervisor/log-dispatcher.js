'use strict'

// Every record the supervisor writes (its own lifecycle records and every line of every
// worker) passes through here on its way to the terminal: it also goes to the app's log
// file (log_dir), to a ring of recent records for `httpsys logs`, and to the `logs -f`
// readers connected to the control socket. Records are whole NDJSON lines; a record's
// app is its `app` field (none: the supervisor's own).

const RING_SIZE = 1000

class LogDispatcher {
  /**
   * @param {{ write(line: string): void }} out where records went before (stdout)
   * @param {object} [options]
   * @param {number} [options.ringSize=1000] recent records kept per app for `httpsys logs`
   */
  constructor (out, { ringSize = RING_SIZE } = {}) {
    this.out = out
    this.files = new Map()
    this.subscribers = new Set()
    // one ring per app (and one for the supervisor's own records): an app printing
    // 100k lines must not push the others' records out
    this.ringSize = ringSize
    this.rings = new Map()
    this.seq = 0
  }

  /** @param {string} line one NDJSON record ending in '\n' */
  write (line) {
    this.out.write(line)
    const app = appOf(line)
    const key = app === undefined ? '' : app
    let ring = this.rings.get(key)
    if (ring === undefined) {
      ring = { lines: [], seqs: [], next: 0 }
      this.rings.set(key, ring)
    }
    if (ring.lines.length < this.ringSize) {
      ring.lines.push(line)
      ring.seqs.push(this.seq++)
    } else {
      ring.lines[ring.next] = line
      ring.seqs[ring.next] = this.seq++
      ring.next = (ring.next + 1) % this.ringSize
    }
    const file = app === undefined ? undefined : this.files.get(app)
    if (file !== undefined) file.write(line)
    for (const fn of this.subscribers) fn(line, app)
  }

  /** @param {string} app @param {import('./log-file').LogFile} file */
  addFile (app, file) {
    this.files.set(app, file)
    // a supervisor record (no app: it must not go to the file that failed)
    if (file.onError === undefined) {
      file.onError = ({ file: name, code, message }) => this.write(JSON.stringify({
        level: 40, time: Date.now(), event: 'log-file:error', file: name, code, msg: `cannot write ${name} (${message}); its records go to stdout only for now`
      }) + '\n')
    }
  }

  /** An app's file closes (the app left the config, or its log settings changed). */
  removeFile (app) {
    const file = this.files.get(app)
    if (file === undefined) return
    this.files.delete(app)
    try {
      file.close()
    } catch {}
  }

  /**
   * @param {(line: string, app: string|undefined) => void} fn
   * @returns {() => void} unsubscribe
   */
  subscribe (fn) {
    this.subscribers.add(fn)
    return () => this.subscribers.delete(fn)
  }

  /**
   * @param {object} [options]
   * @param {string} [options.app] only this app's records
   * @param {number} [options.lines=100]
   * @returns {string[]} oldest first
   */
  recent ({ app, lines = 100 } = {}) {
    const rings = app === undefined ? [...this.rings.values()] : [this.rings.get(app)].filter(Boolean)
    const entries = []
    for (const ring of rings) {
      const n = ring.lines.length
      for (let k = Math.max(0, n - lines); k < n; k++) {
        const i = (ring.next + k) % n
        entries.push([ring.seqs[i], ring.lines[i]])
      }
    }
    entries.sort((a, b) => a[0] - b[0])
    return entries.slice(Math.max(0, entries.length - lines)).map((e) => e[1])
  }

  /** Writes what the files and the terminal hold in memory; call before process.exit(). */
  close () {
    if (typeof this.out.flushSync === 'function') this.out.flushSync()
    for (const file of this.files.values()) {
      try {
        file.close()
      } catch {}
    }
    this.files.clear()
    this.subscribers.clear()
  }
}

function appOf (line) {
  try {
    const app = JSON.parse(line).app
    return typeof app === 'string' ? app : undefined
  } catch {
    return undefined
  }
}

module.exports = { LogDispatcher }
