'use strict'

// What every service manager needs to know about one install: the service's name, the
// config it runs (absolute), the node binary and the httpsys entry the service starts,
// and how long a graceful stop of that config may take.

const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')

// One rule for systemd unit names, launchd labels and Windows service names, so a name
// means the same thing everywhere: no spaces, slashes, quotes or `%` (systemd
// specifiers, cmd.exe variables) to escape, and nothing a shell line must quote.
const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$/

// docs/supervisor.md 2.6: after the stop ladders (each bounded by its app's
// kill_timeout) the router closes, and the supervisor waits at most 7 s for it
const ROUTER_CLOSE_MS = 7000
// the tree kill itself (taskkill on Windows), the last records, the process exit
const STOP_MARGIN_MS = 5000

/** @returns {string|null} why `name` cannot be a service name, or null when it can */
function nameProblem (name) {
  if (typeof name !== 'string' || !NAME.test(name)) {
    return 'must be 1 to 80 letters, digits, ".", "_" or "-", starting with a letter or digit'
  }
  if (/\.(service|plist|target|socket|timer)$/i.test(name)) return 'must not end in a unit or file suffix (it is added where needed)'
  return null
}

/**
 * The default name: "httpsys-" and the config's folder, made valid
 * (/srv/shop/httpsys.config.js -> httpsys-shop).
 */
function defaultName (configFile) {
  const folder = path.basename(path.dirname(configFile)).toLowerCase().replace(/[^a-z0-9_.-]+/g, '-').replace(/^[-_.]+|[-_.]+$/g, '')
  const name = `httpsys-${folder || 'app'}`.slice(0, 80).replace(/[-_.]+$/, '')
  return nameProblem(name) === null ? name : 'httpsys'
}

/**
 * How long a graceful stop of this config may take: the largest kill_timeout (every app
 * stops in parallel), then the router's close, plus a margin. A service manager that
 * kills the supervisor sooner cuts the stop ladder short (docs/supervisor.md 2.5).
 * @param {object} config a validated config
 * @returns {{ms: number, killTimeout: number}}
 */
function stopTimeout (config) {
  const killTimeout = Math.max(0, ...config.apps.map((a) => a.kill_timeout || 0))
  return { ms: killTimeout + ROUTER_CLOSE_MS + STOP_MARGIN_MS, killTimeout }
}

/**
 * The httpsys entry a service starts: this install's bin/httpsys, through its real path,
 * so the service keeps working however the command was reached (npm link, a global
 * install's symlink, npx's cache is not a place to keep a service: see notes()).
 */
function httpsysBin (root = ROOT, realpath = fs.realpathSync) {
  const bin = path.join(root, 'bin', 'httpsys')
  try {
    return realpath(bin)
  } catch {
    return bin
  }
}

/**
 * The program and arguments a service runs for `httpsys <args>`: node and the CLI's
 * script, or a single executable alone (bin null).
 */
function command ({ execPath, bin }, ...args) {
  return bin ? [execPath, bin, ...args] : [execPath, ...args]
}

/** Notes for every platform about what the service will start. */
function installNotes ({ bin, execPath }) {
  const notes = []
  if (bin && /[\\/]_npx[\\/]/.test(bin)) {
    notes.push(`the service starts httpsys from npx's cache (${bin}), which npm may clean: install it first (\`npm install -g httpsys-cli\` or as a dependency of the project) and install the service again`)
  }
  if (/[\\/](\.nvm|\.volta|\.fnm|nvm|fnm)[\\/]/i.test(execPath)) {
    notes.push(`node is ${execPath}, from a version manager: the service keeps this exact binary, so install the service again after removing or replacing that version`)
  }
  return notes
}

module.exports = { nameProblem, defaultName, stopTimeout, httpsysBin, command, installNotes, ROUTER_CLOSE_MS, STOP_MARGIN_MS, NAME }
