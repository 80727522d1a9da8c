'use strict'

// From the matrix's measurements to what people read: the ratios between targets, the
// issue's performance targets marked met or missed, and the markdown report.

const { pairedRatio, summarise } = require('./stats')

// which pairs get a ratio: each target against bare node, and httpsys against the peer
// it replaces (the native router also against the hub and NGINX Unit, issue 25)
const PAIRS = [
  ['cluster', 'node'], ['nginx', 'node'], ['httpsys-1', 'node'], ['httpsys-N', 'node'],
  ['httpsys-N', 'cluster'], ['httpsys-N', 'nginx'], ['httpsys-1', 'nginx'], ['ceiling', 'node'],
  ['native-1', 'node'], ['native-N', 'node'], ['native-N', 'cluster'], ['native-1', 'httpsys-1'],
  ['native-N', 'httpsys-N'], ['unit', 'node'], ['native-1', 'unit'], ['native-N', 'unit'], ['httpsys-1', 'unit']
]

/**
 * A scenario's figures: per target the medians over its rounds, and per pair the median
 * of the per-round ratios of req/s and of CPU per request.
 */
function scenarioSummary (rounds, targetNames) {
  const targets = {}
  for (const t of targetNames) {
    const ms = rounds.map((r) => r[t]).filter(Boolean)
    if (ms.length > 0) targets[t] = summarise(ms)
  }
  const ratios = {}
  for (const [a, b] of PAIRS) {
    if (!targets[a] || !targets[b]) continue
    ratios[`${a}/${b}`] = { rps: pairedRatio(rounds, 'rps', a, b), cpu: pairedRatio(rounds, 'cpuUsPerRequest', a, b) }
  }
  return { targets, ratios }
}

const x = (v) => (typeof v === 'number' ? `${v.toFixed(2)}x` : 'n/a')

/**
 * The issue's targets, each { target, measured, status: 'met' | 'missed' | 'not measured' }.
 * byName maps a scenario name to its scenarioSummary(); n is the instance count.
 */
function evaluateTargets (byName, n) {
  const ratioOf = (scenario, pair) => byName[scenario] && byName[scenario].ratios[pair]
  const out = []

  const one = ratioOf('hello', 'httpsys-1/node')
  out.push({
    target: 'keep-alive, 1 instance: >= 1.0x bare node req/s at <= 1.0x CPU/request',
    measured: one ? `${x(one.rps)} req/s, ${x(one.cpu)} CPU/request` : 'n/a',
    status: status(one, (r) => r.rps >= 1 && r.cpu <= 1)
  })

  const many = ratioOf('hello', 'httpsys-N/cluster')
  out.push({
    target: `keep-alive, ${n} instances: >= 1.0x node cluster req/s at <= 1.0x CPU/request`,
    measured: many ? `${x(many.rps)} req/s, ${x(many.cpu)} CPU/request` : 'n/a',
    status: status(many, (r) => r.rps >= 1 && r.cpu <= 1)
  })

  const close = ratioOf('close', 'httpsys-N/nginx')
  const closeOne = ratioOf('close', 'httpsys-1/nginx')
  out.push({
    target: `Connection: close: >= 1.0x nginx in front of node (both ${n} processes)`,
    measured: close ? `${x(close.rps)} req/s (httpsys x1: ${x(closeOne && closeOne.rps)})` : 'n/a',
    status: status(close, (r) => r.rps >= 1, (r) => typeof r.rps === 'number')
  })

  // issue 11: the hub's output cache against bare node making every response. Where
  // not even nginx answering from its own memory (the ceiling target) reaches 3x bare
  // node on this machine, with this load generator, no server can show the target here.
  const cached = ratioOf('cached', 'httpsys-1/node')
  const cached10k = ratioOf('cached-10k', 'httpsys-1/node')
  const ceiling = ratioOf('cached', 'ceiling/node')
  const unreachable = ceiling && typeof ceiling.rps === 'number' && ceiling.rps < 3
  out.push({
    target: 'cached response (1 s), 1 instance: >= 3.0x bare node req/s',
    measured: cached
      ? `${x(cached.rps)} req/s (10 KB: ${x(cached10k && cached10k.rps)})${ceiling ? `; this machine's ceiling: ${x(ceiling.rps)}` : ''}`
      : 'n/a',
    status: cached && typeof cached.rps === 'number' && cached.rps < 3 && unreachable
      ? 'not measurable here'
      : status(cached, (r) => r.rps >= 3, (r) => typeof r.rps === 'number')
  })
  return out
}

function status (r, met, measured = (v) => typeof v.rps === 'number' && typeof v.cpu === 'number') {
  if (!r || !measured(r)) return 'not measured'
  return met(r) ? 'met' : 'missed'
}

/** A markdown table; cells are strings, `|` in them escaped. align: 'l' or 'r' per column. */
function markdownTable (headers, rows, align = []) {
  const esc = (c) => String(c).replace(/\|/g, '\\|').replace(/\n/g, ' ')
  const line = (cells) => `| ${cells.map(esc).join(' | ')} |`
  const rule = headers.map((_, i) => (align[i] === 'r' ? '---:' : '---'))
  return [line(headers), `| ${rule.join(' | ')} |`, ...rows.map(line)].join('\n')
}

/** Fixed decimals, or 'n/a'; large numbers without decimals. */
function num (v, digits = 1) {
  if (typeof v !== 'number' || Number.isNaN(v)) return 'n/a'
  return Math.abs(v) >= 1000 ? String(Math.round(v)) : v.toFixed(digits)
}

/**
 * CPU per request by role, for the servers made of a router and workers: where each
 * one's cost is (bench/lib/targets.js classify). Empty when no target had roles.
 */
function roleSection (result) {
  const rows = []
  for (const s of result.scenarios) {
    if (s.skipped || s.kind === 'memory') continue
    let first = true
    for (const t of result.targetList) {
      const f = s.targets[t.name]
      if (!f || !f.roles || !f.roles.router) continue
      const r = (role) => (f.roles[role] ? num(f.roles[role].cpuUsPerRequest, 1) : '-')
      rows.push([first ? s.title : '', t.label, num(f.cpuUsPerRequest, 1), r('router'), r('workers'), r('supervisor')])
      first = false
    }
  }
  if (rows.length === 0) return []
  return [
    '',
    '## CPU per request by role',
    '',
    'From each process\'s /proc/<pid>/stat over the measured run. httpsys on the JS hub: the ' +
      'hub runs in the supervisor\'s process, so its router column is the supervisor with the hub. ' +
      'httpsys native: router is the supervisor\'s child running router/bin/httpsys-router, ' +
      'supervisor the node process controlling it. NGINX Unit: router is its `unit: router` process, ' +
      'workers its app prototype and application processes, supervisor its main and controller.',
    '',
    markdownTable(['scenario', 'server', 'total us/req', 'router', 'workers', 'supervisor'], rows, ['l', 'l', 'r', 'r', 'r', 'r'])
  ]
}

/** The memory scenario's table: MB by role idle, with the never-reading clients, and the growth. */
function memorySection (result) {
  const s = result.scenarios.find((sc) => sc.kind === 'memory' && !sc.skipped)
  if (!s) return []
  const rows = []
  for (const t of result.targetList) {
    const skipped = s.skippedTargets && s.skippedTargets[t.name]
    const f = s.memory[t.name]
    if (!f) {
      if (skipped) rows.push([t.label, '-', '-', '-', '-', skipped])
      continue
    }
    const roles = ['router', 'server', 'workers', 'supervisor'].filter((role) => f.idle[role] !== undefined)
    // a total only where it adds up more than one role
    for (const role of roles.length > 1 ? [...roles, 'total'] : roles) {
      rows.push([t.label, role, num(f.idle[role], 1), num(f.loaded[role], 1), `+${num(f.growth[role], 1)}`, ''])
    }
  }
  return [
    '',
    `## Memory: ${s.title}`,
    '',
    'Resident MB by role: idle once a request was answered, then the peak while 40 clients each ' +
      'have 4 pipelined requests for a 1 MB response and read nothing (bench/lib/memory.js); ' +
      'medians over the rounds.',
    '',
    markdownTable(['server', 'role', 'idle MB', 'with 40 clients MB', 'growth', 'note'], rows, ['l', 'l', 'r', 'r', 'r', 'l'])
  ]
}

/** The whole report as markdown, from the result object the matrix writes as JSON. */
function renderMarkdown (result) {
  const o = result.options
  const lines = [
    '# httpsys benchmark matrix',
    '',
    `${result.date}, ${result.machine.description}. Load: ${result.tool}, ${o.connections} connections, ` +
      `${o.warmup} s warm-up then ${o.duration} s measured, ${o.rounds} round${o.rounds === 1 ? '' : 's'} ` +
      `(targets alternating within each round), N = ${o.instances}. Reproduce: \`${result.command}\`.`,
    '',
    'CPU/request is the user + system CPU time of the whole process tree of each server ' +
      '(supervisor, hub and workers; cluster primary and workers; nginx and the node processes ' +
      'behind it) over the measured run, divided by the requests served; RSS is the peak of the ' +
      'tree\'s summed resident memory. Ratios are medians of per-round ratios.',
    '',
    ...(result.routerTargets
      ? [
          '## Targets of issue 25 (the native router)',
          '',
          'httpsys native x1 against bare node unless the target says otherwise; the JS hub\'s figure ' +
            'for the same target (httpsys x1 or xN) is from the same rounds.',
          '',
          markdownTable(['target', 'native router, measured', 'status', 'JS hub, same run'],
            result.routerTargets.map((t) => [t.target, t.measured, t.status, t.hub])),
          ''
        ]
      : []),
    '## Targets of issues 10-13 (httpsys on the JS hub)',
    '',
    markdownTable(['target', 'measured', 'status'], result.targets.map((t) => [t.target, t.measured, t.status])),
    '',
    '## Results',
    ''
  ]
  const rows = []
  for (const s of result.scenarios) {
    if (s.kind === 'memory') continue
    if (s.skipped) {
      rows.push([s.title, '-', '-', '-', '-', '-', '-', '-', '-', s.skipped])
      continue
    }
    let first = true
    for (const t of result.targetList) {
      const label = t.label
      const skippedTarget = s.skippedTargets && s.skippedTargets[t.name]
      if (skippedTarget) {
        rows.push([first ? s.title : '', label, '-', '-', '-', '-', '-', '-', '-', skippedTarget])
        first = false
        continue
      }
      const f = s.targets[t.name]
      if (!f) continue
      const vsNode = s.ratios[`${t.name}/node`]
      rows.push([
        first ? s.title : '',
        label,
        num(f.rps, 0),
        t.name === 'node' ? '1.00x' : x(vsNode && vsNode.rps),
        num(f.p50, 2),
        num(f.p99, 2),
        num(f.cpuUsPerRequest, 1),
        t.name === 'node' ? '1.00x' : x(vsNode && vsNode.cpu),
        num(f.rssMB, 0),
        f.errors ? String(f.errors) : ''
      ])
      first = false
    }
  }
  lines.push(markdownTable(
    ['scenario', 'server', 'req/s', 'vs node', 'p50 ms', 'p99 ms', 'CPU us/req', 'vs node', 'RSS MB', 'errors / note'],
    rows,
    ['l', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'l']
  ))
  lines.push(...roleSection(result), ...memorySection(result))
  if (result.notes.length > 0) {
    lines.push('', '## Notes', '', ...result.notes.map((n) => `- ${n}`))
  }
  lines.push('')
  return lines.join('\n')
}

module.exports = { scenarioSummary, evaluateTargets, markdownTable, num, renderMarkdown }
