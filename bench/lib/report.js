'use strict'

// From the matrix's measurements to what people read: the ratios between targets and
// the markdown report (the targets table is bench/lib/router-targets.js's).

const { pairedRatio, summarise } = require('./stats')

// which pairs get a ratio: each target against bare node, and httpsys against the peers
// it is held to (the cluster, nginx + node, NGINX Unit: issues 13 and 25)
const PAIRS = [
  ['cluster', 'node'], ['nginx', 'node'], ['httpsys-1', 'node'], ['httpsys-N', 'node'],
  ['httpsys-N', 'cluster'], ['httpsys-N', 'nginx'], ['httpsys-1', 'nginx'], ['ceiling', 'node'],
  ['unit', 'node'], ['httpsys-1', 'unit'], ['httpsys-N', 'unit']
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
    'From each process\'s /proc/<pid>/stat over the measured run. httpsys: router is the ' +
      'supervisor\'s child running router/bin/httpsys-router, workers the app\'s node processes, ' +
      'supervisor the node process controlling them. NGINX Unit: router is its `unit: router` process, ' +
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

// while the JS hub was the default (until issue 25), httpsys-1/-N were the hub and
// native-1/-N the router
const HUB_ERA = { 'native-1': 'httpsys-1', 'native-N': 'httpsys-N', 'httpsys-1': null, 'httpsys-N': null }

/**
 * A run recorded while the JS hub was httpsys's default, as a run today reads: the
 * router's native-1/-N columns become httpsys-1/-N, the hub's are dropped (with a note),
 * so --render of an old matrix.json puts no hub figure under httpsys's name. A run
 * without native-* columns is returned as it is.
 */
function fromHubEra (result) {
  if (!result.targetList.some((t) => t.name in HUB_ERA && HUB_ERA[t.name])) return result
  const rename = (name) => (name in HUB_ERA ? HUB_ERA[name] : name)
  const pair = (key) => {
    const names = key.split('/').map(rename)
    return names.includes(null) ? null : names.join('/')
  }
  const remap = (obj, by = rename) => {
    if (!obj) return obj
    const out = {}
    for (const [k, v] of Object.entries(obj)) if (by(k) !== null) out[by(k)] = v
    return out
  }
  const scenarios = result.scenarios.map((s) => ({
    ...s,
    ...(s.targets ? { targets: remap(s.targets) } : {}),
    ...(s.ratios ? { ratios: remap(s.ratios, pair) } : {}),
    ...(s.skippedTargets ? { skippedTargets: remap(s.skippedTargets) } : {}),
    ...(s.memory ? { memory: remap(s.memory) } : {}),
    ...(s.rounds ? { rounds: s.rounds.map((r) => remap(r)) } : {})
  }))
  const targetList = result.targetList.filter((t) => rename(t.name) !== null)
    .map((t) => ({ name: rename(t.name), label: t.label.replace(' native', '') }))
  const notes = [...result.notes, 'recorded while the JS hub was the default: its httpsys-1/-N columns are left out, the router\'s (native-1/-N then) are httpsys-1/-N here']
  const { targets, ...rest } = result // the hub's targets table of issues 10-13
  return { ...rest, targetList, scenarios, notes }
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
      '(supervisor, router and workers; cluster primary and workers; nginx and the node processes ' +
      'behind it) over the measured run, divided by the requests served; RSS is the peak of the ' +
      'tree\'s summed resident memory. Ratios are medians of per-round ratios.',
    '',
    '## Targets',
    '',
    'httpsys x1 against bare node unless the target says otherwise: issue 25\'s targets, then the ' +
      'two of issues 11 and 13 that issue 25\'s do not cover (bench/lib/router-targets.js).',
    '',
    markdownTable(['target', 'measured', 'status'], (result.routerTargets || []).map((t) => [t.target, t.measured, t.status])),
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

module.exports = { scenarioSummary, markdownTable, num, renderMarkdown, fromHubEra }
