'use strict'

// pm2's ecosystem file, run as it is (issue 28): the keys of pm2's "Configuration File"
// reference (https://pm2.keymetrics.io/docs/usage/application-declaration/) that mean
// something here become ours, and each one that does not is dropped with one warning
// line saying why. Only keys httpsys does not know itself are looked up here: where both
// spell a key the same (script, instances, env, watch, kill_timeout, ...) it is ours.
//
// Each row is (value, k) => a result, where k carries the app as translated so far
// (k.raw: httpsys keys), the app as the file wrote it (k.pm2), the key's validation
// context (k.ctx: k.ctx.fail(reason, fix) rejects the value) and the folder relative
// paths start at (k.dir). A result sets our keys ({ set: { key: value } }),
// says what the user should know ({ warn: 'text' }), or both; an empty one means the key
// is already what httpsys does.

const os = require('node:os')
const path = require('node:path')
const { parseDuration } = require('./duration')

const ignored = (why) => () => ({ warn: `ignored: ${why}` })
// a key that turns on what httpsys does not do: set to false it asks for what happens anyway
const ignoredWhenOn = (why) => (value) => value === false || value === null ? {} : { warn: `ignored: ${why}` }

// where pm2 writes an app's output; here the app's records go to <log_dir>/<name>.log
const LOG_FILE_KEYS = ['out_file', 'output', 'error_file', 'error', 'log_file', 'log']

const APP_KEYS = {
  exec_mode: ignored('every instance takes requests from the app\'s one queue, so fork and cluster mode are the same here'),
  interpreter,
  exec_interpreter: interpreter,
  interpreter_args: (value, k) => k.raw.node_args === undefined
    ? { set: { node_args: value } }
    : { warn: 'ignored: node_args is set, and it is the same thing' },
  autorestart (value, k) {
    bool(value, k.ctx)
    if (k.raw.restart !== undefined) return { warn: `ignored: restart is set (${JSON.stringify(k.raw.restart)})` }
    return value ? {} : { set: { restart: 'never' } }
  },
  restart_delay (value, k) {
    const ms = duration(value, k.ctx)
    if (k.raw.backoff !== undefined) return { warn: 'ignored: backoff is set' }
    if (k.pm2.exp_backoff_restart_delay !== undefined) return { warn: 'ignored: exp_backoff_restart_delay is set' }
    // pm2 waits the same delay before every restart
    return { set: { backoff: { initial: Math.max(1, ms), max: Math.max(1, ms), factor: 1, jitter: 0 } } }
  },
  exp_backoff_restart_delay (value, k) {
    const ms = duration(value, k.ctx)
    if (k.raw.backoff !== undefined) return { warn: 'ignored: backoff is set' }
    // pm2: the delay grows by 1.5 per restart up to 15 s, and resets after 30 s of uptime
    return { set: { backoff: { initial: Math.max(1, ms), max: Math.max(ms, 15000), factor: 1.5, reset_after: 30000 } } }
  },
  port (value, k) {
    // pm2 sets PORT for the app to listen on: the same here, and its listen() picks the prefix
    const env = k.raw.env !== null && typeof k.raw.env === 'object' && !Array.isArray(k.raw.env) ? k.raw.env : {}
    if (env.PORT !== undefined) return { warn: 'ignored: env.PORT is set' }
    if (k.raw.urls !== undefined) return { warn: 'ignored: urls is set, and PORT is the port of its first URL' }
    return { set: { env: { ...env, PORT: value } } }
  },
  source_map_support (value, k) {
    if (value !== true) return {}
    const given = k.raw.node_args === undefined ? [] : k.raw.node_args
    const args = typeof given === 'string' ? given.split(/\s+/).filter(Boolean) : [].concat(given)
    // node's own source maps (pm2 loads the source-map-support module for the same)
    return args.includes('--enable-source-maps') ? {} : { set: { node_args: [...args, '--enable-source-maps'] } }
  },
  disable_source_map_support: () => ({}),
  // output: one file per app, every instance's records in it, each with its time
  merge_logs: mergeLogs,
  combine_logs: mergeLogs,
  time: () => ({}),
  log_type: (value) => value === 'json' ? {} : { warn: 'ignored: log files hold one JSON record per line (NDJSON)' },
  log_date_format: ignored('every record carries its time (`time`, ms since 1970, in log files; HH:MM:ss.l in a terminal and in `httpsys logs`)'),
  disable_logs: () => ({}),
  treekill: (value) => value === false ? { warn: 'ignored: a stop ends the app\'s whole process tree, after kill_timeout' } : {},
  shutdown_with_message: ignoredWhenOn('an app is stopped through its SIGINT/SIGTERM listeners (the preload runs them), else its servers are closed'),
  instance_var: ignored('each instance has NODE_APP_INSTANCE and HTTPSYS_INSTANCE (0, 1, ...): read one of those'),
  increment_var: ignored('each instance has NODE_APP_INSTANCE and HTTPSYS_INSTANCE (0, 1, ...) to derive a number from'),
  cron_restart: ignored('no timed restarts here: a cron job or systemd timer running `httpsys reload <app>` does it without a failed request'),
  pid_file: ignored('no pid files: `httpsys ls --json` lists every instance\'s pid'),
  uid: ignored('the apps run as the user httpsys runs as: `httpsys service install --user <account>` picks one'),
  gid: ignored('the apps run as the user httpsys runs as: `httpsys service install --user <account>` picks one'),
  watch_options: ignored('watching takes watch, ignore_watch and watch_delay'),
  autostart: (value) => value === false ? { warn: 'ignored: every app of the file starts; `httpsys stop <app>` stops one' } : {},
  force: ignoredWhenOn('httpsys never runs the same config twice'),
  namespace: ignored('apps are grouped by their config file: `httpsys ls` shows each supervisor'),
  append_env_to_name: ignored('the app keeps its name whatever --env says'),
  filter_env: ignored('the app gets httpsys\'s environment with env (and env_<name>) merged over it'),
  vizion: ignoredWhenOn('pm2\'s versioning metadata is not kept'),
  post_update: ignored('pm2\'s Keymetrics actions do not exist here'),
  pmx: ignoredWhenOn('metrics come from httpsys itself (`httpsys ls`, metrics.listen)'),
  automation: ignoredWhenOn('metrics come from httpsys itself (`httpsys ls`, metrics.listen)'),
  trace: ignoredWhenOn('pm2\'s transaction tracing does not exist here'),
  disable_trace: () => ({}),
  kill_retry_time: ignored('a stop waits kill_timeout, then ends the process tree'),
  windowsHide: () => ({})
}
for (const key of LOG_FILE_KEYS) APP_KEYS[key] = logFile

// Top-level keys of an ecosystem file besides `apps`.
const TOP_KEYS = {
  deploy: ignored('pm2 deploy (ssh, git pull, post-deploy) is not part of httpsys: deploy with your own tool, then `httpsys reload all`')
}

/**
 * An app of an ecosystem file as httpsys keys.
 * @param {object} raw the app as the file wrote it
 * @param {object} ctx the app's validation context (validate.js); ctx.at(key).fail rejects
 * @param {string[]} known httpsys's own app keys: never looked up here
 * @param {(check: () => void) => void} collect runs a check, keeping a config problem for the report
 * @returns {{ app: object, warnings: string[] }}
 */
function fromPm2App (raw, ctx, known, collect) {
  const app = { ...raw }
  const warnings = []
  // an app's paths start at its cwd, which starts at the config file's folder
  const dir = typeof raw.cwd === 'string' ? path.resolve(ctx.baseDir, raw.cwd) : ctx.baseDir
  for (const key of Object.keys(raw)) {
    if (known.includes(key) || !Object.hasOwn(APP_KEYS, key)) continue
    delete app[key]
    collect(() => {
      const at = ctx.at(key)
      const result = APP_KEYS[key](raw[key], { raw: app, pm2: raw, ctx: at, dir }) || {}
      Object.assign(app, result.set)
      if (result.warn) warnings.push(`${at.label}${ctx.appName ? ` (app ${ctx.appName})` : ''}: ${result.warn}`)
    })
  }
  return { app, warnings }
}

/**
 * The top level of an ecosystem file: its keys besides `apps` that pm2 knows.
 * @returns {{ config: object, warnings: string[] }}
 */
function fromPm2Top (raw, root) {
  const config = { ...raw }
  const warnings = []
  for (const key of Object.keys(raw)) {
    if (!Object.hasOwn(TOP_KEYS, key)) continue
    delete config[key]
    warnings.push(`${root.at(key).label}: ${TOP_KEYS[key](raw[key]).warn}`)
  }
  return { config, warnings }
}

function interpreter (value, k) {
  if (typeof value !== 'string' || value.trim() === '') k.ctx.fail('must be the path of node', 'For example interpreter: "node", or remove it.')
  const base = path.basename(value.trim()).toLowerCase().replace(/\.exe$/, '')
  if (base !== 'node' && base !== 'nodejs') {
    k.ctx.fail(`is ${JSON.stringify(value)}, but httpsys runs node apps only`, 'Remove it (apps run on node), or run that program another way.')
  }
  if (value === 'node' || value === 'nodejs') return {}
  if (k.raw.node !== undefined) return { warn: 'ignored: node is set, and it is the same thing' }
  return { set: { node: value } }
}

/**
 * out_file, error_file, log_file: pm2's files become the app's log_dir, where it writes
 * <name>.log, one JSON record per line, stdout and stderr in one file (each record says
 * which). The first of them names the folder; one elsewhere is said to be unused.
 */
function logFile (value, k) {
  const key = k.ctx.name
  if (value === false || value === '/dev/null' || value === 'NULL' || (key === 'log' && value === true)) return {}
  if (typeof value !== 'string' || value.trim() === '') k.ctx.fail(`must be a file path, got ${JSON.stringify(value)}`, `For example ${key}: "./logs/out.log".`)
  if (k.pm2.disable_logs === true) return {}
  if (k.pm2.log_dir !== undefined) return { warn: 'ignored: log_dir is set' }
  const file = path.resolve(k.dir, value.startsWith('~/') ? path.join(os.homedir(), value.slice(2)) : value)
  const dir = path.dirname(file)
  // k.raw.log_dir: the folder the first of these keys chose
  if (k.raw.log_dir === undefined) {
    const script = typeof k.raw.script === 'string' ? k.raw.script : ''
    const name = typeof k.raw.name === 'string' ? k.raw.name : path.basename(script, path.extname(script)) || '<name>'
    return {
      set: { log_dir: dir },
      warn: `written as ${path.join(dir, `${name}.log`)} instead: one JSON record per line, stdout and stderr together (log_dir: ${JSON.stringify(dir)})`
    }
  }
  if (k.raw.log_dir === dir) return {}
  return { warn: `ignored: every record of the app goes to ${k.raw.log_dir} (one file per app)` }
}

function mergeLogs (value) {
  return value === false ? { warn: 'ignored: every instance writes to the app\'s one log file, each record with its inst' } : {}
}

function bool (value, ctx) {
  if (typeof value !== 'boolean') ctx.fail(`must be true or false, got ${JSON.stringify(value)}`, `For example ${ctx.name}: false.`)
}

function duration (value, ctx) {
  const ms = parseDuration(value)
  if (ms === undefined) ctx.fail(`must be a duration, got ${JSON.stringify(value)}`, `For example ${ctx.name}: 4000 (milliseconds).`)
  return ms
}

module.exports = { fromPm2App, fromPm2Top, APP_KEYS, TOP_KEYS }
