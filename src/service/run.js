'use strict'

// `httpsys service run`: the process the Windows service control manager starts. It
// connects to the SCM first (outside it, it fails at once, before any app starts), runs
// the supervisor as `httpsys start -c <config>` does, and turns the SCM's stop (also at
// shutdown) into the supervisor's graceful stop: every app down its stop ladder, then the
// router (docs/supervisor.md 2.5, 2.6). The SCM hears START_PENDING, RUNNING,
// STOP_PENDING with progress, and STOPPED with the supervisor's exit code: a failure is
// ERROR_SERVICE_SPECIFIC_ERROR with that code, which the recovery actions restart.
//
// A service has no console: the supervisor's records go, as JSON lines, to
// %ProgramData%\httpsys\<name>\service.log (windows.js logFile()).

const fs = require('node:fs')
const path = require('node:path')
const pino = require('pino')
const { codes } = require('../errors')
const { stopTimeout } = require('./common')
const { logFile } = require('./windows')
const { ERROR } = require('./scm')
const { openLogFile } = require('../supervisor/log-file')

// kept below this size: renamed to service.log.1 at a start above it
const ROTATE_AT = 10 * 1024 * 1024
// the SCM's own default; the apps' start is not waited for (RUNNING once spawned)
const START_WAIT_HINT_MS = 30000
// how often a stop in progress reports a new checkpoint
const PROGRESS_MS = 2000
// after STOPPED, how long the dispatcher may take to return before the process exits anyway
const DISPATCHER_EXIT_MS = 2000

/**
 * @param {object} request { name, configFile, logLevel }
 * @param {object} deps
 * @param {object} deps.host the SCM host (scm.js createScm().host, or a fake)
 * @param {(request) => Promise<object>} [deps.loadConfig] the validated config
 * @param {(config, options) => Promise<object>} [deps.startSupervisor] src/supervisor start()
 * @param {string} [deps.logFile] default: %ProgramData%\httpsys\<name>\service.log
 * @param {(fd) => object} [deps.createLogger]
 * @returns {Promise<number>} the supervisor's exit code (0 after a stop)
 */
async function runService ({ name, configFile, logLevel = 'info' }, deps) {
  const { host } = deps
  // the host's events, in order; a wait that gives up consumes none
  const queue = []
  let waiters = []
  const push = (type, value) => {
    queue.push({ type, value })
    const w = waiters
    waiters = []
    for (const wake of w) wake()
  }
  const never = new Promise(() => {})
  /** The next event, or null once `until` resolves first. */
  const next = async (until = never) => {
    for (;;) {
      if (queue.length > 0) return queue.shift()
      const ended = await Promise.race([new Promise((resolve) => waiters.push(() => resolve(false))), until.then(() => true)])
      if (ended) return queue.length > 0 ? queue.shift() : null
    }
  }

  host.start(name, push)
  const first = await next()
  if (first.type === 'exit' || first.type === 'error') {
    if (first.value === ERROR.ERROR_FAILED_SERVICE_CONTROLLER_CONNECT) throw new codes.ERR_HTTPSYS_SERVICE_NOT_SCM()
    throw new codes.ERR_HTTPSYS_SERVICE_CALL({ syscall: first.type === 'error' ? 'RegisterServiceCtrlHandlerExW' : 'StartServiceCtrlDispatcherW', name, win32: first.value })
  }

  const file = deps.logFile || logFile(name)
  const fd = openLog(file)
  const logger = (deps.createLogger || defaultLogger)(fd, logLevel)
  let code = 0
  const report = (state, options) => {
    const rc = host.status(state, options)
    if (rc !== 0) logger.warn({ event: 'service:status', state, win32: rc }, `the service control manager refused the state ${state} (${rc})`)
  }
  const finish = async (exit) => {
    // a failure is a service-specific error: the recovery actions restart it
    report('stopped', exit === 0 ? { win32ExitCode: 0 } : { win32ExitCode: ERROR.ERROR_SERVICE_SPECIFIC_ERROR, serviceExitCode: exit })
    logger.info({ event: 'service:stopped', code: exit }, `service ${name} stopped (exit code ${exit})`)
    flush(logger)
    // the dispatcher returns once the SCM has taken STOPPED
    let timer
    const timeout = new Promise((resolve) => { timer = setTimeout(resolve, DISPATCHER_EXIT_MS) })
    for (;;) {
      const e = await next(timeout)
      if (e === null || e.type === 'exit') break
    }
    clearTimeout(timer)
    return exit
  }

  report('start_pending', { waitHint: START_WAIT_HINT_MS })
  // the SCM starts services in the system folder: run from the config's, as the
  // systemd unit's WorkingDirectory= and launchd's do
  try {
    process.chdir(path.dirname(configFile))
  } catch {}
  logger.info({ event: 'service:start', name, config: configFile, pid: process.pid }, `service ${name} starting: ${configFile}`)
  let config
  let supervisor
  try {
    config = await (deps.loadConfig || defaultLoadConfig)({ configFile })
    // a service stays up when an app is errored: 503 for it until `httpsys restart` (docs/supervisor.md 2.2)
    supervisor = await (deps.startSupervisor || defaultStart)(config, { logger, logLevel, untilStopped: true })
  } catch (err) {
    logger.error({ event: 'service:failed', err: { code: err.code, message: err.message } }, `service ${name} could not start: ${err.message}${err.code ? ` (${err.code})` : ''}`)
    return finish(1)
  }
  const { ms } = stopTimeout(config)
  // accepted: the SCM's stop, and the shutdown notices (PRESHUTDOWN waits up to
  // preshutdownTimeout, which install sets to the same stop time)
  report('running', { accept: ['stop', 'preshutdown', 'shutdown'], stopWaitHint: ms })

  let stopping = null
  const stop = (why) => {
    if (stopping !== null) return
    const started = Date.now()
    logger.info({ event: 'service:stop', why }, `service ${name}: ${why}, stopping`)
    report('stop_pending', { waitHint: ms })
    stopping = setInterval(() => report('stop_pending', { waitHint: Math.max(ms - (Date.now() - started), PROGRESS_MS * 2) }), PROGRESS_MS)
    supervisor.stop()
  }
  supervisor.on('error', () => {
    code = 1
    stop('the router failed')
  })
  supervisor.on('settled', (settled) => {
    if (code === 0) code = settled.code
    stop('every app has ended')
  })
  const stopped = new Promise((resolve) => supervisor.once('stopped', resolve))
  const controls = (async () => {
    for (;;) {
      const e = await next(stopped)
      if (e === null) return
      if (e.type === 'control') stop(e.value === 1 ? 'the service control manager asked to stop' : 'Windows is shutting down')
      if (e.type === 'exit') return
    }
  })()
  await stopped
  clearInterval(stopping)
  await controls
  return finish(code)
}

function openLog (file) {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  try {
    if (fs.statSync(file).size > ROTATE_AT) fs.renameSync(file, `${file}.1`)
  } catch {}
  return openLogFile(file)
}

function defaultLogger (fd, level) {
  const { createLogger } = require('../supervisor')
  return createLogger({ json: true, level, fd })
}

async function defaultLoadConfig ({ configFile }) {
  const { resolveStartConfig } = require('../config')
  return resolveStartConfig({ config: configFile })
}

function defaultStart (config, options) {
  const { start } = require('../supervisor')
  return start(config, options)
}

function flush (logger) {
  const dest = logger[pino.symbols.streamSym]
  if (dest && typeof dest.flushSync === 'function') dest.flushSync()
}

module.exports = { runService }
