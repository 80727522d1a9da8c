'use strict'

// `httpsys reload <app|all>`: rolling reload with no failed request (each new process
// ready before the old one is drained).

const { codes } = require('../errors')
const { scopeOptions, scopeOf } = require('./scope')

function register (program) {
  scopeOptions(program.command('reload')
    .summary('replace an app\'s processes one by one, with no failed request')
    .description('Rolling reload: for each instance start a new process, wait until it is ready, then drain and stop the old one. ' +
      'When a new process fails, the old ones keep serving and this exits 1.')
    .argument('<app>', 'an app name, or all'))
    .action(action)
}

async function action (app, options) {
  const { command } = require('../supervisor/control-client')
  const answers = await command('reload', app, scopeOf(options))
  let failed = null
  let cert = null
  for (const { label, result } of answers) {
    for (const r of result) {
      if (r.tls !== undefined) {
        // a certificate file that did not load again: the one loaded before keeps serving
        cert = cert || r
      } else if (r.ok) {
        console.log(`${r.app} [${label}]: reloaded in ${r.ms} ms (pid ${r.pids.join(', ')})`)
      } else {
        failed = failed || r
      }
    }
  }
  if (failed) throw new codes.ERR_HTTPSYS_RELOAD_FAILED({ app: failed.app, reason: `a new process ${failed.reason}` })
  if (cert) throw new codes.ERR_HTTPSYS_TLS_RELOAD_FAILED({ file: cert.tls, reason: cert.message })
}

module.exports = { register }
