'use strict'

// `httpsys ls`: the apps of the running supervisor(s), from another terminal.

const { formatUptime, formatSize, table } = require('./format')

function register (program) {
  program.command('ls')
    .alias('list')
    .summary('list the running apps and their instances')
    .description('List the apps of the running httpsys supervisor(s): instance, pid, state, uptime, restarts, memory, requests served and in flight.')
    .option('-c, --config <file>', 'only the supervisor started with this config file')
    .option('--json', 'print JSON (for scripts)')
    .action(action)
}

async function action (options) {
  const { list } = require('../supervisor/control-client')
  const supervisors = await list({ config: options.config })
  if (options.json) {
    console.log(JSON.stringify(supervisors, null, 2))
    return
  }
  const out = []
  for (const s of supervisors) {
    if (supervisors.length > 1) out.push(`supervisor pid ${s.pid} (${s.config || s.script})`)
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
