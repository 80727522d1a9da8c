'use strict'

// Issue 25's targets for the native router, from one matrix run: each measured, and met,
// missed or not measured (with why). Every ratio is the median of per-round ratios
// against a peer measured in the same rounds (bench/lib/stats.js pairedRatio); the JS
// hub's figure for the same target is given beside it, from the same run.

const { median } = require('./stats')

const x = (v) => (typeof v === 'number' ? `${v.toFixed(2)}x` : 'n/a')
const us = (v) => (typeof v === 'number' ? `${v.toFixed(1)} us` : 'n/a')
const mb = (v) => (typeof v === 'number' ? `${v.toFixed(1)} MB` : 'n/a')
const isNum = (v) => typeof v === 'number' && !Number.isNaN(v)
// "(text)", or nothing for no text
const paren = (text) => (text ? ` (${text})` : '')

/**
 * The memory scenario's figures per target: median MB by role idle and loaded (with
 * the 40 clients), and the median growth (loaded - idle) by role.
 * @param {object[]} rounds per round, target name -> measureMemory()'s answer
 */
function memorySummary (rounds) {
  const out = {}
  const names = new Set(rounds.flatMap((r) => Object.keys(r)))
  for (const t of names) {
    const ms = rounds.map((r) => r[t]).filter((m) => m && m.idle)
    if (ms.length === 0) continue
    const roles = new Set(ms.flatMap((m) => [...Object.keys(m.idle), ...Object.keys(m.loaded)]))
    const f = { idle: {}, loaded: {}, growth: {}, rounds: ms.length }
    for (const role of roles) {
      f.idle[role] = median(ms.map((m) => m.idle[role]))
      f.loaded[role] = median(ms.map((m) => m.loaded[role]))
      f.growth[role] = median(ms.map((m) => (isNum(m.loaded[role]) && isNum(m.idle[role]) ? m.loaded[role] - m.idle[role] : null)))
    }
    out[t] = f
  }
  return out
}

/** What a target's CPU per request was made of: "router 5.0 + workers 6.1 + supervisor 0.2 us". */
function roleSplit (figures) {
  if (!figures || !figures.roles) return ''
  const order = ['router', 'workers', 'supervisor']
  const parts = order.filter((r) => figures.roles[r] && isNum(figures.roles[r].cpuUsPerRequest))
    .map((r) => `${r} ${figures.roles[r].cpuUsPerRequest.toFixed(1)}`)
  return parts.length > 0 ? `${parts.join(' + ')} us` : ''
}

/**
 * The rows of the targets table.
 * @param {object[]} scenarios the run's result.scenarios (summaries, skips, the memory one)
 * @param {number} n the instance count of the xN targets
 * @returns {{ target: string, measured: string, status: string, hub: string }[]}
 */
function evaluateRouterTargets (scenarios, n) {
  const byName = Object.fromEntries(scenarios.map((s) => [s.name, s]))
  const why = (scenario, target) => {
    const s = byName[scenario]
    if (!s) return 'scenario not run'
    if (s.skipped) return s.skipped
    const t = s.skippedTargets && s.skippedTargets[target]
    return t || (s.targets && !s.targets[target] ? `${target} not run` : null)
  }
  const ratio = (scenario, pair) => {
    const s = byName[scenario]
    return (s && s.ratios && s.ratios[pair]) || {}
  }
  const fig = (scenario, target) => {
    const s = byName[scenario]
    return (s && s.targets && s.targets[target]) || null
  }
  const routerCpu = (scenario, target) => {
    const f = fig(scenario, target)
    return f && f.roles && f.roles.router ? f.roles.router.cpuUsPerRequest : null
  }
  const rows = []
  const add = (target, measured, ok, hub, missing) => {
    rows.push({ target, measured: missing || measured, status: missing ? 'not measured' : ok ? 'met' : 'missed', hub })
  }
  // a ratio against bare node, req/s (and CPU), for the native router and for the hub
  const vsNode = (scenario, min, label) => {
    const nat = ratio(scenario, 'native-1/node')
    const hub = ratio(scenario, 'httpsys-1/node')
    add(`${label}: >= ${min.toFixed(1)}x bare node req/s`,
      `${x(nat.rps)} req/s, ${x(nat.cpu)} CPU/request${paren(roleSplit(fig(scenario, 'native-1')))}`,
      nat.rps >= min,
      `${x(hub.rps)} req/s, ${x(hub.cpu)} CPU`,
      isNum(nat.rps) ? null : `not measured: ${why(scenario, 'native-1') || why(scenario, 'node') || 'no ratio'}`)
  }

  {
    const nat = ratio('hello', 'native-1/node')
    const hub = ratio('hello', 'httpsys-1/node')
    const node = fig('hello', 'node')
    add('keep-alive hello, 1 instance: <= 0.6x bare node CPU/request (whole tree), >= 1.3x its req/s',
      `${x(nat.rps)} req/s, ${x(nat.cpu)} CPU/request${paren([roleSplit(fig('hello', 'native-1')), `node ${us(node && node.cpuUsPerRequest)}`].filter(Boolean).join('; '))}`,
      nat.rps >= 1.3 && nat.cpu <= 0.6,
      `${x(hub.rps)} req/s, ${x(hub.cpu)} CPU${paren(roleSplit(fig('hello', 'httpsys-1')))}`,
      isNum(nat.rps) && isNum(nat.cpu) ? null : `not measured: ${why('hello', 'native-1') || why('hello', 'node')}`)
  }
  {
    const nat = ratio('hello', 'native-N/cluster')
    const hub = ratio('hello', 'httpsys-N/cluster')
    add(`keep-alive hello, ${n} instances: >= 1.2x node cluster x${n} req/s at <= 0.7x its CPU/request`,
      `${x(nat.rps)} req/s, ${x(nat.cpu)} CPU/request${paren(roleSplit(fig('hello', 'native-N')))}`,
      nat.rps >= 1.2 && nat.cpu <= 0.7,
      `${x(hub.rps)} req/s, ${x(hub.cpu)} CPU`,
      isNum(nat.rps) && isNum(nat.cpu) ? null : `not measured: ${why('hello', 'native-N') || why('hello', 'cluster')}`)
  }
  {
    const nat = ratio('close', 'native-1/node')
    const vsUnit = ratio('close', 'native-1/unit')
    const hub = ratio('close', 'httpsys-1/node')
    const hubUnit = ratio('close', 'httpsys-1/unit')
    const rc = routerCpu('close', 'native-1')
    const unitRouter = routerCpu('close', 'unit')
    const parts = [
      `${x(nat.rps)} bare node`,
      isNum(vsUnit.rps) ? `${x(vsUnit.rps)} Unit` : `Unit: ${why('close', 'unit') || 'n/a'}`,
      `router ${us(rc)} per connection (Unit's router ${us(unitRouter)})`
    ]
    add('Connection: close: >= 1.2x bare node and >= 1.0x NGINX Unit req/s; router CPU per connection <= 50 us',
      parts.join(', '),
      nat.rps >= 1.2 && vsUnit.rps >= 1.0 && rc <= 50,
      `${x(hub.rps)} bare node, ${x(hubUnit.rps)} Unit, hub ${us(routerCpu('close', 'httpsys-1'))}`,
      isNum(nat.rps) ? null : `not measured: ${why('close', 'native-1') || why('close', 'node')}`)
    // without Unit's column, what was measured can miss the target but not meet it
    const last = rows[rows.length - 1]
    if (last.status === 'missed' && !isNum(vsUnit.rps) && nat.rps >= 1.2 && rc <= 50) last.status = 'not measured (no Unit column)'
  }
  vsNode('body-10k', 1.2, '10 KB response')
  vsNode('body-1m', 0.9, '1 MB response')
  vsNode('upload-1m', 0.9, '1 MB upload')
  {
    const rc = routerCpu('cached', 'native-1')
    const ceiling = fig('cached', 'ceiling')
    const c = ceiling && ceiling.cpuUsPerRequest
    add("cached hello: router CPU per hit <= the ceiling's (nginx from memory) CPU per request",
      `router ${us(rc)} per hit, ceiling ${us(c)}`,
      rc <= c,
      `hub ${us(routerCpu('cached', 'httpsys-1'))} per hit`,
      isNum(rc) && isNum(c) ? null : `not measured: ${why('cached', 'native-1') || why('cached', 'ceiling') || 'no router figure'}`)
  }
  vsNode('https', 1.2, 'HTTPS keep-alive')
  vsNode('https-close', 1.0, 'HTTPS new connection')
  {
    const mem = byName.memory && byName.memory.memory
    const nat = mem && mem['native-1']
    const hub = mem && mem['httpsys-1']
    const idle = nat && nat.idle.router
    const growth = nat && nat.growth.router
    add('router memory: <= 30 MB idle; 40 never-reading clients <= +100 MB',
      `${mb(idle)} idle, +${mb(growth)} with 40 never-reading clients (workers ${mb(nat && nat.idle.workers)} idle, +${mb(nat && nat.growth.workers)})`,
      idle <= 30 && growth <= 100,
      hub ? `supervisor + hub ${mb(hub.idle.router)} idle, +${mb(hub.growth.router)}` : 'n/a',
      isNum(idle) && isNum(growth) ? null : `not measured: ${why('memory', 'native-1') || 'no router figure'}`)
  }
  return rows
}

module.exports = { evaluateRouterTargets, memorySummary, roleSplit }
