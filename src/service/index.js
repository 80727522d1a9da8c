'use strict'

// `httpsys service install|uninstall|status|run`: httpsys as the machine's service for
// one config file. Each platform's service manager does what it does best (starting
// at boot, restarting after a failure, stopping at shutdown) and httpsys does the rest
// as in a terminal: `httpsys start -c <config>` in the foreground, stopped gracefully.
//
//   common.js    names, the stop time a config needs, the httpsys entry to start
//   systemd.js   Linux: a unit file (templates/httpsys.service)
//   launchd.js   macOS: a plist (templates/httpsys.plist)
//   windows.js   Windows: a service through the SCM, its account and URL reservations
//   scm.js       the addon's service calls -> coded errors
//   run.js       Windows: the process the SCM starts

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { codes } = require('../errors')
const { nameProblem, defaultName, httpsysBin, installNotes } = require('./common')
const { pidAlive } = require('../local-socket')

const DEFAULT_CONFIG = 'httpsys.config.js'

/** A mistake in the arguments: the CLI turns it into a usage error (exit 2). */
class UsageError extends Error {}

/**
 * What the commands work with; tests replace any of it.
 * @param {object} [deps]
 */
function serviceDeps (deps = {}) {
  const platform = deps.platform || process.platform
  const env = deps.env || process.env
  const info = deps.userInfo || safeUserInfo()
  return {
    platform,
    env,
    uid: deps.uid !== undefined ? deps.uid : (typeof process.getuid === 'function' ? process.getuid() : -1),
    username: deps.username || info.username,
    home: deps.home || info.homedir || os.homedir(),
    cwd: deps.cwd || process.cwd(),
    execPath: deps.execPath || process.execPath,
    // a single executable is the whole product: it is the service's program, no script
    bin: deps.bin !== undefined ? deps.bin : require('../sea').isSea() ? null : httpsysBin(),
    fsys: deps.fsys || fs,
    lookupUser: deps.lookupUser || lookupUser,
    runtimeDir: deps.runtimeDir || (() => require('../supervisor/control-path').runtimeDir(env)),
    getAddon: deps.loadAddon || (() => require('../httpsys/loader').load()),
    serviceConfig: deps.serviceConfig || null,
    password: deps.password || ((account) => readPassword(account, env)),
    sleep: deps.sleep,
    waitMs: deps.waitMs,
    loadConfig: deps.loadConfig || loadConfig,
    // systemctl, launchctl: only for --now and for the stop before an uninstall
    exec: deps.exec || execCommand
  }
}

/** Runs a command to its end: { status, stdout, stderr, error } (error: ENOENT when there is no such program). */
function execCommand (argv) {
  const { spawnSync } = require('node:child_process')
  return spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: 120000 })
}

function safeUserInfo () {
  try {
    return os.userInfo()
  } catch {
    return { username: process.env.USER || process.env.USERNAME || 'unknown', homedir: os.homedir() }
  }
}

async function loadConfig (configFile) {
  const { resolveStartConfig } = require('../config')
  return resolveStartConfig({ config: configFile })
}

function scmOf (d) {
  if (!d.scm) d.scm = require('./scm').createScm(d.getAddon)
  return d.scm
}

function scOf (d) {
  if (!d.serviceConfig) d.serviceConfig = require('../httpsys/service-config').createServiceConfig(d.getAddon)
  return d.serviceConfig
}

/** The config file and the service name a command is about. */
function identify (request, d) {
  const resolve = d.platform === 'win32' && /^[A-Za-z]:[\\/]/.test(request.config || '') ? path.win32.resolve : path.resolve
  const configFile = resolve(d.cwd, request.config || DEFAULT_CONFIG)
  const name = request.name !== undefined ? request.name : defaultName(configFile)
  const problem = nameProblem(name)
  if (problem !== null) throw new UsageError(`error: the service name ${JSON.stringify(name)} ${problem} (give one with --name)`)
  return { configFile, name }
}

/**
 * Linux and macOS: a user service unless --system (or, as root, --user <account>, which
 * only a system service can have). As root with neither, which one is the user's to
 * say: a system service runs the apps as root unless told otherwise, and root's own
 * user service starts only with root's user manager; neither is what `sudo httpsys
 * service install` usually means, so this asks rather than guesses (issue 28).
 */
function scopeOf (request, d, verb) {
  const root = d.uid === 0
  if (root && !request.system && request.user === undefined && verb === 'install') {
    const who = d.env.SUDO_USER && d.env.SUDO_USER !== 'root' ? d.env.SUDO_USER : '<account>'
    throw new UsageError('error: as root, say which service: `httpsys service install --system --user ' + who +
      '` (a system service that runs the apps as that account; --system alone runs them as root), or a user service: ' +
      '`httpsys service install` as the user who runs the apps, without sudo')
  }
  const system = Boolean(request.system) || (root && request.user !== undefined)
  if (request.user !== undefined && !system) {
    if (request.user === d.username) return { system: false, user: undefined }
    throw new UsageError(`error: --user needs a system service (--system, as root): a user service runs as the user who ${verb}s it (${d.username})`)
  }
  return { system, user: request.user, root }
}

function commandLine (verb, target, extra = '') {
  const q = (s) => /^[A-Za-z0-9_@%+=:,./\\-]+$/.test(s) ? s : `"${s}"`
  return `httpsys service ${verb}${target.configFile && verb === 'install' ? ` -c ${q(target.configFile)}` : ''} --name ${target.name}${extra}`
}

/**
 * @param {object} request { config, name, user, system }
 * @param {object} [deps] see serviceDeps()
 * @returns {Promise<object>} what was written or created, the commands to run, notes
 */
async function install (request, deps) {
  const d = serviceDeps(deps)
  const { configFile, name } = identify(request, d)
  if (!['linux', 'darwin', 'win32'].includes(d.platform)) throw new codes.ERR_HTTPSYS_SERVICE_UNSUPPORTED({ platform: d.platform })
  const config = await d.loadConfig(configFile)
  const base = { name, configFile, config, execPath: d.execPath, bin: d.bin, env: d.env, uid: d.uid, username: d.username, home: d.home }
  const notes = installNotes(base)
  if (d.platform === 'win32') {
    if (request.system) throw new UsageError('error: --system is for Linux and macOS: a Windows service always belongs to the machine')
    const target = { ...base, user: request.user, dryRun: Boolean(request.dryRun) }
    target.command = commandLine('install', target, request.user ? ` --user "${request.user}"` : '')
    const result = await require('./windows').install(target, { scm: scmOf(d), sc: scOf(d), password: d.password })
    const started = request.now && !request.dryRun ? startWindows(scmOf(d), target) : false
    return { platform: 'win32', kind: 'Windows service', dryRun: Boolean(request.dryRun), started, ...result, notes: [...result.notes, ...notes] }
  }
  const scope = scopeOf(request, d, 'install')
  const target = { ...base, ...scope, runtimeDir: d.runtimeDir() }
  target.command = commandLine('install', target, `${request.system ? ' --system' : ''}${scope.user ? ` --user ${scope.user}` : ''}`)
  if (scope.system && !scope.root) {
    throw new codes.ERR_HTTPSYS_SERVICE_DENIED({ action: 'install', path: 'a system service', reason: 'that needs root', command: `sudo ${target.command}` })
  }
  if (scope.user !== undefined) {
    if (!/^[a-z_][a-z0-9_.-]*\$?$/i.test(scope.user)) throw new UsageError(`error: --user ${JSON.stringify(scope.user)} is not a user name`)
    if (d.lookupUser(scope.user) === false) throw new UsageError(`error: --user ${scope.user}: no such user on this machine`)
  }
  const impl = d.platform === 'linux' ? require('./systemd') : require('./launchd')
  const result = impl.install(target, { fsys: d.fsys, dryRun: Boolean(request.dryRun) })
  // --now: the printed commands, run (`systemctl enable --now`), each one's failure said
  const started = request.now && !request.dryRun ? runSteps(d, result.start, name, result.commands) : false
  return {
    platform: d.platform,
    kind: d.platform === 'linux' ? 'systemd unit' : 'launchd job',
    name,
    configFile,
    dryRun: Boolean(request.dryRun),
    started,
    ...result,
    notes: [...result.notes, ...notes]
  }
}

/** Runs argv lists in order; the first that fails is an error naming it and what is left to run. */
function runSteps (d, steps, name, commands) {
  steps.forEach((argv, i) => {
    const r = d.exec(argv)
    if (!r.error && r.status === 0) return
    throw new codes.ERR_HTTPSYS_SERVICE_DENIED({
      action: 'start',
      path: name,
      reason: `\`${argv.join(' ')}\` ${r.error ? `could not run (${r.error.code})` : `said: ${String(r.stderr || `exit code ${r.status}`).trim().split('\n')[0]}`}`,
      fix: `It is installed; run what is left yourself: ${commands.slice(i).map((c) => `\`${c}\``).join(', then ')}`
    })
  })
  return true
}

function startWindows (scm, target) {
  scm.control(target.name, 'start', { what: `Starting the Windows service ${target.name}`, command: `sc.exe start ${target.name}` })
  return true
}

/** @returns {Promise<object>} { removed, commands, ... } */
async function uninstall (request, deps) {
  const d = serviceDeps(deps)
  const { configFile, name } = identify(request, d)
  if (d.platform === 'win32') {
    const target = { name, configFile, env: d.env }
    target.command = commandLine('uninstall', target)
    const result = await require('./windows').uninstall(target, { scm: scmOf(d), sc: scOf(d), sleep: d.sleep, waitMs: d.waitMs })
    return { platform: 'win32', kind: 'Windows service', ...result }
  }
  if (!['linux', 'darwin'].includes(d.platform)) throw new codes.ERR_HTTPSYS_SERVICE_UNSUPPORTED({ platform: d.platform })
  const system = Boolean(request.system) || d.uid === 0
  const target = { name, system, env: d.env, uid: d.uid, home: d.home }
  target.command = commandLine('uninstall', target, request.system ? ' --system' : '')
  const impl = d.platform === 'linux' ? require('./systemd') : require('./launchd')
  return { platform: d.platform, kind: d.platform === 'linux' ? 'systemd unit' : 'launchd job', name, ...impl.uninstall(target, { fsys: d.fsys, exec: d.exec }) }
}

/**
 * What is installed under the name, and whether its supervisor runs (its state file).
 * @returns {Promise<object>}
 */
async function status (request, deps) {
  const d = serviceDeps(deps)
  const { name } = identify(request, d)
  if (d.platform === 'win32') {
    return { platform: 'win32', kind: 'Windows service', ...require('./windows').status({ name, env: d.env }, { scm: scmOf(d) }) }
  }
  if (!['linux', 'darwin'].includes(d.platform)) throw new codes.ERR_HTTPSYS_SERVICE_UNSUPPORTED({ platform: d.platform })
  const impl = d.platform === 'linux' ? require('./systemd') : require('./launchd')
  const kind = d.platform === 'linux' ? 'systemd unit' : 'launchd job'
  // the scope asked for first, then the other one (a user looking for a system unit)
  const first = Boolean(request.system) || d.uid === 0
  let found = null
  for (const system of [first, !first]) {
    const s = impl.status({ name, system, env: d.env, uid: d.uid, home: d.home }, { fsys: d.fsys })
    if (s.installed) {
      found = s
      break
    }
    if (found === null) found = s
  }
  const out = { platform: d.platform, kind, name, ...found, supervisor: null }
  if (found.installed && found.runtimeDir && found.configFile) out.supervisor = runningSupervisor(found.runtimeDir, found.configFile)
  return out
}

/** { pid, startedAt } of the supervisor of configFile in dir, null when none runs, 'unknown' when dir is not ours to read. */
function runningSupervisor (dir, configFile) {
  const paths = require('../supervisor/control-path')
  let states
  try {
    states = paths.readStates(dir)
  } catch {
    return 'unknown'
  }
  const id = paths.identityOfConfigFile(configFile)
  const state = states.find((s) => s.id === id)
  if (!state) return null
  if (!pidAlive(state.pid)) return null
  return { pid: state.pid, startedAt: state.startedAt || null }
}

/**
 * `httpsys service run` (Windows): host the service, run the supervisor.
 * @returns {Promise<number>} the exit code
 */
async function run (request, deps) {
  const d = serviceDeps(deps)
  const { configFile, name } = identify(request, d)
  if (d.platform !== 'win32') {
    throw new UsageError('error: `httpsys service run` is what the Windows service control manager starts; ' +
      'systemd and launchd run `httpsys start -c <config>` (see `httpsys service install`)')
  }
  const { runService } = require('./run')
  return runService({ name, configFile, logLevel: request.logLevel }, {
    host: (deps && deps.host) || scmOf(d).host,
    ...(deps && deps.run)
  })
}

/** The password of a real account: $HTTPSYS_SERVICE_PASSWORD, or asked for in a terminal (not echoed). */
async function readPassword (account, env) {
  if (env.HTTPSYS_SERVICE_PASSWORD) return env.HTTPSYS_SERVICE_PASSWORD
  if (!process.stdin.isTTY) {
    throw new codes.ERR_INVALID_ARG_VALUE({ name: '--user', value: account.shown, reason: 'needs its password: set HTTPSYS_SERVICE_PASSWORD, or run in a terminal to be asked' })
  }
  const readline = require('node:readline')
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout, terminal: true })
  // echo nothing of what is typed
  rl._writeToOutput = () => {}
  process.stdout.write(`password of ${account.shown}: `)
  try {
    return await new Promise((resolve) => rl.question('', resolve))
  } finally {
    rl.close()
    process.stdout.write('\n')
  }
}

function lookupUser (name) {
  const { spawnSync } = require('node:child_process')
  const r = spawnSync('getent', ['passwd', name], { encoding: 'utf8', timeout: 5000 })
  if (r.error) return null
  if (r.status === 0) return true
  return r.status === 2 ? false : null
}

module.exports = { install, uninstall, status, run, serviceDeps, UsageError, DEFAULT_CONFIG }
