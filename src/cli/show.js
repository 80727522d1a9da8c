'use strict'

// `httpsys show <app>` (also `describe`): one app as the running supervisor sees it:
// its resolved config (secret-looking values masked, as `config check` does), where it
// is served, its instances with their last exits, and its recent records.

const { scopeOptions, scopeOf } = require('./scope')
const { formatUptime, formatSize, formatLatency, formatRate, table } = require('./format')

function register (program) {
  scopeOptions(program.command('show')
    .alias('describe')
    .summary('one app in detail: config, URLs, instances and their last exits, recent records')
    .description('Show one app of the running supervisor: its state, router and URLs, each instance (pid, state, uptime, ' +
      'restarts, CPU, memory, requests/s, p99, requests served, last exit), its output cache, its resolved config ' +
      '(secret-looking values masked, as `httpsys config check` does) and its recent records.')
    .argument('<app>', 'an app name')
    .option('--json', 'print JSON (for scripts)')
    .option('--show-secrets', 'print the values that look secret: variables, URL credentials, secret arguments (masked by default)'))
    .action(action)
}

async function action (app, options) {
  const { route, request } = require('../supervisor/control-client')
  const { masked } = require('./config')
  const supervisors = await route(app, scopeOf(options))
  const out = []
  for (const s of supervisors) {
    const r = await request(s, { cmd: 'show', app })
    const config = options.showSecrets ? r.config : masked({ tls: [], apps: [r.config] }).apps[0]
    if (options.json) {
      out.push(JSON.stringify({ supervisor: { id: s.id, pid: s.pid, label: s.label }, ...r, config }, null, 2))
      continue
    }
    out.push(`${r.name} [${s.label}]: ${r.state}, ${r.backend === 'httpsys' ? 'HTTP.SYS' : 'the native router'}, ${r.urls.join(' ') || 'no URL yet'}` +
      (r.waiting === null || r.waiting === undefined ? '' : `, ${r.waiting} waiting`))
    const rows = [['inst', 'pid', 'state', 'uptime', 'restarts', 'cpu', 'memory', 'req/s', 'p99', 'served', 'last exit']]
    for (const i of r.instances) {
      const last = i.lastExit ? (i.lastExit.signal ? `signal ${i.lastExit.signal}` : `code ${i.lastExit.code}`) : '-'
      rows.push([i.inst, i.pid || '-', i.state, formatUptime(i.uptimeMs), i.restarts, i.cpu === null || i.cpu === undefined ? '-' : `${i.cpu}%`,
        i.memory ? formatSize(i.memory) : '-', formatRate(i.reqPerSec), formatLatency(i.p99Ms), i.served, last])
    }
    out.push(table(rows))
    if (r.cache) {
      const c = r.cache
      const asked = c.hits + c.misses
      out.push(`output cache: ${c.hits} hits, ${c.misses} misses${asked > 0 ? ` (${(100 * c.hits / asked).toFixed(1)}% answered from memory)` : ''}, ` +
        `${c.entries} entr${c.entries === 1 ? 'y' : 'ies'} (${formatSize(c.bytes)}), ${c.evictions} evicted`)
    }
    out.push('', 'config:')
    for (const [key, value] of Object.entries(config)) out.push(`  ${key}: ${JSON.stringify(value)}`)
    out.push('', 'recent records:')
    for (const line of r.records) {
      let rec
      try { rec = JSON.parse(line) } catch { continue }
      out.push(`  ${new Date(rec.time).toISOString().slice(11, 23)} ${rec.inst === undefined ? '' : `#${rec.inst} `}${rec.msg}`)
    }
  }
  process.stdout.write(out.join('\n') + '\n')
}

module.exports = { register }
