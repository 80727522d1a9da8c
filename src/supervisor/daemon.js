'use strict'

// `httpsys start -d`: the supervisor in the background. The same `httpsys start`
// command runs detached (its own session, no terminal), its records going to a log file
// in the runtime directory; this side waits until every app is ready, or one failed,
// or the supervisor exited, prints what happened, and returns the shell.
// `httpsys ls|logs|stop` then reach it over its control channel as usual, and `httpsys
// logs` reads the log file once it has stopped.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const paths = require('./control-path')
const { openLogFile } = require('./log-file')

// the daemon's log: kept while below this, renamed to <file>.1 at the next start above it
const ROTATE_AT = 10 * 1024 * 1024
const POLL_MS = 100

/** Where a config's daemon writes its records. */
function daemonLogFile (config, dir = paths.runtimeDir()) {
  return path.join(dir, `${paths.identity(config)}.log`)
}

/**
 * Starts the supervisor detached and waits for it to be ready.
 * @param {object} config the validated config (for its identity and its timeouts)
 * @param {string[]} argv the `httpsys start` arguments to run, without -d
 * @param {object} [options]
 * @param {string} [options.bin] the httpsys entry (default: this install's bin/httpsys)
 * @param {NodeJS.ProcessEnv} [options.env]
 * @returns {Promise<{pid: number, log: string, ok: boolean, records: object[], exitCode: number|null}>}
 */
async function startDaemon (config, argv, { bin = path.join(__dirname, '..', '..', 'bin', 'httpsys'), env = process.env } = {}) {
  const dir = paths.ensureRuntimeDir()
  const log = daemonLogFile(config, dir)
  try {
    if (fs.statSync(log).size > ROTATE_AT) fs.renameSync(log, `${log}.1`)
  } catch {}
  const start = fs.existsSync(log) ? fs.statSync(log).size : 0
  const fd = openLogFile(log, 0o600)
  let child
  try {
    // detached: a session of its own, so closing the terminal (SIGHUP) or the shell
    // exiting does not reach it; windowsHide: no console window on Windows
    child = spawn(process.execPath, [bin, 'start', ...argv, '--json'], {
      detached: true,
      windowsHide: true,
      stdio: ['ignore', fd, fd],
      env: { ...env, HTTPSYS_DAEMON: '1' }
    })
  } finally {
    fs.closeSync(fd)
  }
  let exitCode = null
  child.once('exit', (code) => { exitCode = code === null ? 1 : code })
  child.unref()

  // ready_timeout bounds each app's start; the hub and the spawns come on top of it
  const deadline = Date.now() + Math.max(...config.apps.map((a) => a.ready_timeout || 30000), 30000) + 10000
  const records = []
  let offset = start
  for (;;) {
    offset = readNew(log, offset, records)
    if (records.some((r) => r.event === 'all-ready')) return { pid: child.pid, log, ok: true, records, exitCode }
    if (records.some((r) => r.event === 'errored' || r.event === 'settled') || exitCode !== null) {
      return { pid: child.pid, log, ok: false, records, exitCode }
    }
    if (Date.now() > deadline) return { pid: child.pid, log, ok: false, records, exitCode, timedOut: true }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

/** Appends the complete JSON lines written since offset; returns the new offset. */
function readNew (file, offset, records) {
  let text
  try {
    const fd = fs.openSync(file, 'r')
    try {
      const size = fs.fstatSync(fd).size
      if (size <= offset) return offset
      const buf = Buffer.alloc(size - offset)
      fs.readSync(fd, buf, 0, buf.length, offset)
      text = buf.toString('utf8')
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    return offset
  }
  const end = text.lastIndexOf('\n')
  if (end === -1) return offset
  for (const line of text.slice(0, end).split('\n')) {
    try {
      records.push(JSON.parse(line))
    } catch {
      // not a record: what the CLI printed itself, such as a start that failed with a
      // coded error before any app ran ("httpsys: Port 8080 is already in use ...")
      if (line.trim() !== '') records.push({ raw: line })
    }
  }
  return offset + Buffer.byteLength(text.slice(0, end + 1))
}

module.exports = { startDaemon, daemonLogFile }
