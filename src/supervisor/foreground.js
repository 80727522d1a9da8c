'use strict'

// `httpsys start` in the foreground: the supervisor owns the terminal. The first Ctrl+C
// (or SIGTERM, SIGHUP when the terminal closes, SIGBREAK on Windows) stops everything
// gracefully; a second one kills every app at once. The apps do not see the terminal's
// Ctrl+C themselves (they lead their own process groups), so each is asked exactly once.

const os = require('node:os')
const pino = require('pino')
const { start } = require('./start')
const { createLogger } = require('./output')

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', ...(process.platform === 'win32' ? ['SIGBREAK'] : [])]

/**
 * @param {object} config a validated config
 * @param {object} [options]
 * @param {boolean} [options.json=false] JSON lines even in a terminal
 * @param {string} [options.logLevel='info']
 * @param {boolean} [options.control=true] answer `httpsys ls|reload|restart|stop|logs`
 * @param {() => Promise<object>} [options.reread] reads the config again, as this start did
 *   (`httpsys reload`, `restart`)
 * @param {boolean} [options.untilStopped] see start(); default: in the background or as a service
 * @returns {Promise<number>} the exit code: 0 after a graceful stop, 130 when forced by a
 *   second Ctrl+C (128 + the signal number for other signals), 1 when the hub failed or
 *   (in a terminal, not untilStopped) every app ended in a crash loop (errored)
 */
async function runForeground (config, { json = false, logLevel, control = true, reread, untilStopped } = {}) {
  const logger = createLogger({ json, level: logLevel || 'info' })
  let supervisor = null
  let signals = 0
  let code = 0
  let resolveDone
  const done = new Promise((resolve) => { resolveDone = resolve })

  const onSignal = (signal) => {
    signals++
    if (signals === 1) {
      logger.info({ event: 'signal', signal }, `${signal} received: stopping (press Ctrl+C again to force)`)
      if (supervisor) supervisor.stop()
    } else {
      code = signal === 'SIGINT' ? 130 : 128 + (os.constants.signals[signal] || 0)
      if (supervisor) supervisor.kill()
    }
  }
  for (const s of SIGNALS) process.on(s, onSignal)
  const cleanup = () => { for (const s of SIGNALS) process.off(s, onSignal) }

  try {
    supervisor = await start(config, { logger, logLevel, control, reread, untilStopped })
  } catch (err) {
    cleanup()
    flush(logger)
    throw err
  }
  supervisor.on('error', () => {
    code = 1
    supervisor.stop()
  })
  supervisor.on('settled', (settled) => {
    if (code === 0) code = settled.code
    supervisor.stop()
  })
  supervisor.once('stopped', () => {
    cleanup()
    flush(logger)
    resolveDone(code)
  })
  // a signal that arrived while the hub was starting
  if (signals === 1) supervisor.stop()
  else if (signals > 1) supervisor.kill()
  return done
}

/** The records still gathered for this tick go out before process.exit(). */
function flush (logger) {
  const dest = logger[pino.symbols.streamSym]
  if (dest && typeof dest.flushSync === 'function') dest.flushSync()
}

module.exports = { runForeground }
