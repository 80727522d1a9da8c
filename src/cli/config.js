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
    .option('-c, --config <file>', 'the config file (default: ./httpsys.config.js, .cjs, .mjs or .json)')
    .option('--env <name>', 'merge each app\'s env_<name> over its env, as start --env does')
    .option('--env-file <file>', 'variables for every app, as start --env-file does')
    .option('--show-secrets', 'print the values of variables that look secret (masked by default)')
    .action(action)
}

async function action (options) {
  const { resolveStartConfig } = require('../config')
  const resolved = await resolveStartConfig({ config: options.config, env: options.env, envFile: options.envFile })
  const shown = { backend: resolved.backend, limits: resolved.limits, tls: resolved.tls, metrics: resolved.metrics, apps: resolved.apps }
  console.log(JSON.stringify(options.showSecrets ? shown : masked(shown), null, 2))
  console.error(`${resolved.source.configFile}: ${resolved.apps.length} app(s), valid`)
}

// Names of variables that usually hold credentials: a config check is pasted into
// tickets and chats, so their values are masked unless asked for.
const SECRET = /TOKEN|SECRET|PASSW|PWD|KEY|CREDENTIAL|PRIVATE|AUTH|SESSION|COOKIE|SALT|SIGNATURE|DSN|CONN(ECTION)?_?STR/i
const MASK = '*** (--show-secrets prints it)'

/** The resolved config with secret-looking env values, TLS passphrases and PEM private keys masked. */
function masked (config) {
  return {
    ...config,
    tls: config.tls.map(maskTls),
    apps: config.apps.map((app) => ({
      ...app,
      env: Object.fromEntries(Object.entries(app.env).map(([k, v]) => [k, SECRET.test(k) && v !== '' ? MASK : v]))
    }))
  }
}

// a passphrase, and a private key given as PEM text (a path is fine to print)
function maskTls (entry) {
  const out = { ...entry }
  if (out.passphrase !== undefined) out.passphrase = MASK
  if (typeof out.key === 'string' && /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(out.key)) out.key = MASK
  return out
}

module.exports = { register, masked }
