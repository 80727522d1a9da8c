'use strict'

// The benchmark matrix (`npm run bench -- --matrix`): every scenario of
// bench/lib/scenarios.js served by bare node, a node cluster, nginx in front of node
// processes, httpsys (its router, issue 25) with 1 and N instances, and NGINX Unit, in one
// run (and, as the machine's ceiling, nginx answering from its own memory).
// bench/README.md says what each is. Each round runs every
// target of a scenario back to back, in an order that changes from round to round, so
// what else the machine is doing falls on all of them alike.
//
//   npm run bench -- --matrix [--duration 3] [--rounds 2] [--warmup 1] [--connections 50]
//       [--instances N] [--only hello,close,...]
//       [--targets node,cluster,nginx,httpsys-1,httpsys-N,unit,ceiling]
//       [--tool wrk|autocannon] [--out bench/results] [--note "text"] [--profile dir]
//   npm run bench -- --matrix --render bench/results/matrix.json    (report and charts again)
//
// Writes matrix.json, a markdown report and SVG charts to --out.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')

const load = require('./lib/load')
const { readProcs, treeTotals, roleTotals, cpuMsBetween, systemUnits } = require('./lib/procstat')
const { roundOrder, median } = require('./lib/stats')
const { scenarioSummary, renderMarkdown, fromHubEra } = require('./lib/report')
const { evaluateRouterTargets, memorySummary } = require('./lib/router-targets')
const { measureMemory } = require('./lib/memory')
const { chartSpecs, renderSvg } = require('./lib/charts')
const { select } = require('./lib/scenarios')
const { targets: allTargets, pickTargets, findNginx, findRouter, findUnit, makeCert, stopAll, get, answersFromCache } = require('./lib/targets')

const ROOT = path.join(__dirname, '..')
const SAMPLE_MS = 500

const OPTIONS = {
  matrix: { type: 'boolean', default: true },
  duration: { type: 'string', default: '3' },
  rounds: { type: 'string', default: '2' },
  warmup: { type: 'string', default: '1' },
  connections: { type: 'string', default: '50' },
  instances: { type: 'string', default: String(os.cpus().length) },
  only: { type: 'string' },
  targets: { type: 'string' },
  tool: { type: 'string' },
  out: { type: 'string' }, // default: bench/results, or with --render the JSON's directory
  note: { type: 'string', multiple: true, default: [] },
  render: { type: 'string' },
  profile: { type: 'string' }, // a directory: the router writes a CPU profile per httpsys run there
  json: { type: 'boolean', default: false }
}

function positiveNumber (name, text, { integer = false, zero = false } = {}) {
  const v = Number(text)
  if (!Number.isFinite(v) || v < 0 || (!zero && v === 0) || (integer && !Number.isInteger(v))) {
    throw new Error(`--${name} must be a ${integer ? 'whole ' : ''}number${zero ? '' : ' above 0'}: ${text}`)
  }
  return v
}

function versionOf (cmd, args) {
  try {
    const r = spawnSync(cmd, args, { encoding: 'utf8' })
    return `${r.stdout || ''}${r.stderr || ''}`.split('\n')[0].trim() || null
  } catch {
    return null
  }
}

/** The command line to give a reader: the run's options, less --note (a remark, not a setting). */
function reproduceCommand (argv) {
  const kept = []
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--matrix' || argv[i].startsWith('--note=')) continue
    if (argv[i] === '--note') { i++; continue }
    kept.push(/^[\w.,/=-]+$/.test(argv[i]) ? argv[i] : JSON.stringify(argv[i]))
  }
  return ['npm run bench -- --matrix', ...kept].join(' ')
}

function gitRevision () {
  const r = spawnSync('git', ['describe', '--always', '--dirty'], { cwd: ROOT, encoding: 'utf8' })
  return r.status === 0 ? r.stdout.trim() : null
}

function machine () {
  const cpus = os.cpus()
  const m = {
    cpus: cpus.length,
    model: cpus[0] ? cpus[0].model.replace(/\s+/g, ' ').trim() : 'unknown CPU',
    memGB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.version
  }
  return { ...m, description: `${m.cpus} cores (${m.model}), ${m.memGB} GB, ${m.os}, node ${m.node}` }
}

/** CPU ms and RSS MB by role between two roleTotals() readings, per request. */
function rolesBetween (before, after, requests, { clkTck, pageSize }) {
  const out = {}
  for (const [role, a] of Object.entries(after)) {
    const b = before[role] || { ticks: 0 }
    const cpuMs = cpuMsBetween(b, a, clkTck)
    out[role] = {
      cpuMs,
      cpuUsPerRequest: cpuMs !== null && requests > 0 ? (cpuMs * 1000) / requests : null,
      rssMB: (a.rssPages * pageSize) / 2 ** 20,
      processes: a.processes
    }
  }
  return out
}

async function measure (scenario, target, ctx) {
  const handle = await target.start(scenario, ctx)
  try {
    if (scenario.kind === 'memory') return await measureMemory(handle, get)
    // the cached scenarios measure httpsys's output cache: an answer without Age would
    // measure the app instead, under the cache's name
    if (scenario.cache && target.name.startsWith('httpsys') && !(await answersFromCache(handle.url))) {
      throw new Error('a repeated cacheable answer carries no Age: the output cache did not answer it')
    }
    const base = { url: handle.url, connections: ctx.connections, tmpDir: ctx.tmpDir, ...scenario.load }
    // warm-up, so every target is measured with its code optimised and its connections made
    if (ctx.warmup > 0) await load.run(load.command(ctx.tool, { ...base, seconds: ctx.warmup }))
    const { clkTck, pageSize } = systemUnits()
    const classify = handle.classify || (() => 'server')
    const procsBefore = readProcs()
    const before = treeTotals(procsBefore, handle.roots)
    const rolesBefore = roleTotals(procsBefore, handle.roots, classify)
    let peakPages = before.rssPages
    const sampler = setInterval(() => {
      peakPages = Math.max(peakPages, treeTotals(readProcs(), handle.roots).rssPages)
    }, SAMPLE_MS)
    let r
    try {
      r = await load.run(load.command(ctx.tool, { ...base, seconds: ctx.duration }))
    } finally {
      clearInterval(sampler)
    }
    // a run with no answer (every connection stuck in its handshake on a loaded machine)
    // is a failed round, not a 0 in the medians
    if (!(r.requests > 0)) throw new Error(`no request was answered in ${ctx.duration} s`)
    const procsAfter = readProcs()
    const after = treeTotals(procsAfter, handle.roots)
    const roles = rolesBetween(rolesBefore, roleTotals(procsAfter, handle.roots, classify), r.requests, { clkTck, pageSize })
    peakPages = Math.max(peakPages, after.rssPages)
    const cpuMs = cpuMsBetween(before, after, clkTck)
    return {
      ...r,
      roles,
      // the machine's 1-minute load average as the run ended: other work on the cores
      loadavg: os.loadavg()[0],
      cpuMs,
      cpuUsPerRequest: cpuMs !== null && r.requests > 0 ? (cpuMs * 1000) / r.requests : null,
      rssMB: (peakPages * pageSize) / 2 ** 20,
      processes: after.processes
    }
  } finally {
    await handle.stop()
  }
}

function fmt (v, d = 0) {
  return typeof v === 'number' ? v.toFixed(d) : 'n/a'
}

async function run (argv) {
  const { values: opts } = parseArgs({ args: argv, options: OPTIONS })
  if (opts.render) {
    // the report and charts again from a run's JSON, without measuring anything
    const result = fromHubEra(JSON.parse(fs.readFileSync(opts.render, 'utf8')))
    // the targets again from the figures, so a change to their rules shows on an old run
    result.routerTargets = evaluateRouterTargets(result.scenarios, result.options.instances)
    await writeReport(result, opts.out || path.dirname(opts.render), { withJson: false })
    return result
  }
  const ctx = {
    duration: positiveNumber('duration', opts.duration),
    rounds: positiveNumber('rounds', opts.rounds, { integer: true }),
    warmup: positiveNumber('warmup', opts.warmup, { zero: true }),
    connections: positiveNumber('connections', opts.connections, { integer: true }),
    instances: positiveNumber('instances', opts.instances, { integer: true }),
    tool: opts.tool || (load.hasWrk() ? 'wrk' : 'autocannon'),
    nginx: findNginx(),
    router: findRouter(),
    unit: findUnit(),
    profileDir: opts.profile ? path.resolve(opts.profile) : null
  }
  if (ctx.profileDir) fs.mkdirSync(ctx.profileDir, { recursive: true })
  if (!['wrk', 'autocannon'].includes(ctx.tool)) throw new Error(`--tool must be wrk or autocannon: ${ctx.tool}`)
  const scenarios = select(opts.only)
  const picked = pickTargets(allTargets(ctx.instances), opts.targets)
  const targetList = picked.targets
  for (const n of picked.notes) console.log(`# ${n}`)

  const notes = [...opts.note]
  if (ctx.tool === 'autocannon') {
    notes.push(`${opts.tool ? 'autocannon made the load (--tool autocannon)' : 'wrk is not installed (apt-get install wrk): autocannon made the load'}; ` +
      'it cannot open a connection per request, reports latency in whole ms, and uses more CPU of its own than wrk')
  }
  const skippedTargets = {}
  if (targetList.some((t) => t.needs === 'nginx') && !ctx.nginx) {
    for (const t of targetList) if (t.needs === 'nginx') skippedTargets[t.name] = 'skipped: nginx not installed (apt-get install nginx)'
    notes.push('nginx is not installed (apt-get install nginx, or NGINX=/path/to/nginx): its column is skipped')
  }
  const NEEDS = {
    router: [ctx.router, 'the router is not built (npm run build:router)'],
    unit: [ctx.unit, 'NGINX Unit is not built (bench/unit/build.sh, bench/README.md; UNIT_PREFIX names its prefix)']
  }
  for (const [need, [found, why]] of Object.entries(NEEDS)) {
    if (found || !targetList.some((t) => t.needs === need)) continue
    for (const t of targetList) if (t.needs === need) skippedTargets[t.name] = `skipped: ${why}`
    notes.push(`${why}: its column is skipped`)
  }
  if (ctx.unit && targetList.some((t) => t.needs === 'unit')) {
    notes.push(`${versionOf(ctx.unit.unitd, ['--version']) || 'unit'} (${ctx.unit.prefix}): the app in 1 node process (unit-http's loader), Unit's router threads on every core, TLS from its certificate store`)
  }
  if (ctx.router && targetList.some((t) => t.needs === 'router')) notes.push(`router: ${path.relative(ROOT, ctx.router) || ctx.router}${ctx.profileDir ? `, CPU profiles in ${ctx.profileDir}` : ''}`)
  const rev = gitRevision()
  if (rev) notes.push(`httpsys at ${rev}${rev.endsWith('-dirty') ? ' (the work tree had uncommitted changes)' : ''}`)
  notes.push(`load average at start: ${os.loadavg().map((v) => v.toFixed(2)).join(', ')} (1, 5, 15 min)`)
  if (ctx.tool === 'wrk') notes.push(`${versionOf('wrk', ['--version']) || 'wrk'}; one wrk thread, on the same machine as the servers`)
  if (ctx.nginx && targetList.some((t) => t.needs === 'nginx')) notes.push(`${versionOf(ctx.nginx, ['-v']) || 'nginx'}: worker_processes ${ctx.instances}, upstream keep-alive, access log off, 1 MB bodies buffered in memory`)

  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-bench-matrix-'))
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.once(sig, () => {
      console.error(`\n${sig}: stopping the servers this run started`)
      stopAll().finally(() => {
        fs.rmSync(tmpDir, { recursive: true, force: true })
        process.exit(130)
      })
    })
  }
  ctx.tmpDir = tmpDir
  ctx.cert = makeCert(tmpDir)

  // per scenario: rounds[i][target] = measurement
  const state = new Map()
  for (const s of scenarios) {
    let skipped = null
    if (s.load && s.load.close) {
      const probe = load.command(ctx.tool, { url: 'http://x/', connections: 1, seconds: 1, close: true, tmpDir })
      if (probe.skip) skipped = `skipped: ${probe.skip}`
    }
    state.set(s.name, { scenario: s, skipped, rounds: [] })
  }

  const runnable = targetList.filter((t) => !skippedTargets[t.name])
  const started = Date.now()
  // said before the run too, so whoever waits for it can install what is missing
  if (ctx.tool === 'autocannon' && !opts.tool) console.log('# wrk not found: using autocannon (apt-get install wrk for the Connection: close scenarios and a lighter load generator)')
  if (skippedTargets.nginx) console.log('# nginx not found: its column is skipped (apt-get install nginx)')
  console.log(`# matrix: ${ctx.tool}, ${ctx.connections} connections, ${ctx.warmup}+${ctx.duration} s per run, ${ctx.rounds} rounds, N = ${ctx.instances}; ` +
    `${scenarios.length} scenarios x ${runnable.length} targets`)
  try {
    for (let round = 0; round < ctx.rounds; round++) {
      for (const st of state.values()) {
        if (st.skipped) continue
        const row = {}
        for (const t of roundOrder(runnable, round)) {
          if (t.scenarios && !t.scenarios.includes(st.scenario.name)) continue
          if (st.scenario.targets && !st.scenario.targets.includes(t.name)) continue
          try {
            row[t.name] = await measure(st.scenario, t, ctx)
            const m = row[t.name]
            if (st.scenario.kind === 'memory') {
              const mb = (r) => Object.entries(r).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')
              console.log(`round ${round + 1} ${st.scenario.name.padEnd(11)} ${t.label.padEnd(18)} idle MB: ${mb(m.idle)}; ${m.clients} never-reading clients: ${mb(m.loaded)}`)
              continue
            }
            const roles = Object.entries(m.roles || {}).filter(([role]) => role !== 'server')
            console.log(`round ${round + 1} ${st.scenario.name.padEnd(11)} ${t.label.padEnd(18)} ${fmt(m.rps).padStart(7)} req/s  ` +
              `p50 ${fmt(m.p50, 2)} p99 ${fmt(m.p99, 2)} ms  ${fmt(m.cpuUsPerRequest, 1)} us CPU/req  ${fmt(m.rssMB)} MB` +
              `${roles.length > 0 ? `  (${roles.map(([role, f]) => `${role} ${fmt(f.cpuUsPerRequest, 1)}`).join(', ')} us)` : ''}` +
              `${m.errors ? `  errors ${m.errors}` : ''}`)
          } catch (err) {
            row[t.name] = { error: err.message.split('\n')[0] }
            console.log(`round ${round + 1} ${st.scenario.name.padEnd(11)} ${t.label.padEnd(18)} FAILED: ${err.message}`)
          }
        }
        st.rounds.push(row)
      }
    }
  } finally {
    fs.rmSync(tmpDir, { recursive: true, force: true })
  }
  notes.push(`load average at the end: ${os.loadavg().map((v) => v.toFixed(2)).join(', ')}; the run took ${Math.round((Date.now() - started) / 1000)} s`)
  const loads = [...state.values()].flatMap((st) => st.rounds.flatMap((row) => Object.values(row).map((m) => m.loadavg))).filter((v) => typeof v === 'number').sort((a, b) => a - b)
  if (loads.length > 0) {
    notes.push(`1-minute load average as each measurement ended: ${loads[0].toFixed(2)} to ${loads[loads.length - 1].toFixed(2)}, median ${median(loads).toFixed(2)} ` +
      `(${os.cpus().length} cores; above that, other work was waiting for them)`)
  }

  const result = {
    date: new Date().toISOString(),
    machine: machine(),
    tool: ctx.tool,
    command: reproduceCommand(argv),
    options: { duration: ctx.duration, rounds: ctx.rounds, warmup: ctx.warmup, connections: ctx.connections, instances: ctx.instances },
    targetList: targetList.map((t) => ({ name: t.name, label: t.label })),
    notes,
    scenarios: []
  }
  for (const st of state.values()) {
    const s = st.scenario
    if (st.skipped) {
      result.scenarios.push({ name: s.name, title: s.title, skipped: st.skipped })
      continue
    }
    const rounds = st.rounds.map((row) => Object.fromEntries(Object.entries(row).filter(([, m]) => !m.error)))
    const failures = {}
    for (const row of st.rounds) {
      for (const [t, m] of Object.entries(row)) if (m.error) failures[t] = m.error
    }
    if (s.kind === 'memory') {
      const skippedHere = { ...skippedTargets }
      for (const [t, e] of Object.entries(failures)) skippedHere[t] = `failed: ${e}`
      result.scenarios.push({ name: s.name, title: s.title, kind: 'memory', memory: memorySummary(rounds), skippedTargets: skippedHere, rounds: st.rounds })
      continue
    }
    const summary = scenarioSummary(rounds, targetList.map((t) => t.name))
    const skippedHere = { ...skippedTargets }
    for (const [t, e] of Object.entries(failures)) if (!summary.targets[t]) skippedHere[t] = `failed: ${e}`
    for (const [t, e] of Object.entries(failures)) if (summary.targets[t]) notes.push(`${s.title}, ${t}: a round failed (${e})`)
    result.scenarios.push({ name: s.name, title: s.title, ...summary, skippedTargets: skippedHere, rounds: st.rounds })
  }
  result.routerTargets = evaluateRouterTargets(result.scenarios, ctx.instances)

  await writeReport(result, opts.out || path.join(__dirname, 'results'), { withJson: true })
  if (opts.json) console.log(JSON.stringify(result))
  return result
}

/** The markdown report and the charts (and the JSON they come from) into dir. */
async function writeReport (result, dir, { withJson }) {
  fs.mkdirSync(dir, { recursive: true })
  if (withJson) fs.writeFileSync(path.join(dir, 'matrix.json'), JSON.stringify(result, null, 2) + '\n')
  const markdown = renderMarkdown(result)
  fs.writeFileSync(path.join(dir, 'matrix.md'), markdown) // an output file, not a reference
  const specs = chartSpecs(result)
  for (const [file, spec] of Object.entries(specs)) {
    fs.writeFileSync(path.join(dir, file), await renderSvg(spec))
  }
  console.log('')
  console.log(markdown)
  console.log(`written to ${path.relative(ROOT, dir) || '.'}/: ${withJson ? 'matrix.json, ' : ''}the report above as markdown, and charts (${Object.keys(specs).join(', ')})`)
}

module.exports = { run }

if (require.main === module) {
  run(process.argv.slice(2)).catch((err) => {
    console.error(err.message)
    process.exitCode = 1
  })
}
