'use strict'

// Win32 codes from the addon -> the coded errors of src/errors.js. The addon only
// reports codes (err.win32, err.syscall, err.prefix on a thrown setup error; a number
// from the I/O calls); the words and the fix are chosen here, from the code's name in
// the addon's own table (errors()), so no Win32 number is copied into JavaScript.
// https://learn.microsoft.com/windows/win32/http/httpaddurltourlgroup lists the codes
// HttpAddUrlToUrlGroup returns.

const { codes } = require('../errors')
const { currentUser } = require('./service-config')

/**
 * @param {object} platform the loaded addon's tables: { errors: { [code]: name } }
 */
function createErrorMapper (platform) {
  const names = platform.errors || {}
  const nameOf = (code) => names[code]

  /**
   * A setup error thrown by the addon (new Queue, addUrl, start) as a coded error.
   * @param {Error} err carries win32, syscall, and prefix for URL calls
   * @param {object} [context]
   * @param {string} [context.queue]
   * @param {string} [context.app]
   */
  function toError (err, { queue, app } = {}) {
    if (!err || typeof err.win32 !== 'number') return err
    const name = nameOf(err.win32)
    const details = { win32: err.win32, prefix: err.prefix, queue }
    if (err.syscall === 'HttpAddUrlToUrlGroup' && err.prefix) {
      const port = portOf(err.prefix)
      switch (name) {
        case 'ERROR_ALREADY_EXISTS': return new codes.ERR_HTTPSYS_URL_CONFLICT(details)
        case 'ERROR_ACCESS_DENIED': return new codes.ERR_HTTPSYS_ACCESS_DENIED({ ...details, port, user: currentUser() })
        case 'ERROR_SHARING_VIOLATION': return new codes.ERR_HTTPSYS_PORT_IN_USE({ ...details, port })
        case 'ERROR_INVALID_PARAMETER':
          return new codes.ERR_HTTPSYS_BAD_PREFIX({ ...details, reason: 'HTTP.SYS rejected it (ERROR_INVALID_PARAMETER)' })
      }
    }
    if (err.syscall === 'HttpCreateRequestQueue') {
      // Queue names are machine-wide: another process (another supervisor's run) has it.
      if (name === 'ERROR_ALREADY_EXISTS' && queue) return new codes.ERR_HTTPSYS_QUEUE_EXISTS({ queue, app, win32: err.win32 })
      if (name === 'ERROR_FILE_NOT_FOUND' && queue) return new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue, win32: err.win32 })
    }
    return new codes.ERR_HTTPSYS_NATIVE_CALL({ ...details, syscall: err.syscall, win32Name: err.win32Name || name })
  }

  /** Whether a thrown setup error is this Win32 code, by its name in the addon's table. */
  function is (err, name) {
    return Boolean(err) && typeof err.win32 === 'number' && nameOf(err.win32) === name
  }

  /** How an attachment to `queue` ends when the kernel closes it or receiving fails. */
  function attachmentErrors (queue) {
    return {
      receiveFailed: (code) => new codes.ERR_HTTPSYS_NATIVE_CALL({
        syscall: 'HttpReceiveHttpRequest', win32: code, win32Name: nameOf(code), queue: queue || undefined
      }),
      queueClosed: () => new codes.ERR_HTTPSYS_QUEUE_CLOSED({ queue: queue || undefined })
    }
  }

  return { toError, is, nameOf, attachmentErrors }
}

function portOf (prefix) {
  const m = /^[a-z]+:\/\/(?:\[[^\]]*\]|[^/:]*):(\d+)/i.exec(prefix || '')
  return m ? Number(m[1]) : undefined
}

module.exports = { createErrorMapper, portOf }
