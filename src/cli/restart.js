'use strict'

// `httpsys restart <app|all>`: stop every instance, then start again (crash-loop and
// backoff counters start over). For no downtime use `httpsys reload`.

const { scopeOptions, scopeOf } = require('./scope')

function register (program) {
  scopeOptions(program.command('restart')
    .summary('stop an app\'s processes, then start them again')
    .description('Hard restart: stop every instance, then start them with fresh crash-loop and backoff counters ' +
      '(also brings back an app that is errored or stopped). Requests wait in the queue meanwhile; for no wait use reload.')
    .argument('<app>', 'an app name, or all'))
    .action(action)
}

async function action (app, options) {
  const { command } = require('../supervisor/control-client')
  for (const { label, result } of await command('restart', app, scopeOf(options))) {
    for (const r of result) console.log(`${r.app} [${label}]: restarted`)
  }
}

module.exports = { register }
