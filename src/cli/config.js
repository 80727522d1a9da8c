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
    .option('--show-secrets', 'print the values that look secret: variables, URL credentials, secret arguments (masked by default)')
    .action(action)
}

async function action (options) {
  const { resolveStartConfig } = require('../config')
  const resolved = await resolveStartConfig({ config: options.config, env: options.env, envFile: options.envFile })
  const shown = { backend: resolved.backend, limits: resolved.limits, tls: resolved.tls, metrics: resolved.metrics, apps: resolved.apps }
  console.log(JSON.stringify(options.showSecrets ? shown : masked(shown), null, 2))
  // pm2 keys mapped or ignored: valid, and this is what runs differently from the file
  for (const w of resolved.source.warnings || []) console.error(`httpsys: warning: ${w}`)
  const n = (resolved.source.warnings || []).length
  console.error(`${resolved.source.configFile}: ${resolved.apps.length} app(s), valid${n ? ` (${n} warning${n === 1 ? '' : 's'})` : ''}`)
}

// Names of variables that usually hold credentials: a config check is pasted into
// tickets and chats, so their values are masked unless asked for.
const SECRET = /TOKEN|SECRET|PASSW|PWD|KEY|CREDENTIAL|PRIVATE|AUTH|SESSION|COOKIE|SALT|SIGNATURE|DSN|CONN(ECTION)?_?STR/i
const MASK = '*** (--show-secrets prints it)'
// inside a longer value: the rest of it (a host, a flag's name) stays readable
const INLINE = '***'
// userinfo of a URL anywhere in a string (RFC 3986 3.2.1: "user:password@" is deprecated
// but still how postgres://, redis://, amqp:// and git remotes carry credentials); up to
// the authority's last @, so a password with an unencoded @ is masked whole
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^/?#\s]*)@/gi
// a query parameter whose name looks secret (?token=, &api_key=, &sig= of an Azure SAS URL)
const QUERY_PARAM = /([?&;])([^=&;#\s]+)=([^&;#\s]*)/g
const SECRET_PARAM = /^sig$/i
// an argument naming a secret: --api-key=x, DB_PASSWORD=x (the value masked), or
// --token followed by its value as the next argument
const NAMED_ARG = /^(-{0,2}[A-Za-z0-9_.-]+)=([\s\S]*)$/
const FLAG = /^--?[A-Za-z0-9_.-]+$/

/**
 * The resolved config with secret-looking env values, credentials inside URLs and
 * arguments, TLS passphrases and PEM private keys masked.
 */
function masked (config) {
  return {
    ...config,
    tls: config.tls.map(maskTls),
    apps: config.apps.map((app) => {
      const out = { ...app }
      if (app.env) out.env = Object.fromEntries(Object.entries(app.env).map(([k, v]) => [k, maskVariable(k, v)]))
      if (Array.isArray(app.args)) out.args = maskArgs(app.args)
      if (Array.isArray(app.node_args)) out.node_args = maskArgs(app.node_args)
      return out
    })
  }
}

function maskVariable (name, value) {
  if (typeof value !== 'string' || value === '') return value
  return SECRET.test(name) ? MASK : maskInline(value)
}

function maskArgs (args) {
  return args.map((arg, i) => {
    if (typeof arg !== 'string') return arg
    const named = NAMED_ARG.exec(arg)
    if (named && SECRET.test(named[1]) && named[2] !== '') return `${named[1]}=${INLINE}`
    const prev = args[i - 1]
    if (typeof prev === 'string' && FLAG.test(prev) && SECRET.test(prev) && !arg.startsWith('-') && arg !== '') return INLINE
    return maskInline(arg)
  })
}

/** Credentials inside a value that is not secret as a whole: a URL's password, a secret query parameter. */
function maskInline (text) {
  return text
    .replace(USERINFO, (all, scheme, userinfo) => {
      const colon = userinfo.indexOf(':')
      // user:password keeps the user; a lone userinfo may be a token (https://<token>@github.com)
      return `${scheme}${colon === -1 ? INLINE : `${userinfo.slice(0, colon)}:${INLINE}`}@`
    })
    .replace(QUERY_PARAM, (all, sep, name, value) => (SECRET.test(name) || SECRET_PARAM.test(name)) && value !== '' ? `${sep}${name}=${INLINE}` : all)
}

// a passphrase, and a private key given as PEM text (a path is fine to print)
function maskTls (entry) {
  const out = { ...entry }
  if (out.passphrase !== undefined) out.passphrase = MASK
  if (typeof out.key === 'string' && /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(out.key)) out.key = MASK
  return out
}

module.exports = { register, masked }
