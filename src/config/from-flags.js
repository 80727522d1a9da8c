'use strict'

// One app described by `httpsys start <script>` flags, validated by the same schema as a
// config file. Errors name the flag (`--instances`), not a config path.

const path = require('node:path')
const { validate } = require('./validate')

const FLAGS = {
  script: 'the script argument',
  args: 'the app arguments (after --)',
  urls: '--url',
  instances: '--instances',
  name: '--name',
  node_args: '--node-args',
  node: '--node',
  cwd: '--cwd',
  watch: '--watch',
  ignore_watch: '--ignore-watch',
  wait_ready: '--wait-ready',
  type: '--no-http',
  kill_timeout: '--kill-timeout',
  max_memory_restart: '--max-memory-restart',
  restart: '--restart',
  log_dir: '--log-dir'
}

/**
 * @param {object} flags
 * @param {string} flags.script the script, relative to `baseDir` (the shell's cwd)
 * @param {string[]} [flags.args]
 * @param {string[]} [flags.urls]
 * @param {number|string} [flags.instances]
 * @param {string} [flags.name]
 * @param {string} [flags.nodeArgs]
 * @param {string} [flags.node] the node that runs the app (a path, a name on the PATH, or 'self')
 * @param {string} [flags.cwd]
 * @param {true|string[]} [flags.watch] true: the app's cwd; else paths
 * @param {string[]} [flags.ignoreWatch]
 * @param {boolean} [flags.waitReady]
 * @param {boolean} [flags.noHttp] the app serves no HTTP (type: 'worker')
 * @param {string} [flags.killTimeout]
 * @param {string} [flags.maxMemoryRestart]
 * @param {string} [flags.restart]
 * @param {string} [flags.logDir]
 * @param {string} [flags.backend] --backend (auto, httpsys, hub)
 * @param {object} [options]
 * @param {string} [options.baseDir=process.cwd()]
 * @param {object} [options.envFile] `--env-file` variables
 */
function fromFlags (flags, { baseDir = process.cwd(), envFile } = {}) {
  const app = {}
  const set = (key, value) => { if (value !== undefined) app[key] = value }
  // the script is where the user pointed in their shell, whatever --cwd says
  set('script', typeof flags.script === 'string' ? path.resolve(baseDir, flags.script) : flags.script)
  set('cwd', flags.cwd)
  set('name', flags.name)
  set('urls', flags.urls && flags.urls.length ? flags.urls : undefined)
  set('instances', flags.instances)
  set('args', flags.args && flags.args.length ? flags.args : undefined)
  set('node_args', flags.nodeArgs)
  set('node', flags.node)
  // watch paths typed in a shell are relative to the shell, like the script
  set('watch', Array.isArray(flags.watch) ? flags.watch.map((p) => path.resolve(baseDir, p)) : flags.watch)
  set('ignore_watch', flags.ignoreWatch)
  set('wait_ready', flags.waitReady)
  if (flags.noHttp) app.type = 'worker'
  set('kill_timeout', flags.killTimeout)
  set('max_memory_restart', flags.maxMemoryRestart)
  set('restart', flags.restart)
  set('log_dir', flags.logDir)
  return validate(flags.metrics === undefined ? { apps: [app] } : { apps: [app], metrics: { listen: flags.metrics } }, {
    baseDir,
    envFile,
    backend: flags.backend,
    source: { script: app.script },
    keyLabel: (p) => flagOf(p) || p.join('.'),
    example: (p, value) => flagOf(p) && flagOf(p).startsWith('--')
      ? `${flagOf(p)} ${value.replace(/^"(.*)"$/, '$1')}`
      : value
  })
}

/** The flag a key path came from: apps[0].<key>, or --metrics for metrics.listen. */
function flagOf (keyPath) {
  if (keyPath[0] === 'metrics') return '--metrics'
  return keyPath[0] === 'apps' ? FLAGS[keyPath[2]] : undefined
}

module.exports = { fromFlags }
