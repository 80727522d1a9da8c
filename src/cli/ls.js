'use strict'

// `httpsys ls`: the apps of the running supervisor(s), from another terminal.

const { formatUptime, formatSize, table } = require('./format')
const { scopeOptions, scopeOf } = require('./scope')

function register (program) {
  scopeOptions(program.command('ls')
    .aliases(['list', 'status'])
    .summary('list the running apps and their instances')
    .description('List the apps of this folder\'s running supervisor (or, with none here, of every supervisor of this user, ' +
      'grouped): instance, pid, state, uptime, restarts, memory, requests served and in flight.')
    .option('--json', 'print JSON (for scripts)'))
    .action(action)
}

async function action (options) {
  const { list } = require('../supervisor/control-client')
  const supervisors = await list(scopeOf(options))
  if (options.json) {
    console.log(JSON.stringify(supervisors, null, 2))
    return
  }
  if (supervisors.length === 0) {
    console.log('no httpsys supervisor is running (start one with `httpsys start`)')
    return
  }
  const out = []
  for (const s of supervisors) {
    out.push(`supervisor ${s.id} (pid ${s.pid}): ${s.label}`)
    const rows = [['app', 'inst', 'pid', 'state', 'uptime', 'restarts', 'memory', 'served', 'in flight']]
    for (const app of s.apps) {
      for (const i of app.instances) {
        rows.push([app.name, i.inst, i.pid || '-', i.state, formatUptime(i.uptimeMs), i.restarts, i.memory ? formatSize(i.memory) : '-', i.served, i.inFlight])
      }
    }
    out.push(table(rows), '')
  }
  process.stdout.write(out.join('\n'))
}

module.exports = { register }
