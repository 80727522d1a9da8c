'use strict'

// `httpsys ls` (list, status): the apps of the running supervisor(s), from another
// terminal. One row per instance; the app's queue depth and URLs on its first row.

const { formatUptime, formatSize, formatLatency, formatRate, table, colorsFor, stateColor } = require('./format')
const { scopeOptions, scopeOf } = require('./scope')

function register (program) {
  scopeOptions(program.command('ls')
    .aliases(['list', 'status'])
    .summary('list the running apps and their instances')
    .description('List the apps of this folder\'s running supervisor (or, with none here, of every supervisor of this user, ' +
      'grouped): instance, pid, state, uptime, restarts, CPU, memory, requests/s and p99 latency over the last minute, ' +
      'requests in flight, requests waiting in the queue, and the URLs served.')
    .option('--json', 'print JSON (for scripts)'))
    .action(action)
}

async function action (options) {
  const { list } = require('../supervisor/control-client')
  let supervisors
  try {
    supervisors = await list(scopeOf(options))
  } catch (err) {
    // nothing running is an answer, not a failure: `httpsys ls --json | jq` works
    if (err.code !== 'ERR_HTTPSYS_NOT_RUNNING') throw err
    supervisors = []
  }
  if (options.json) {
    console.log(JSON.stringify(supervisors, null, 2))
    return
  }
  if (supervisors.length === 0) {
    console.log('no httpsys supervisor is running (start one with `httpsys start`)')
    return
  }
  process.stdout.write(render(supervisors, colorsFor(process.stdout)) + '\n')
}

const HEADER = ['app', 'inst', 'pid', 'state', 'uptime', 'restarts', 'cpu', 'memory', 'req/s', 'p99', 'in flight', 'queued', 'urls']

/** The text of `httpsys ls` for these supervisors' ls results. */
function render (supervisors, colors) {
  const out = []
  for (const s of supervisors) {
    out.push(`supervisor ${s.id} (pid ${s.pid}${s.backend ? `, ${s.backend}` : ''}): ${s.label}`)
    const rows = [HEADER]
    const states = [null]
    for (const app of s.apps) {
      app.instances.forEach((i, k) => {
        rows.push([
          k === 0 ? app.name : '',
          i.inst,
          i.pid || '-',
          i.state,
          formatUptime(i.uptimeMs),
          i.restarts,
          i.cpu === null || i.cpu === undefined ? '-' : `${i.cpu}%`,
          i.memory ? formatSize(i.memory) : '-',
          formatRate(i.reqPerSec),
          formatLatency(i.p99Ms),
          i.inFlight === null || i.inFlight === undefined ? '-' : i.inFlight,
          k === 0 ? (app.waiting === null || app.waiting === undefined ? '-' : app.waiting) : '',
          k === 0 ? (app.type === 'worker' ? '(no HTTP)' : (app.urls || []).join(' ') || '(its listen())') : ''
        ])
        states.push(i.state)
      })
    }
    // colour after the widths are known: escape codes have no width
    const lines = table(rows).split('\n')
    const stateCol = lines[0].indexOf('state')
    out.push(lines.map((line, n) => n === 0 || !states[n]
      ? line
      : line.slice(0, stateCol) + stateColor(colors, states[n])(states[n]) + line.slice(stateCol + states[n].length)).join('\n'), '')
  }
  return out.join('\n').trimEnd()
}

module.exports = { register, render }
