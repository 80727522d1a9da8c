'use strict'

// The TSV of node's tests and the summary built from it and the checked-in
// classification (node-known.json).

const fs = require('node:fs')

const COLUMNS = [
  'file', 'kind', 'flags', 'status', 'baseline', 'baseline_ms', 'preload', 'preload_ms',
  'tag', 'cause', 'why', 'preload_error', 'baseline_error'
]

const OUT_OF_SCOPE = /^out of scope:/
const KNOWN = /^known difference:/

function clean (v) {
  return String(v === undefined || v === null ? '' : v).replace(/[\t\r\n]+/g, ' ')
}

/** Each row with its classification entry (only preload-only failures get one). */
function classify (rows, known) {
  for (const row of rows) {
    row.tag = ''
    row.cause = ''
    row.why = ''
    if (row.baseline === 'pass' && row.preload !== 'pass') {
      const k = known[row.file]
      if (k) {
        row.tag = k.tag || ''
        row.cause = k.cause || ''
        row.why = k.why || ''
      } else {
        row.cause = 'unclassified'
      }
    }
  }
  return rows
}

function writeTsv (file, rows) {
  const lines = [COLUMNS.join('\t')]
  for (const r of rows) {
    lines.push([
      r.file, r.kind, r.flags.join(' '), r.status, r.baseline, r.baselineMs, r.preload,
      r.preloadMs, r.tag, r.cause, r.why, r.preloadError, r.baselineError
    ].map(clean).join('\t'))
  }
  fs.writeFileSync(file, lines.join('\n') + '\n')
}

/** A previous run's rows, for re-classifying without running (--from-tsv). */
function readRows (file) {
  const text = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)
  const head = text.shift().split('\t')
  return text.map((line) => {
    const f = line.split('\t')
    const get = (name) => f[head.indexOf(name)] || ''
    return {
      file: get('file'),
      kind: get('kind'),
      flags: get('flags').split(' ').filter(Boolean),
      status: get('status'),
      baseline: get('baseline'),
      baselineMs: Number(get('baseline_ms')) || 0,
      baselineError: get('baseline_error'),
      preload: get('preload'),
      preloadMs: Number(get('preload_ms')) || 0,
      preloadError: get('preload_error')
    }
  })
}

/** A previous run's baseline results (file -> { baseline, baselineMs, baselineError }). */
function readBaseline (file) {
  const text = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)
  const head = text.shift().split('\t')
  const col = (name) => head.indexOf(name)
  const out = new Map()
  for (const line of text) {
    const f = line.split('\t')
    out.set(f[col('file')], {
      baseline: f[col('baseline')],
      baselineMs: Number(f[col('baseline_ms')]) || 0,
      baselineError: f[col('baseline_error')] || ''
    })
  }
  return out
}

function pct (a, b) {
  return b === 0 ? 'n/a' : (100 * a / b).toFixed(1) + '%'
}

/** The numbers, as an object (summary.json) */
function summarize (rows, known) {
  const count = (pred) => rows.filter(pred).length
  const s = {
    files: rows.length,
    statusSkip: count((r) => r.status === 'SKIP'),
    baseline: {
      pass: count((r) => r.baseline === 'pass'),
      fail: count((r) => r.baseline === 'fail'),
      timeout: count((r) => r.baseline === 'timeout'),
      skip: count((r) => r.baseline === 'skip')
    },
    preload: {
      pass: count((r) => r.preload === 'pass'),
      fail: count((r) => r.preload === 'fail'),
      timeout: count((r) => r.preload === 'timeout'),
      skip: count((r) => r.preload === 'skip')
    }
  }
  const both = count((r) => r.baseline === 'pass' && r.preload === 'pass')
  const only = rows.filter((r) => r.baseline === 'pass' && r.preload !== 'pass')
  s.bothPass = both
  s.preloadOnlyFailures = only.length
  s.preloadOnlyPasses = rows.filter((r) => r.baseline !== 'pass' && r.baseline !== 'skip' && r.preload === 'pass').map((r) => r.file)
  const outOfScope = only.filter((r) => OUT_OF_SCOPE.test(r.tag))
  const knownDiff = only.filter((r) => KNOWN.test(r.tag))
  const bugs = only.filter((r) => !OUT_OF_SCOPE.test(r.tag) && !KNOWN.test(r.tag))
  s.byTag = {}
  for (const r of only) {
    const t = r.tag || 'bug'
    s.byTag[t] = (s.byTag[t] || 0) + 1
  }
  s.outOfScope = outOfScope.length
  s.knownDifferences = knownDiff.length
  s.bugs = bugs.length
  s.bugCauses = {}
  for (const r of bugs) s.bugCauses[r.cause || 'unclassified'] = (s.bugCauses[r.cause || 'unclassified'] || 0) + 1
  s.knownByCause = {}
  for (const r of knownDiff) s.knownByCause[r.tag] = (s.knownByCause[r.tag] || 0) + 1
  const inScope = s.baseline.pass - outOfScope.length
  s.inScope = inScope
  s.inScopePass = both
  s.inScopePct = pct(both, inScope)
  // the same without the documented differences: what fixing every bug would reach
  s.inScopePctAfterBugs = pct(inScope - knownDiff.length, inScope)
  const client = rows.filter((r) => r.kind === 'client')
  s.client = {
    files: client.length,
    baselinePass: client.filter((r) => r.baseline === 'pass').length,
    preloadPass: client.filter((r) => r.preload === 'pass').length,
    preloadOnlyFailures: client.filter((r) => r.baseline === 'pass' && r.preload !== 'pass').map((r) => r.file)
  }
  // entries of the list whose test passes with the preload now: to prune (an entry whose
  // baseline failed this time, a flaky test, is just not measured)
  s.stale = Object.keys(known).filter((f) => !f.startsWith('$') && rows.some((r) => r.file === f && r.baseline === 'pass' && r.preload === 'pass'))
  s.notMeasured = Object.keys(known).filter((f) => !f.startsWith('$') && rows.some((r) => r.file === f && r.baseline !== 'pass'))
  return s
}

function sortedEntries (obj) {
  return Object.entries(obj).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
}

/** The summary as text (markdown tables, readable in a terminal). */
function formatNodeSummary (s, meta) {
  const out = []
  out.push(`node's test/parallel/test-http-*.js (tree ${meta.treeVersion}, run on node ${process.version}; timeout ${meta.timeoutS} s)`)
  out.push('')
  out.push('| | pass | fail | timeout | skip |')
  out.push('| --- | ---: | ---: | ---: | ---: |')
  out.push(`| node's stack (baseline) | ${s.baseline.pass} | ${s.baseline.fail} | ${s.baseline.timeout} | ${s.baseline.skip} |`)
  out.push(`| with the preload | ${s.preload.pass} | ${s.preload.fail} | ${s.preload.timeout} | ${s.preload.skip} |`)
  out.push('')
  out.push(`files: ${s.files} (${s.statusSkip} skipped by parallel.status)`)
  out.push(`baseline passes that fail with the preload: ${s.preloadOnlyFailures}` +
    ` = ${s.outOfScope} out of scope + ${s.knownDifferences} known differences + ${s.bugs} bugs`)
  out.push(`in scope (baseline passes less out of scope): ${s.inScope}; passing with the preload: ${s.inScopePass} = ${s.inScopePct}` +
    ` (target 95%; with every bug fixed: ${s.inScopePctAfterBugs})`)
  if (s.preloadOnlyPasses.length > 0) out.push(`pass only with the preload: ${s.preloadOnlyPasses.join(', ')}`)
  out.push(`client tests (test-http-client-*, test-http-agent-*): ${s.client.files} files, baseline ${s.client.baselinePass} pass, preload ${s.client.preloadPass} pass` +
    (s.client.preloadOnlyFailures.length ? ` (preload-only failures: ${s.client.preloadOnlyFailures.join(', ')})` : ''))
  out.push('')
  out.push('| preload-only failures by tag | count |')
  out.push('| --- | ---: |')
  for (const [t, n] of sortedEntries(s.byTag)) out.push(`| ${t} | ${n} |`)
  out.push('')
  out.push('| bugs by cause | count |')
  out.push('| --- | ---: |')
  for (const [c, n] of sortedEntries(s.bugCauses)) out.push(`| ${c} | ${n} |`)
  if (s.notMeasured.length > 0) {
    out.push('')
    out.push(`listed in node-known.json but failing on node's stack this run (flaky; not counted): ${s.notMeasured.join(', ')}`)
  }
  if (s.stale.length > 0) {
    out.push('')
    out.push(`node-known.json entries whose test no longer fails with the preload (prune them): ${s.stale.join(', ')}`)
  }
  return out.join('\n')
}

module.exports = { classify, writeTsv, readRows, readBaseline, summarize, formatNodeSummary, pct }
