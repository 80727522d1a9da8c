'use strict'

// The one place that turns a name into a local stream-socket path: a Unix socket file
// on Linux and macOS, a named pipe on Windows. Used for the router's worker socket (the
// supervisor's, and a standalone app's) and for the supervisor's control
// endpoint.

const fs = require('node:fs')
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

/**
 * Removes the socket files in dir that processes of this user left when they were
 * killed (SIGKILL, a crash of node itself): files named by `pattern`, whose first group
 * is the pid that made them, when that process is gone. A live process's socket, a file
 * that is not a socket, or another user's is never touched. POSIX only.
 * @param {string} dir
 * @param {RegExp} pattern matches a file name; its first group is a pid
 * @returns {string[]} the files removed
 */
function removeDeadSockets (dir, pattern, { alive = pidAlive, uid = process.getuid() } = {}) {
  const removed = []
  for (const name of fs.readdirSync(dir)) {
    const m = pattern.exec(name)
    if (m === null || alive(Number(m[1]))) continue
    const file = path.join(dir, name)
    try {
      const st = fs.lstatSync(file)
      if (!st.isSocket() || st.uid !== uid) continue
      fs.unlinkSync(file)
      removed.push(file)
    } catch {}
  }
  return removed
}

/** Whether a process with this pid exists (EPERM: someone else's live process). */
function pidAlive (pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM' // someone else's live process
  }
}

module.exports = { socketPath, fitsSocketPath, userTag, removeDeadSockets, pidAlive, MAX_SOCKET_PATH }
