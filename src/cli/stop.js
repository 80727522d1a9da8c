'use strict'

// `httpsys stop [app|all]`: one app stops (the others keep running); all (or no app:
// what `start -d` started is ended by `httpsys stop`) stops the supervisor, and this
// waits until it has exited.

const { scopeOptions, scopeOf } = require('./scope')

function register (program) {
  scopeOptions(program.command('stop')
    .summary('stop an app, or (all) this folder\'s whole supervisor')
    .description('Stop an app gracefully (drain, its own shutdown, killed after kill_timeout); the other apps keep running. ' +
      '"all" (the default) stops the supervisor itself, as Ctrl+C in its terminal would. Acts on the supervisor of this folder ' +
      '(./httpsys.config.js, or an app started here) unless -c, --id or --all-supervisors says otherwise.')
    .argument('[app]', 'an app name, or all', 'all'))
    .action(action)
}

async function action (app, options) {
  const { command, waitForExit } = require('../supervisor/control-client')
  for (const { pid, config, label, result } of await command('stop', app, scopeOf(options))) {
    if (result && result.stopping) {
      const gone = await waitForExit(pid)
      console.log(gone ? `stopped the supervisor of ${config} (pid ${pid})` : `the supervisor of ${config} (pid ${pid}) is still stopping`)
      if (!gone) process.exitCode = 1
      continue
    }
    for (const r of result) console.log(`${r.app} [${label}]: ${r.state}`)
  }
}

module.exports = { register }
