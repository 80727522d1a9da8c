'use strict'

const { isValidated, validate } = require('../config')
const { Supervisor } = require('./supervisor')
const { createLogger } = require('./output')

/**
 * Start the router (config.backend: auto, httpsys or hub) and every app of a config;
 * resolves once the queues exist and the workers are spawned (not when they are ready:
 * listen to 'ready').
 * @param {object} config a config from src/config, or a raw one (validated here, paths
 *   relative to process.cwd())
 * @param {object} [options]
 * @param {import('pino').Logger} [options.logger] default: JSON lines or pretty on stdout
 * @param {boolean} [options.json=false] for the default logger: JSON even in a terminal
 * @param {string} [options.logLevel] for the default logger, and workers' HTTPSYS_LOG_LEVEL
 * @param {string} [options.socketPath] the hub's socket (default: per user and run in os.tmpdir())
 * @param {boolean} [options.control=true] answer `httpsys ls|reload|restart|stop|logs` from other terminals
 * @param {() => Promise<object>} [options.reread] reads the config again (reload, restart); default:
 *   its config file, when it has one
 * @param {boolean} [options.untilStopped] an app that ends errored keeps the supervisor up (503
 *   for it); default: in the background (`start -d`) and as a service, not in the foreground
 * @returns {Promise<Supervisor>} events: spawn, ready, exit ({ app, inst, pid, ... }), settled
 *   ({ code }: every app ended by itself), stopped, error
 */
async function start (config, options = {}) {
  const valid = isValidated(config) ? config : validate(config)
  const logger = options.logger || createLogger({ json: options.json, level: options.logLevel || 'info' })
  const supervisor = new Supervisor(valid, {
    logger,
    logLevel: options.logLevel,
    socketPath: options.socketPath,
    control: options.control !== false,
    reread: options.reread,
    untilStopped: options.untilStopped ?? runsUntilStopped()
  })
  await supervisor.start()
  return supervisor
}

/**
 * In the background (`start -d` sets HTTPSYS_DAEMON) and as a service (the systemd unit
 * and the launchd job set HTTPSYS_SERVICE), nobody watches an exit code: the supervisor
 * stays up until stopped, and an errored app answers 503 until `httpsys restart`.
 */
function runsUntilStopped (env = process.env) {
  return env.HTTPSYS_DAEMON === '1' || env.HTTPSYS_SERVICE === '1'
}

module.exports = { start, runsUntilStopped }
