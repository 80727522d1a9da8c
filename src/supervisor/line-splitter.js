'use strict'

// Splits a worker's stdout/stderr into lines: chunks end anywhere (mid-line, mid UTF-8
// character), Windows apps end lines with \r\n, and a process may die without a final
// newline. Every line is cut at maxLength, whether it arrived whole in one chunk or
// without a newline over many (then the rest is not even buffered), so one bad app can
// neither flood the log nor make the supervisor buffer without bound.

const { StringDecoder } = require('node:string_decoder')

const MAX_LINE = 64 * 1024

class LineSplitter {
  /**
   * @param {(line: string, truncated: boolean) => void} onLine
   * @param {object} [options]
   * @param {number} [options.maxLength=65536] characters kept of one line; the rest is dropped
   */
  constructor (onLine, { maxLength = MAX_LINE } = {}) {
    this.onLine = onLine
    this.maxLength = maxLength
    this.decoder = new StringDecoder('utf8')
    this.pending = ''
    this.dropping = false // inside a line already emitted as truncated
  }

  /** @param {Buffer|string} chunk */
  push (chunk) {
    const text = this.pending + (typeof chunk === 'string' ? chunk : this.decoder.write(chunk))
    let start = 0
    let nl
    while ((nl = text.indexOf('\n', start)) !== -1) {
      const line = text.slice(start, nl)
      start = nl + 1
      if (this.dropping) {
        this.dropping = false
        continue
      }
      this.emitCapped(line)
    }
    this.pending = text.slice(start)
    if (this.pending.length > this.maxLength) {
      if (!this.dropping) this.emit(this.pending.slice(0, this.maxLength), true)
      this.dropping = true
      this.pending = ''
    }
  }

  /** The stream ended: emit what is left, even without a final newline. */
  end () {
    const rest = this.pending + this.decoder.end()
    this.pending = ''
    if (rest && !this.dropping) this.emitCapped(rest)
    this.dropping = false
  }

  emitCapped (line) {
    // a CR of a CRLF ending is not part of the line's length
    const length = line.endsWith('\r') ? line.length - 1 : line.length
    if (length > this.maxLength) this.emit(line.slice(0, this.maxLength), true)
    else this.emit(line, false)
  }

  emit (line, truncated) {
    if (line.endsWith('\r')) line = line.slice(0, -1)
    if (line !== '') this.onLine(line, truncated)
  }
}

module.exports = { LineSplitter, MAX_LINE }
