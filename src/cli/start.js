'use strict'

// `httpsys start`: maps argv to a plain request and hands it to src/config (which app(s))
// and src/supervisor (run them in the foreground).

const path = require('node:path')
const { Option, InvalidArgumentError } = require('commander')
const { parseInstances, BACKENDS } = require('../config/schema')
const { setupDeps } = require('./setup-deps')

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']
// `httpsys start api.config.js` means the config file, as with pm2
const CONFIG_FILE = /\.config\.(c?js|mjs|json)$/
const SCRIPT_FILE = /\.(c?js|mjs)$/
// what an app's name can be (src/config/schema.js): `httpsys start api` may mean one
const APP_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

const EXAMPLES = `
With a script, httpsys runs that one app; with no script it runs the apps of a config
file (-c, default ./httpsys.config.js). Without --url the app's own listen(port) decides
its prefix (http://+:<port>/). Ctrl+C stops every app gracefully; press it again to force.

Examples:
  $ httpsys start app.js
  $ httpsys start app.js -u http://+:8080/ -i 2       two processes share one queue on :8080
  $ httpsys start api.js -n api -u http://+:8080/api/ --node-args "--max-old-space-size=512"
  $ httpsys start -c httpsys.config.js --json         JSON log lines (also when piped)
  $ httpsys start app.js -- --port 3000               arguments after -- go to the app
  $ httpsys start app.js --watch                      reload when a file changes (development)
  $ httpsys start --env production --env-file .env    the env_production blocks, plus .env
  $ httpsys start app.js --backend hub                the hub router, also on Windows
  $ httpsys start -c httpsys.config.js --setup        (Windows) make the URL reservations and
                                                      certificate bindings first, or say how

From another terminal: httpsys ls, httpsys reload <app|all>, httpsys logs -f.`

function register (program, deps) {
  const d = setupDeps(deps)
  program.command('start')
    .summary('run an app, or the apps of a config file, in the foreground')
    .description('Run an app, or the apps of a config file, under the httpsys supervisor, in the foreground.')
    .argument('[script]', 'the app\'s main file (a *.config.js file runs as -c)')
    .argument('[args...]', 'arguments for the app (put them after --)')
    .option('-c, --config <file>', 'run the apps of this config file (default: ./httpsys.config.js without a script)')
    .option('-u, --url <prefix>', 'URL prefix routed to the app, e.g. http://+:8080/api/ (repeatable)', collect)
    .option('-i, --instances <n>', 'processes serving the app: an integer, or "max" for one per CPU (default: 1)', instancesArg)
    .option('-n, --name <name>', 'app name in logs and the queue name (default: the script name)')
    .option('--node-args <args>', 'arguments for node itself, space-separated, e.g. "--max-old-space-size=512"')
    .option('--node <path>', 'the node that runs the apps: a path, a name on the PATH, or "self" (the node httpsys runs on); ' +
      'default: that one, or from the single executable a node >= 20 on the PATH, else its own')
    .option('--cwd <dir>', 'directory the app runs in (default: the current one)')
    .option('-w, --watch [paths]', 'reload on file changes: the app\'s cwd, or these comma-separated paths (with -c: every app)')
    .option('--ignore-watch <paths>', 'comma-separated paths or globs whose changes do not reload', list)
    .option('--wait-ready', 'the app is ready when it calls process.send(\'ready\'), not at its first listen()')
    .option('--no-http', 'the app serves no HTTP (a queue consumer, a cron job): ready once started')
    .option('--kill-timeout <duration>', 'how long a stop may take before the process tree is killed (default: 10s)')
    .option('--max-memory-restart <size>', 'reload an instance whose memory stays above this, e.g. 300M')
    .addOption(new Option('--restart <when>', 'restart an app that exits by itself (default: always)').choices(['always', 'on-failure', 'never']))
    .option('--log-dir <dir>', 'also write <name>.log there (rotated at 10M, 5 kept)')
    .option('--env <name>', 'merge each app\'s env_<name> over its env (config files)')
    .option('--env-file <file>', 'KEY=value lines added to every app\'s environment')
    .addOption(new Option('--backend <router>', 'the router: auto (HTTP.SYS on Windows when its addon loads and every app ' +
      'has --url/urls, else the hub), httpsys (HTTP.SYS, Windows only) or hub (default: the config\'s backend, else auto)')
      .choices(BACKENDS))
    .option('--metrics <host:port>', 'serve Prometheus /metrics and /healthz there, e.g. 127.0.0.1:9464 (default: the config\'s metrics, else off)')
    .addOption(new Option('--log-level <level>', 'least level logged, for httpsys and the apps').choices(LOG_LEVELS).default('info'))
    .option('--json', 'write JSON log lines even in a terminal')
    .option('--setup', 'Windows: first make the URL reservations and certificate bindings (tls) the config needs ' +
      '(elevated), or print the commands that would and start nothing; on HTTP.SYS, an https app\'s own key and ' +
      'certificate are then bound to a port that has no binding')
    .option('-d, --daemon', 'run in the background: wait until every app is ready, print where, and return the shell ' +
      '(httpsys ls, logs and stop reach it; its records go to a log file in the runtime directory)')
    .addHelpText('after', EXAMPLES)
    .action((script, args, options, command) => action(d, script, args, options, command))
}

async function action (d, script, args, options, command) {
  const request = toRequest(script, args, options, command)
  // `httpsys start api`, pm2's habit: the app of that name of this folder's supervisor
  if (isBareName(request) && await startNamedApp(d, request.script)) return
  const { resolveStartConfig } = require('../config')
  const { runForeground } = require('../supervisor')
  const config = await resolveStartConfig(request)
  // pm2 keys that were mapped or ignored: once, in the terminal that started it
  if (process.env.HTTPSYS_DAEMON !== '1') for (const w of config.source.warnings || []) process.stderr.write(`httpsys: warning: ${w}\n`)
  // a configured node that does not run (or is too old) fails here, before any app starts
  const { resolveNode } = require('../sea/worker-node')
  for (const app of config.apps) if (app.node) resolveNode(app.node)
  if (options.setup) setup(d, config)
  setupEnv(options.setup)
  if (options.daemon) return daemon(d, config, command)
  // `httpsys reload` reads the config again as this start read it (flags included)
  const cwd = process.cwd()
  const reread = () => resolveStartConfig(request, { cwd })
  const code = await runForeground(config, { json: request.json, logLevel: request.logLevel, reread })
  // the supervisor owns this process: once everything is stopped, nothing else may keep it
  process.exit(code)
}

/**
 * --setup: the reservations and bindings the config needs. Elevated (or unknown), they
 * are made and each is printed; not elevated, the commands are printed and nothing
 * starts (ERR_HTTPSYS_SETUP_REQUIRED). Off Windows the hub needs none of it.
 */
function setup (d, config) {
  if (!d.windows) {
    d.out('--setup: the router here is httpsys\'s native router, which needs no URL reservation or certificate binding\n')
    return
  }
  const { planSetup } = require('../setup/start-setup')
  const sc = d.serviceConfig()
  const { steps, notes } = planSetup(config, sc)
  for (const note of notes) d.out(`--setup: ${note}\n`)
  if (steps.length === 0) {
    d.out('--setup: every URL reservation and certificate binding the config needs is in place\n')
    return
  }
  if (sc.isElevated() === false) {
    d.out('--setup: run these once from an elevated prompt (or `httpsys start --setup` there):\n')
    // several tls entries of PEM text have the same command: `httpsys start --setup`
    for (const command of new Set(steps.map((step) => step.command))) d.out(`  ${command}\n`)
    const { codes } = require('../errors')
    throw new codes.ERR_HTTPSYS_SETUP_REQUIRED({ count: steps.length })
  }
  for (const step of steps) {
    step.run()
    d.out(`--setup: ${step.what}: done\n`)
  }
}

/**
 * --setup also reaches the workers (ENV.SETUP, src/worker-interface.js): on HTTP.SYS, an
 * https app whose port has no certificate binding gets the key and certificate it passes
 * to https.createServer() bound when it attaches. Only the flag turns it on: a value
 * inherited from the shell is dropped, except in the daemon that `start -d --setup`
 * starts (its arguments have no --setup: the setup above ran in the first process).
 * @param {boolean} [asked] --setup was given
 * @param {NodeJS.ProcessEnv} [env] the supervisor's environment (the workers inherit it)
 */
function setupEnv (asked, env = process.env) {
  const { ENV } = require('../worker-interface')
  if (asked) env[ENV.SETUP] = '1'
  else if (env.HTTPSYS_DAEMON !== '1') delete env[ENV.SETUP]
}

/**
 * -d: the same start, detached; this prints the apps' ready lines (or why it failed)
 * and returns. The exit code is 0 once every app is ready, 1 when one failed.
 */
async function daemon (d, config, command) {
  const { startDaemon, daemonFailure } = require('../supervisor/daemon')
  const { prettyStream } = require('../supervisor/output')
  const argv = command.parent.rawArgs.slice(command.parent.rawArgs.indexOf('start') + 1)
    .filter((a) => a !== '-d' && a !== '--daemon' && a !== '--setup' && a !== '--json')
  // the single executable is its own CLI: it is started again as `httpsys <itself> start ...`,
  // as node is as `node bin/httpsys start ...` (src/sea/main.js drops that argument)
  const { isSea } = require('../sea')
  const result = await startDaemon(config, argv, { ...(isSea() ? { bin: process.execPath } : {}), progress: (line) => d.out(line) })
  const show = (records) => {
    const sink = prettyStream({ write: (line) => d.out(line) })
    for (const r of records) sink.write(JSON.stringify(r))
  }
  if (result.ok) {
    show(result.records.filter((r) => r.event === 'app-ready' || r.event === 'all-ready'))
    const c = await scopeHint(result.pid, config)
    d.out(`httpsys runs in the background (pid ${result.pid}); \`httpsys ls${c}\`, \`httpsys logs -f${c}\`, \`httpsys stop all${c}\`; its log: ${result.log}\n`)
    process.exit(0)
  }
  show(result.records.filter((r) => r.raw === undefined && (r.level >= 40 || r.stream === 'stderr')))
  // the supervisor's own failure (a port taken, already running): its message as printed
  for (const r of result.records) if (r.raw !== undefined) d.out(r.raw + '\n')
  d.out(daemonFailure(result))
  process.exit(1)
}

/**
 * What the commands in the hint after -d need to reach this supervisor: nothing when it
 * is the only one of this folder, else its -c (the hint must be a command that works).
 */
async function scopeHint (pid, config) {
  const { select, labelOf } = require('../supervisor/control-client')
  let found = []
  try { found = await select() } catch {}
  if (found.length === 1 && found[0].pid === pid) return ''
  const label = labelOf({ config: config.source.configFile, script: config.source.script })
  return ` -c ${/[\s"'$`\\]/.test(label) ? JSON.stringify(label) : label}`
}

/**
 * `httpsys start api`: a word that could be an app's name, given alone, and no file of
 * that name here (a path to a script always runs the script).
 */
function isBareName (request) {
  const fs = require('node:fs')
  const { config, script, ...rest } = request
  if (config !== undefined || typeof script !== 'string' || !APP_NAME.test(script) || fs.existsSync(script)) return false
  const appFlags = ['urls', 'instances', 'name', 'nodeArgs', 'cwd', 'ignoreWatch', 'waitReady', 'killTimeout', 'maxMemoryRestart', 'restart', 'logDir']
  return rest.args.length === 0 && !rest.noHttp && rest.watch === undefined && appFlags.every((k) => rest[k] === undefined)
}

/**
 * Starts the app `name` of this folder's supervisor (pm2's `pm2 start api`): a stopped or
 * errored one is started again and this waits until it is ready; a running one is left
 * as it is. With no such app here, a script of that name must exist: it does not, so
 * this says what there is (never a new supervisor running ./api.js on a port its
 * listen() picks).
 * @returns {Promise<boolean>} true when it was an app's name (handled)
 */
async function startNamedApp (d, name) {
  const path = require('node:path')
  const { codes } = require('../errors')
  const { select, request } = require('../supervisor/control-client')
  let supervisors = []
  try {
    supervisors = await select()
  } catch (err) {
    if (err.code !== 'ERR_HTTPSYS_NOT_RUNNING') throw err
  }
  const withApp = supervisors.filter((s) => Array.isArray(s.apps) && s.apps.includes(name))
  if (withApp.length === 0) {
    const running = [...new Set(supervisors.flatMap((s) => s.apps || []))]
    // node would run ./api.js for `node api`: name it, so running it is a choice
    let near = null
    try { near = path.relative(process.cwd(), require.resolve(path.resolve(name))) } catch {}
    throw new codes.ERR_HTTPSYS_SCRIPT_NOT_FOUND({
      script: path.resolve(name),
      fix: `No app named ${JSON.stringify(name)} runs in this folder${running.length ? ` (its supervisor runs: ${running.join(', ')})` : ''}. ` +
        (near
          ? `To run ${near}, name the file: \`httpsys start ${near}\`.`
          : 'Give the path of the app\'s script (`httpsys start app.js`), or run this folder\'s config with `httpsys start`.')
    })
  }
  if (withApp.length > 1) {
    const { ambiguous } = require('../supervisor/control-client')
    throw ambiguous(withApp)
  }
  const [s] = withApp
  const before = await request(s, { cmd: 'show', app: name })
  if (RUNNING.has(before.state)) {
    d.out(`${name} [${s.label}]: already running (${before.state}); \`httpsys reload ${name}\` replaces its processes with no failed request\n`)
    return true
  }
  await request(s, { cmd: 'restart', app: name })
  const state = await settle(() => request(s, { cmd: 'show', app: name }))
  if (state.state === 'ready') {
    d.out(`${name} [${s.label}]: started (${state.instances.length} instance${state.instances.length === 1 ? '' : 's'} ready)\n`)
    return true
  }
  d.out(`${name} [${s.label}]: ${state.state}; \`httpsys logs ${name}\` says why\n`)
  process.exitCode = 1
  return true
}

// app states that need no start (src/supervisor/app-group.js state())
const RUNNING = new Set(['ready', 'starting', 'reloading'])

/** Polls until the app is ready or has failed (errored, exited, stopped), within a minute. */
async function settle (show, timeout = 60000) {
  const end = Date.now() + timeout
  for (;;) {
    const state = await show()
    if (!RUNNING.has(state.state) || state.state === 'ready' || Date.now() > end) return state
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** argv -> the plain request src/config understands; usage errors exit 2. */
function toRequest (script, args, options, command) {
  let config = options.config
  let watch = options.watch
  // `httpsys start --watch app.js`: the optional value took the script
  if (!script && typeof watch === 'string' && SCRIPT_FILE.test(watch)) {
    script = watch
    watch = true
  }
  if (script && !config && CONFIG_FILE.test(script)) {
    config = script
    script = undefined
  }
  const appFlags = [
    script && 'a script',
    args.length > 0 && 'app arguments',
    options.url && '--url',
    options.instances !== undefined && '--instances',
    options.name !== undefined && '--name',
    options.nodeArgs !== undefined && '--node-args',
    options.cwd !== undefined && '--cwd',
    typeof watch === 'string' && '--watch <paths>',
    options.ignoreWatch !== undefined && '--ignore-watch',
    options.waitReady !== undefined && '--wait-ready',
    options.http === false && '--no-http',
    options.killTimeout !== undefined && '--kill-timeout',
    options.maxMemoryRestart !== undefined && '--max-memory-restart',
    options.restart !== undefined && '--restart',
    options.logDir !== undefined && '--log-dir'
  ].filter(Boolean)
  if (options.env !== undefined && !config && script) {
    command.error('error: --env selects the env_<name> blocks of a config file; with a script use --env-file')
  }
  if (config && appFlags.length > 0) {
    command.error(`error: ${appFlags.join(', ')} cannot be combined with a config file (${config}); ` +
      'set these on the app in the config file, or start a script without -c')
  }
  if (!script && appFlags.length > 0) {
    const s = appFlags.length === 1 ? 's' : ''
    command.error(`error: ${appFlags.join(', ')} describe${s} one app and need${s} its script ` +
      '(httpsys start app.js ...); for the apps of httpsys.config.js set them in the file')
  }
  return {
    config,
    script,
    args,
    urls: options.url,
    instances: options.instances,
    name: options.name,
    nodeArgs: options.nodeArgs,
    // a path typed in a shell is relative to the shell, also with -c
    node: options.node !== undefined && /[\\/]/.test(options.node) ? path.resolve(options.node) : options.node,
    cwd: options.cwd !== undefined ? path.resolve(options.cwd) : undefined,
    watch: typeof watch === 'string' ? list(watch) : watch,
    ignoreWatch: options.ignoreWatch,
    waitReady: options.waitReady,
    noHttp: options.http === false,
    killTimeout: options.killTimeout,
    maxMemoryRestart: options.maxMemoryRestart,
    restart: options.restart,
    logDir: options.logDir !== undefined ? path.resolve(options.logDir) : undefined,
    env: options.env,
    envFile: options.envFile,
    backend: options.backend,
    metrics: options.metrics,
    logLevel: options.logLevel,
    json: Boolean(options.json)
  }
}

function list (value) {
  return String(value).split(',').map((v) => v.trim()).filter(Boolean)
}

function collect (value, previous) {
  return (previous || []).concat(value)
}

function instancesArg (value) {
  const n = parseInstances(value)
  if (n === undefined) throw new InvalidArgumentError('It must be an integer >= 1 or "max".')
  return n
}

module.exports = { register, toRequest, setup, setupEnv }
