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
// how often a start that waits says which apps it waits for
const PROGRESS_MS = 5000

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
 * @param {(line: string) => void} [options.progress] told every few seconds which apps it
 *   still waits for and how long they have left (a silent wait looks like a hang)
 * @returns {Promise<{pid: number, log: string, ok: boolean, records: object[], exitCode: number|null,
 *   timedOut?: boolean, retrying?: { app: string, cause: string }}>} retrying: an app was
 *   stopped for not listening (or not ready) in time; the supervisor tries it again
 */
async function startDaemon (config, argv, { bin = path.join(__dirname, '..', '..', 'bin', 'httpsys'), env = process.env, progress = () => {} } = {}) {
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

  // listen_timeout and ready_timeout bound each app's start (a process past them is
  // stopped, and that ends the wait); the hub and the spawns come on top of them
  const t0 = Date.now()
  const deadline = t0 + Math.max(...config.apps.map((a) => Math.max(a.ready_timeout, a.listen_timeout || 0) || 30000), 30000) + 10000
  let nextProgress = t0 + PROGRESS_MS
  const records = []
  let offset = start
  for (;;) {
    offset = readNew(log, offset, records)
    const done = { pid: child.pid, log, records, exitCode }
    if (records.some((r) => r.event === 'all-ready')) return { ...done, ok: true }
    if (records.some((r) => r.event === 'errored' || r.event === 'settled') || exitCode !== null) return { ...done, ok: false }
    // one process was stopped for not listening in time: that is the answer, not the
    // retries behind it (each as long again)
    const stuck = records.find((r) => r.event === 'ready-timeout')
    if (stuck !== undefined) return { ...done, ok: false, retrying: { app: stuck.app, cause: stuck.msg } }
    if (Date.now() > deadline) return { ...done, ok: false, timedOut: true }
    if (Date.now() >= nextProgress) {
      nextProgress += PROGRESS_MS
      for (const line of waitingFor(config, records, Date.now() - t0)) progress(line)
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS))
  }
}

/**
 * One line per app not ready yet: which, for how long, and when httpsys gives up on the
 * process (`waiting for web: 10 s; not listening yet, stopped at 30 s (listen_timeout)`).
 */
function waitingFor (config, records, ms) {
  const lines = []
  for (const app of config.apps) {
    if (records.some((r) => r.event === 'app-ready' && r.app === app.name)) continue
    const ready = new Set(records.filter((r) => r.event === 'ready' && r.app === app.name).map((r) => r.inst)).size
    const some = app.instances > 1 ? `${ready} of ${app.instances} instances ready; ` : ''
    const limit = app.wait_ready || app.type === 'worker'
      ? (app.ready_timeout > 0 ? `process.send('ready') expected within ${seconds(app.ready_timeout)} (ready_timeout)` : 'waiting for process.send(\'ready\')')
      : listenLimit(app)
    lines.push(`waiting for ${app.name}: ${seconds(ms)}; ${some}${limit}\n`)
  }
  return lines
}

function listenLimit (app) {
  const ms = [app.listen_timeout, app.ready_timeout].filter((t) => t > 0)
  if (ms.length === 0) return 'not listening yet (no timeout: listen_timeout 0)'
  const limit = Math.min(...ms)
  return `not listening yet; httpsys stops it at ${seconds(limit)} (${limit === app.listen_timeout ? 'listen_timeout' : 'ready_timeout'})`
}

function seconds (ms) {
  return `${Math.round(ms / 1000)} s`
}

/** The last line `start -d` prints when not every app got ready: what runs now, and what to do. */
function daemonFailure (result) {
  const { pid, log } = result
  if (result.timedOut) return `httpsys did not get every app ready in time; it keeps trying in the background (pid ${pid}); see ${log}\n`
  if (result.retrying) {
    const { app } = result.retrying
    return `httpsys did not get ${app} ready: it was stopped and is started again in the background (pid ${pid}) until it ` +
      `errors; \`httpsys ls\`, \`httpsys logs ${app}\`, \`httpsys stop all\`; its log: ${log}\n`
  }
  if (result.exitCode !== null) return `httpsys could not start every app and exited (code ${result.exitCode}); see ${log}\n`
  // an errored app keeps the supervisor (and its port) up: its requests get 503
  const errored = [...new Set(result.records.filter((r) => r.event === 'errored').map((r) => r.app))]
  const one = errored.length === 1 ? errored[0] : '<app>'
  return `httpsys could not start every app (errored: ${errored.join(', ') || 'none'}); it stays in the background (pid ${pid}), ` +
    `answering 503 for ${errored.length === 1 ? 'it' : 'them'}: fix it, then \`httpsys restart ${one}\` (or \`httpsys stop all\`); its log: ${log}\n`
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

module.exports = { startDaemon, daemonLogFile, daemonFailure }
