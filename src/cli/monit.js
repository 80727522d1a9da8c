'use strict'

// `httpsys monit`: a live view of the running supervisor(s) in the terminal, pm2 monit's
// job: every instance with its state, CPU, memory, requests/s and p99, a requests/s
// sparkline of the last minute per app, and the newest log records below. Refreshes
// every second; q (or Ctrl+C) quits. Drawn with plain ANSI sequences on the terminal's
// alternate screen, so the shell's scrollback is left as it was. Not in a terminal, it
// prints one frame and exits (scripts want `httpsys ls --json`).

const { formatUptime, formatSize, formatLatency, formatRate, fitTable, colorsFor, stateColor } = require('./format')
const { COLUMNS, ROUTER_STATE, routerRow, nameRouterRow, routerLabel } = require('./ls')
const { scopeOptions, scopeOf } = require('./scope')

const REFRESH_MS = 1000
const LOG_KEEP = 500
const SPARKS = '▁▂▃▄▅▆▇█'

function register (program) {
  scopeOptions(program.command('monit')
    .summary('a live view: instances, CPU, memory, requests/s, p99 and the newest log records')
    .description('Watch the apps of this folder\'s running supervisor (or, with none here, of every supervisor of this user) ' +
      'in the terminal, refreshed every second: instances with state, CPU, memory, requests/s, p99 latency and queue depth, ' +
      'a requests/s sparkline of the last minute per app, and the newest log records. q or Ctrl+C quits.'))
    .action(action)
}

async function action (options) {
  const { list, select, stream } = require('../supervisor/control-client')
  const scope = scopeOf(options)
  const out = process.stdout
  const colors = colorsFor(out)
  if (!out.isTTY) {
    // one frame: what a pipe or a test can read
    process.stdout.write(render({ supervisors: await list(scope), logs: [], width: 120, height: 40, colors, now: new Date() }) + '\n')
    return
  }

  const { prettyStream } = require('../supervisor/output')
  const logs = []
  const sink = prettyStream({ write: (text) => { for (const l of text.split('\n')) if (l !== '') logs.push(l) } })
  const states = await select({ ...scope, list: true })
  const streams = states.map((s) => stream(s, { lines: 50, follow: true }, (line) => {
    sink.write(line + '\n')
    if (logs.length > LOG_KEEP) logs.splice(0, logs.length - LOG_KEEP)
  }))

  let supervisors = []
  let error = null
  let stopped = false
  const draw = () => {
    if (stopped) return
    const frame = render({ supervisors, logs, width: out.columns || 80, height: out.rows || 24, colors, error, now: new Date() })
    // home, the frame, then clear what the last frame left below it
    out.write('\x1b[H' + frame.split('\n').map((l) => l + '\x1b[K').join('\n') + '\x1b[J')
  }
  const poll = async () => {
    try {
      supervisors = await list(scope)
      error = null
    } catch (err) {
      error = err.code === 'ERR_HTTPSYS_NOT_RUNNING' ? 'the supervisor is not running any more' : err.message
    }
    draw()
  }

  return new Promise((resolve) => {
    const { stdin } = process
    const timer = setInterval(poll, REFRESH_MS)
    const quit = () => {
      if (stopped) return
      stopped = true
      clearInterval(timer)
      for (const s of streams) s.close()
      if (stdin.isTTY) stdin.setRawMode(false)
      stdin.pause()
      out.off('resize', draw)
      // leave the alternate screen, show the cursor
      out.write('\x1b[?25h\x1b[?1049l')
      resolve()
    }
    out.write('\x1b[?1049h\x1b[?25l\x1b[2J')
    out.on('resize', draw)
    process.once('SIGINT', quit)
    process.once('SIGTERM', quit)
    if (stdin.isTTY) {
      stdin.setRawMode(true)
      stdin.resume()
      stdin.on('data', (key) => {
        const k = key.toString()
        if (k === 'q' || k === 'Q' || k === '\x03' || k === '\x1b') quit()
      })
    }
    poll()
  })
}

/**
 * One frame of monit as text, clipped to width and height.
 * @param {object} view
 * @param {object[]} view.supervisors control-client list() results
 * @param {string[]} view.logs formatted log lines, oldest first
 */
function render ({ supervisors, logs, width, height, colors, error = null, now = new Date() }) {
  const lines = []
  lines.push(colors.bold(`httpsys monit  ${now.toLocaleTimeString()}`) + colors.dim('   q: quit'))
  if (error) lines.push(colors.red(error))
  if (supervisors.length === 0 && !error) lines.push('no httpsys supervisor is running (start one with `httpsys start`)')
  for (const s of supervisors) {
    lines.push('')
    lines.push(colors.dim(`supervisor ${s.id} (pid ${s.pid}${s.backend ? `, ${routerLabel(s)}` : ''}): ${s.label}`))
    const rows = []
    const states = [null]
    for (const app of s.apps) {
      app.instances.forEach((i, k) => {
        rows.push([k === 0 ? app.name : '', i.inst, i.pid || '-', i.state, formatUptime(i.uptimeMs), i.restarts,
          i.cpu === null || i.cpu === undefined ? '-' : `${i.cpu}%`, i.memory ? formatSize(i.memory) : '-',
          formatRate(i.reqPerSec), formatLatency(i.p99Ms), i.inFlight === null || i.inFlight === undefined ? '-' : i.inFlight,
          k === 0 ? (app.waiting === null || app.waiting === undefined ? '-' : app.waiting) : ''])
        states.push(i.state)
      })
    }
    if (s.router) {
      rows.push(routerRow(s.router).slice(0, -1))
      states.push(ROUTER_STATE)
    }
    // ls's columns but the URLs, as many as fit the terminal
    const text = fitTable(COLUMNS.slice(0, -1), rows, width).lines
    if (s.router) text[text.length - 1] = nameRouterRow(text[text.length - 1])
    const stateCol = text[0].indexOf('state')
    text.forEach((line, n) => {
      const plain = clip(line, width)
      if (n === 0) lines.push(colors.dim(plain))
      else if (plain.length >= stateCol + states[n].length) {
        lines.push(plain.slice(0, stateCol) + stateColor(colors, states[n])(states[n]) + plain.slice(stateCol + states[n].length))
      } else lines.push(plain)
    })
    lines.push('')
    const label = Math.max(...s.apps.map((a) => a.name.length))
    for (const app of s.apps) {
      const tail = `  ${formatRate(app.reqPerSec)} req/s  p99 ${formatLatency(app.p99Ms)}`
      const room = Math.max(0, width - label - 2 - tail.length)
      lines.push(`${app.name.padEnd(label)}  ${colors.cyan(sparkline((app.history || []).slice(-room), room))}${tail}`)
    }
  }
  lines.push('')
  const room = height - lines.length - 1
  if (room > 0) {
    lines.push(colors.dim('─'.repeat(Math.min(width, 40)) + ' logs'))
    for (const l of logs.slice(-(room - 1)).map((l) => clip(l, width))) lines.push(l)
  }
  return lines.slice(0, height).map((l) => clip(l, width)).join('\n')
}

/** A bar per value, scaled to the largest; padded on the left to `width` with blanks. */
function sparkline (values, width) {
  if (width <= 0) return ''
  const max = Math.max(0, ...values)
  const bars = values.map((v) => v <= 0 ? ' ' : SPARKS[Math.min(SPARKS.length - 1, Math.floor((v / max) * (SPARKS.length - 1)))])
  return bars.join('').padStart(width)
}

/** The first `width` visible characters of a line that may hold ANSI colour codes. */
function clip (line, width) {
  let visible = 0
  let i = 0
  let coloured = false
  while (i < line.length) {
    if (line[i] === '\x1b') {
      const m = /^\x1b\[[0-9;?]*[A-Za-z]/.exec(line.slice(i)) // eslint-disable-line no-control-regex
      if (m) {
        i += m[0].length
        coloured = true
        continue
      }
    }
    if (visible === width) return line.slice(0, i) + (coloured ? '\x1b[0m' : '')
    visible++
    i++
  }
  return line
}

module.exports = { register, render, sparkline, clip }
