'use strict'

// The one place that turns a name into a local stream-socket path: a Unix socket file
// on Linux and macOS, a named pipe on Windows. Used for the hub's worker socket (the
// supervisor's, and a standalone app's in-process hub) and for the supervisor's control
// endpoint.

const os = require('node:os')
const path = require('node:path')

const IS_WINDOWS = process.platform === 'win32'

// sun_path holds 108 bytes on Linux and 104 on macOS; leave room for both.
const MAX_SOCKET_PATH = 100

/** A name for this user that is safe in a file or pipe name. */
function userTag () {
  return typeof process.getuid === 'function'
    ? String(process.getuid())
    : os.userInfo().username.replace(/[^A-Za-z0-9_-]/g, '_')
}

/**
 * @param {string} name a file-name-safe name, unique for what listens on it
 * @param {object} [options]
 * @param {string} [options.dir=os.tmpdir()] the directory of the socket file (POSIX)
 * @param {string} [options.platform=process.platform]
 * @returns {string} `\\.\pipe\<name>` on Windows, else `<dir>/<name>.sock`
 */
function socketPath (name, { dir = os.tmpdir(), platform = process.platform } = {}) {
  if (platform === 'win32') return `\\\\.\\pipe\\${name}`
  return path.join(dir, `${name}.sock`)
}

/** Whether a socket path fits the platform's limit (always true for a pipe name). */
function fitsSocketPath (file) {
  return IS_WINDOWS || Buffer.byteLength(file) <= MAX_SOCKET_PATH
}

module.exports = { socketPath, fitsSocketPath, userTag, MAX_SOCKET_PATH }
