'use strict'

// `httpsys stop <app|all>`: one app stops (the others keep running); all stops the
// supervisor, and this waits until it has exited.

function register (program) {
  program.command('stop')
    .summary('stop an app, or (all) the whole supervisor')
    .description('Stop an app gracefully (drain, its own shutdown, killed after kill_timeout); the other apps keep running. ' +
      '"all" stops the supervisor itself, as Ctrl+C in its terminal would.')
    .argument('<app>', 'an app name, or all')
    .option('-c, --config <file>', 'the supervisor started with this config file')
    .action(action)
}

async function action (app, options) {
  const { command, waitForExit } = require('../supervisor/control-client')
  for (const { pid, config, result } of await command('stop', app, { config: options.config })) {
    if (result && result.stopping) {
      const gone = await waitForExit(pid)
      console.log(gone ? `stopped the supervisor of ${config} (pid ${pid})` : `the supervisor of ${config} (pid ${pid}) is still stopping`)
      if (!gone) process.exitCode = 1
      continue
    }
    for (const r of result) console.log(`${r.app}: ${r.state}`)
  }
}

module.exports = { register }
