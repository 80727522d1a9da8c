'use strict'

// `httpsys restart <app|all>`: reads the config again and applies what changed, as
// reload does, then stops every instance and starts it again (crash-loop and backoff
// counters start over). pm2 applies a config edit only when given the file (`pm2 restart
// ecosystem.config.js --update-env`), and `pm2 restart all` keeps what it started with,
// which users take for a bug (issue 28): here the config is what runs, so an edit is
// never silently left out. For no downtime use `httpsys reload`.

const { codes } = require('../errors')
const { scopeOptions, scopeOf } = require('./scope')
const { print } = require('./reload')

function register (program) {
  scopeOptions(program.command('restart')
    .summary('apply the config\'s changes, then stop an app\'s processes and start them again')
    .description('Reads the config again and applies what changed, as reload does (one that fails `httpsys config check` ' +
      'changes nothing), then a hard restart: stop every instance, then start them with fresh crash-loop and backoff counters ' +
      '(also brings back an app that is errored or stopped). Requests wait in the queue meanwhile; for no wait use reload.')
    .argument('<app>', 'an app name, or all'))
    .action(action)
}

async function action (app, options) {
  const { command } = require('../supervisor/control-client')
  const { failed } = print(await command('restart', app, scopeOf(options)))
  if (failed) throw new codes.ERR_HTTPSYS_RELOAD_FAILED({ app: failed.app, reason: failed.reason })
}

module.exports = { register }
