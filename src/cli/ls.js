'use strict'

// `httpsys ls` (list, status): the apps of the running supervisor(s), from another
// terminal. One row per instance; the app's queue depth and URLs on its first row.

const { formatUptime, formatSize, formatLatency, formatRate, fitTable, colorsFor, stateColor } = require('./format')
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
  // a terminal's width is what the table must fit; a pipe gets every column
  const width = process.stdout.isTTY && process.stdout.columns > 0 ? process.stdout.columns : Infinity
  process.stdout.write(render(supervisors, colorsFor(process.stdout), width) + '\n')
}

// drop: which columns go first when the terminal is too narrow (the URLs move below the table)
const COLUMNS = [
  { header: 'app' },
  { header: 'inst', short: '#' },
  { header: 'pid', drop: 7 },
  { header: 'state' },
  { header: 'uptime', short: 'up', drop: 5 },
  { header: 'restarts', short: '↺' },
  { header: 'cpu', drop: 8 },
  { header: 'memory', short: 'mem' },
  { header: 'req/s', drop: 6 },
  { header: 'p99', drop: 4 },
  { header: 'in flight', short: 'busy', drop: 2 },
  { header: 'queued', short: 'wait', drop: 3 },
  { header: 'urls', drop: 1 }
]
const URLS = COLUMNS.length - 1

// The native router's own process (issue 25): a row of its own, with what the row of an
// instance shows of it. It has no instance number: its name spans the app and inst
// columns (at least 6 wide: "app", 2 blanks, "#"), so it never widens the table past a
// terminal the apps' rows fit.
const ROUTER_NAME = 'router'
const ROUTER_STATE = 'ready'

/** ls's cells for the router's process (status().router); nameRouterRow() names it once laid out. */
function routerRow (r) {
  return ['', '', r.pid || '-', ROUTER_STATE, formatUptime(r.uptimeMs), '-',
    r.cpu === null || r.cpu === undefined ? '-' : `${r.cpu}%`, r.memory ? formatSize(r.memory) : '-', '-', '-', '-', '-', '']
}

/** The router's laid-out row with its name over its blank app and inst cells. */
function nameRouterRow (line) {
  return ROUTER_NAME + line.slice(ROUTER_NAME.length)
}

/** A supervisor's router as ls and monit name it: the native router, which the hub backend runs (issue 25), or HTTP.SYS's backend name. */
function routerLabel (s) {
  return s.routerKind === 'native' || s.backend === 'hub' ? 'native router' : s.backend
}

/**
 * The text of `httpsys ls` for these supervisors' ls results.
 * @param {number} [width=Infinity] the terminal's columns
 */
function render (supervisors, colors, width = Infinity) {
  const out = []
  for (const s of supervisors) {
    out.push(`supervisor ${s.id} (pid ${s.pid}${s.backend ? `, ${routerLabel(s)}` : ''}): ${s.label}`)
    const rows = []
    const states = [null]
    const urls = []
    for (const app of s.apps) {
      const served = app.type === 'worker' ? '(no HTTP)' : (app.urls || []).join(' ') || '(its listen())'
      urls.push([app.name, served])
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
          k === 0 ? served : ''
        ])
        states.push(i.state)
      })
    }
    if (s.router) {
      rows.push(routerRow(s.router))
      states.push(ROUTER_STATE)
    }
    const { lines, shown } = fitTable(COLUMNS, rows, width)
    if (s.router) lines[lines.length - 1] = nameRouterRow(lines[lines.length - 1])
    // colour after the widths are known: escape codes have no width
    const stateCol = lines[0].indexOf('state')
    out.push(lines.map((line, n) => n === 0 || !states[n]
      ? line
      : line.slice(0, stateCol) + stateColor(colors, states[n])(states[n]) + line.slice(stateCol + states[n].length)).join('\n'))
    if (!shown.includes(URLS)) {
      const pad = Math.max(...urls.map(([name]) => name.length))
      urls.forEach(([name, list], k) => out.push(`${k === 0 ? 'urls:' : '     '} ${name.padEnd(pad)}  ${list}`))
    }
    out.push('')
  }
  return out.join('\n').trimEnd()
}

module.exports = { register, render, routerRow, nameRouterRow, routerLabel, COLUMNS, ROUTER_STATE }
