'use strict'

// `httpsys reload <app|all>`: reads the config again and applies what changed (apps
// added or removed, URLs, instances, settings), then a rolling reload with no failed
// request (each new process ready before the old one is drained). docs/supervisor.md 2.7.

const { codes } = require('../errors')
const { scopeOptions, scopeOf } = require('./scope')

function register (program) {
  scopeOptions(program.command('reload')
    .summary('apply the config\'s changes, then replace the app\'s processes one by one, with no failed request')
    .description('Reads the config again (one that fails `httpsys config check` changes nothing and says why) and applies ' +
      'what changed: apps added (started) or removed (drained, stopped), URLs added or dropped, instances added or removed; ' +
      'then a rolling reload: for each instance start a new process, wait until it is ready, then drain and stop the old one. ' +
      'Prints what changed, and the settings that apply only at the next start (backend, limits, tls, metrics). ' +
      'When a new process fails, the old ones keep serving and this exits 1.')
    .argument('<app>', 'an app name, or all (all also starts apps new in the config)'))
    .action(action)
}

async function action (app, options) {
  const { command } = require('../supervisor/control-client')
  const answers = await command('reload', app, scopeOf(options))
  const { failed, cert } = print(answers)
  if (failed) throw new codes.ERR_HTTPSYS_RELOAD_FAILED({ app: failed.app, reason: failed.reason })
  if (cert) throw new codes.ERR_HTTPSYS_TLS_RELOAD_FAILED({ file: cert.tls, reason: cert.message })
}

/**
 * One line per app of each supervisor's answer (what was done, and what changed), one
 * for the run's settings that wait for the next start.
 * @returns {{ failed: object|null, cert: object|null }} the first app that failed, the
 *   first certificate file that did not load again
 */
function print (answers, out = (line) => console.log(line)) {
  let failed = null
  let cert = null
  for (const { label, result } of answers) {
    for (const r of result) {
      if (r.tls !== undefined) {
        // a certificate file that did not load again: the one loaded before keeps serving
        cert = cert || r
      } else if (r.notLive !== undefined && r.app === undefined) {
        const keys = r.notLive.map((n) => n.key)
        out(`httpsys [${label}]: ${keys.join(', ')} changed in the config, not applied: ${r.notLive.map((n) => n.why).join('; ')}; ` +
          'to apply, stop httpsys (`httpsys stop all`) and start it again')
      } else if (!r.ok) {
        failed = failed || r
      } else {
        out(`${r.app} [${label}]: ${done(r)}${r.changes && r.changes.length ? `; applied: ${r.changes.join(', ')}` : ''}` +
          `${r.notLive ? `; ${r.notLive.join(', ')} applies at the next start` : ''}`)
      }
    }
  }
  return { failed, cert }
}

function done (r) {
  const pids = r.pids && r.pids.length ? ` (pid ${r.pids.join(', ')})` : ''
  switch (r.action) {
    case 'added': return `added, ready in ${r.ms} ms${pids}`
    case 'replaced': return `replaced (its type changed), ready in ${r.ms} ms${pids}`
    case 'removed': return `removed (no longer in the config): drained and stopped in ${r.ms} ms`
    case 'restarted': return 'restarted'
    default: return `reloaded in ${r.ms} ms${pids}`
  }
}

module.exports = { register, print }
