'use strict'

// `httpsys config check`: load and validate the config as `httpsys start` would, and
// print what it resolves to (defaults filled in, paths absolute, units in ms/bytes).

function register (program) {
  const config = program.command('config')
    .summary('check a config file')
    .description('Work with httpsys.config.js.')
  config.command('check')
    .summary('validate a config and print it resolved')
    .description('Load and validate the config as `httpsys start` would; print it with every default filled in ' +
      '(durations in ms, sizes in bytes, paths absolute). Exits 1 with the key to fix when it is invalid.')
    .option('-c, --config <file>', 'the config file', 'httpsys.config.js')
    .option('--env <name>', 'merge each app\'s env_<name> over its env, as start --env does')
    .option('--env-file <file>', 'variables for every app, as start --env-file does')
    .action(action)
}

async function action (options) {
  const { resolveStartConfig } = require('../config')
  const resolved = await resolveStartConfig({ config: options.config, env: options.env, envFile: options.envFile })
  console.log(JSON.stringify({ backend: resolved.backend, apps: resolved.apps }, null, 2))
  console.error(`${resolved.source.configFile}: ${resolved.apps.length} app(s), valid`)
}

module.exports = { register }
