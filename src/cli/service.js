'use strict'

// `httpsys service install|uninstall|status|run`: the apps of a config file as the
// machine's service (src/service). This maps options to a request and prints what came
// back; usage mistakes exit 2, coded errors 1.

const { Option } = require('commander')

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']

const EXAMPLES = `
One service runs the apps of one config file, as \`httpsys start -c <config>\` would, and
is started at boot and again after a failure. Linux: a systemd user unit, or with
--system a system unit (as root; --user <account> runs the apps as that account).
macOS: a launchd agent (or a daemon with --system). Windows: a service of the service
control manager, as NT SERVICE\\<name> by default (elevated prompt). The commands that
enable and start it are printed, or run with --now; uninstall stops it first.

Examples:
  $ httpsys service install --dry-run                        what would be written, and where
  $ httpsys service install --now                            the apps of ./httpsys.config.js, started now
  $ sudo httpsys service install --system -c /srv/shop/httpsys.config.js --user shop
  $ httpsys service status
  $ httpsys service uninstall --name httpsys-shop`

/**
 * @param {object} program commander
 * @param {object} [deps] createProgram's deps: platform, loadAddon, serviceConfig, out,
 *   and `service` (src/service/index.js serviceDeps) for tests
 */
function register (program, deps = {}) {
  const out = deps.out || ((text) => process.stdout.write(text))
  const serviceDeps = () => ({ ...deps.service, platform: deps.platform || (deps.service && deps.service.platform), loadAddon: deps.loadAddon, serviceConfig: deps.serviceConfig })
  const service = program.command('service')
    .summary('run the apps of a config file as a service: started at boot, restarted after a failure')
    .description('Install httpsys as the service of this machine (systemd, launchd, or a Windows service) for one config file.')
    .addHelpText('after', EXAMPLES)
  const common = (command) => command
    .option('-c, --config <file>', 'the config file (default: ./httpsys.config.js)')
    .option('--name <name>', 'the service name (default: httpsys-<the config\'s folder>)')
  common(service.command('install'))
    .summary('install the service for a config file')
    .description('Write the systemd unit / launchd plist (and print the commands that enable and start it), or create the Windows service ' +
      'with its recovery actions and the URL reservations its account needs. Installing again replaces our own unit or plist.')
    .option('--user <account>', 'run as this account: Linux/macOS a user (system services only); Windows LocalSystem, LocalService, ' +
      'NetworkService or DOMAIN\\user (default: the virtual account NT SERVICE\\<name>)')
    .option('--system', 'Linux/macOS: a system service (/etc/systemd/system, /Library/LaunchDaemons), as root ' +
      '(default: a user service; as root, say which)')
    .option('--now', 'also enable and start it (systemctl enable --now, launchctl bootstrap, sc.exe start)')
    .option('--dry-run', 'print what would be written (the unit or plist, where, the commands) and change nothing')
    .option('--json', 'print JSON (for scripts)')
    .action((options, command) => run(command, () => install(out, serviceDeps(), options)))
  common(service.command('uninstall'))
    .alias('remove')
    .summary('stop the service, then remove it')
    .description('Stop the service (systemctl stop, launchctl bootout, the Windows service control manager), then remove ' +
      'its unit, plist or service. A service httpsys did not install is left alone.')
    .option('--system', 'Linux/macOS: the system service, not the user one')
    .option('--json', 'print JSON (for scripts)')
    .action((options, command) => run(command, () => uninstall(out, serviceDeps(), options)))
  common(service.command('status'))
    .summary('what is installed, and whether it runs')
    .description('Show the service installed under the name: its unit, plist or Windows service, the config it runs, whether ' +
      'it is enabled, and whether its supervisor runs.')
    .option('--system', 'Linux/macOS: look for the system service first')
    .option('--json', 'print JSON (for scripts)')
    .action((options, command) => run(command, () => status(out, serviceDeps(), options)))
  common(service.command('run'))
    .summary('(Windows) what the service control manager starts: the supervisor, stopped by the SCM')
    .description('What the Windows service control manager starts (never run it by hand): it connects to the SCM, runs the ' +
      'supervisor of the config, and turns the SCM\'s stop into the graceful stop.')
    .addOption(new Option('--log-level <level>', 'least level logged').choices(LOG_LEVELS).default('info'))
    .action((options, command) => run(command, async () => {
      const code = await require('../service').run({ config: options.config, name: options.name, logLevel: options.logLevel }, serviceDeps())
      if (deps.service && deps.service.noExit) return code
      // the supervisor owned this process: once it has stopped, nothing may keep it
      process.exit(code)
    }))
}

/** Runs an action; a UsageError from src/service is a usage error here (exit 2). */
async function run (command, fn) {
  const { UsageError } = require('../service')
  try {
    return await fn()
  } catch (err) {
    if (err instanceof UsageError) command.error(err.message)
    throw err
  }
}

async function install (out, deps, options) {
  const r = await require('../service').install({
    config: options.config, name: options.name, user: options.user, system: options.system, now: options.now, dryRun: options.dryRun
  }, deps)
  if (options.json) return out(JSON.stringify(strip(r, options.dryRun), null, 2) + '\n')
  const dry = r.dryRun ? '(dry run: nothing was changed) ' : ''
  if (r.platform === 'win32') {
    for (const what of r.done) out(`${what}: done\n`)
    for (const what of r.would || []) out(`${dry}would ${what}\n`)
    out(`${dry}${r.dryRun ? 'would create' : 'created'} the Windows service ${r.name}: starts at boot, as ${r.account}\n`)
    out(`  runs: ${r.binPath}\n`)
    out(`  on failure: restarted after ${seconds(r.restartDelaysMs)}\n`)
    out(`  stop: the apps get up to ${Math.ceil(r.stopTimeoutMs / 1000)} s (the largest kill_timeout + 12 s)\n`)
  } else {
    out(`${dry}${r.dryRun ? `would ${r.replaced ? 'replace' : 'write'}` : r.replaced ? 'replaced' : 'wrote'} ${r.file} (${r.kind}, ${r.scope})\n`)
    out(`  runs: httpsys start -c ${r.configFile}\n`)
    out(`  stop: ${r.platform === 'linux' ? 'KillMode=mixed, TimeoutStopSec' : 'ExitTimeOut'} ${Math.ceil(r.stopTimeoutMs / 1000)} s (the largest kill_timeout + 12 s)\n`)
    if (r.dryRun) out(`--- ${r.file}\n${r.text}\n---\n`)
  }
  if (r.started) {
    out(`started ${r.name}: ${r.commands.join(', then ')}\n`)
  } else {
    out(r.dryRun ? 'then it would take:\n' : 'then run (or install with --now):\n')
    for (const c of r.commands) out(`  ${c}\n`)
  }
  for (const note of r.notes) out(`note: ${note}\n`)
}

async function uninstall (out, deps, options) {
  const r = await require('../service').uninstall({ config: options.config, name: options.name, system: options.system }, deps)
  if (options.json) return out(JSON.stringify(strip(r), null, 2) + '\n')
  if (!r.removed) return out(`${r.name} is not installed${r.file ? ` (no ${r.file})` : ''}: nothing to remove\n`)
  if (r.platform === 'win32') {
    if (r.stopped) out(`stopped the Windows service ${r.name}\n`)
    out(`deleted the Windows service ${r.name}\n`)
    if (r.reservations.length > 0) {
      out('its URL reservations stay; to delete them, elevated:\n')
      for (const prefix of r.reservations) out(`  httpsys urlacl delete ${prefix}\n`)
    }
    return
  }
  if (r.stopped) out(`stopped ${r.name}\n`)
  out(`removed ${r.file}${r.links && r.links.length ? ` and ${r.links.join(', ')}` : ''}\n`)
  if (r.commands.length > 0) {
    out('then run:\n')
    for (const c of r.commands) out(`  ${c}\n`)
  }
}

async function status (out, deps, options) {
  const r = await require('../service').status({ config: options.config, name: options.name, system: options.system }, deps)
  if (options.json) return out(JSON.stringify(strip(r), null, 2) + '\n')
  if (!r.installed) return out(`${r.name} is not installed${r.file ? ` (no ${r.file})` : ''}\n`)
  if (r.platform === 'win32') {
    out(`${r.name}: Windows service, ${r.state.replace('_', ' ')}${r.pid ? ` (pid ${r.pid})` : ''}\n`)
    out(`  starts: ${r.startType === 'auto' ? 'at boot' : r.startType}, as ${r.account}\n`)
    out(`  runs: ${r.binPath}${r.ours ? '' : '  (not written by httpsys)'}\n`)
    if (r.failureActions) {
      const actions = r.failureActions.actions.map((a) => a.type === 'restart' ? `restart after ${a.delay / 1000} s` : a.type)
      out(`  on failure: ${actions.join(', ') || 'nothing'}\n`)
    }
    if (r.state === 'stopped') {
      out(`  last exit: ${r.exitCode.service !== undefined ? `the supervisor's exit code ${r.exitCode.service}` : r.exitCode.win32 === 0 ? '0 (stopped)' : `Win32 ${r.exitCode.win32}`}\n`)
    }
    out(`  records: ${r.log}\n`)
    return
  }
  out(`${r.name}: ${r.kind} (${r.scope}) ${r.file}${r.ours ? '' : '  (not written by httpsys)'}\n`)
  if (r.configFile) out(`  config: ${r.configFile}\n`)
  if (r.enabled !== undefined) out(`  enabled: ${r.enabled ? 'yes' : 'no'}\n`)
  const sup = r.supervisor
  out(`  supervisor: ${sup === null ? 'not running' : sup === 'unknown' ? `unknown (${r.runtimeDir} is not this user's)` : `running (pid ${sup.pid})`}\n`)
  for (const c of r.commands) out(`  more: ${c}\n`)
}

function seconds (delays) {
  return delays.map((ms) => `${ms / 1000} s`).join(', then ') + ' (each time after that)'
}

// what is only for this process (the unit's text is long, a plan's closures are not data);
// a dry run is about the text
function strip (r, keepText = false) {
  const { text, start, ...rest } = r
  return keepText ? { ...rest, text } : rest
}

module.exports = { register }
