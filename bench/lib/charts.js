'use strict'

// The matrix's charts as vega-lite specs, rendered to SVG by vega in node (its SVG
// renderer needs no canvas; text widths are estimated, which is fine for labels).
// vega and vega-lite are ES modules only, hence the dynamic import().

// by target name, so a run of some targets colours each as the full matrix does
const TARGET_COLORS = {
  node: '#4c78a8',
  cluster: '#72b7b2',
  nginx: '#54a24b',
  'httpsys-1': '#f58518',
  'httpsys-N': '#e45756',
  unit: '#eeca3b',
  ceiling: '#bab0ac'
}

/** One row per scenario and target that ran, for the specs below. */
function chartRows (result) {
  const rows = []
  for (const s of result.scenarios) {
    // the memory scenario has no load figures: its table is the report's
    if (s.skipped || s.kind === 'memory') continue
    for (const t of result.targetList) {
      const f = s.targets[t.name]
      if (!f) continue
      const vsNode = s.ratios[`${t.name}/node`]
      rows.push({
        scenario: s.title,
        target: t.label,
        rps: f.rps,
        cpu: f.cpuUsPerRequest,
        p50: f.p50,
        p99: f.p99,
        rss: f.rssMB,
        rpsRel: t.name === 'node' ? 1 : vsNode && vsNode.rps,
        cpuRel: t.name === 'node' ? 1 : vsNode && vsNode.cpu
      })
    }
  }
  return rows
}

function scales (result) {
  return {
    scenarios: result.scenarios.filter((s) => !s.skipped && s.kind !== 'memory').map((s) => s.title),
    targets: result.targetList.map((t) => t.label),
    colors: result.targetList.map((t) => TARGET_COLORS[t.name] || '#888')
  }
}

function subtitle (result) {
  return `${result.date.slice(0, 10)}, ${result.machine.description}, ${result.tool}, ${result.options.connections} connections`
}

/** Grouped bars on one scale: each scenario's targets relative to bare node (= 1). */
function relativeSpec (result, field, title) {
  const { scenarios, targets, colors } = scales(result)
  return {
    // the step is one bar's width: xOffset splits each scenario's band into its targets
    width: { step: 14 },
    height: 220,
    title,
    data: { values: chartRows(result).filter((r) => typeof r[field] === 'number') },
    layer: [
      {
        mark: 'bar',
        encoding: {
          x: { field: 'scenario', type: 'nominal', sort: scenarios, title: null, axis: { labelAngle: -30 } },
          xOffset: { field: 'target', type: 'nominal', sort: targets },
          y: { field, type: 'quantitative', title: 'x bare node' },
          color: { field: 'target', type: 'nominal', sort: targets, scale: { domain: targets, range: colors }, title: null, legend: { orient: 'top' } },
          tooltip: [{ field: 'scenario' }, { field: 'target' }, { field, format: '.2f' }]
        }
      },
      { mark: { type: 'rule', strokeDash: [4, 3], color: '#333' }, encoding: { y: { datum: 1 } } }
    ]
  }
}

/** Small multiples, one panel per scenario with its own y scale (1 MB and hello differ 100x). */
function facetSpec (result, field, yTitle, title) {
  const { scenarios, targets, colors } = scales(result)
  return {
    title: { text: title, subtitle: subtitle(result) },
    data: { values: chartRows(result).filter((r) => typeof r[field] === 'number') },
    facet: { field: 'scenario', type: 'nominal', sort: scenarios, title: null },
    columns: 5,
    spec: {
      width: 130,
      height: 120,
      mark: 'bar',
      encoding: {
        x: { field: 'target', type: 'nominal', sort: targets, axis: null },
        y: { field, type: 'quantitative', title: yTitle },
        color: { field: 'target', type: 'nominal', sort: targets, scale: { domain: targets, range: colors }, title: null, legend: { orient: 'top' } }
      }
    },
    resolve: { scale: { y: 'independent' } }
  }
}

/** p50 and p99 side by side for each target, a panel per scenario. */
function latencySpec (result) {
  const { scenarios, targets } = scales(result)
  const values = []
  for (const r of chartRows(result)) {
    for (const p of ['p50', 'p99']) {
      if (typeof r[p] === 'number') values.push({ scenario: r.scenario, target: r.target, percentile: p, ms: r[p] })
    }
  }
  return {
    title: { text: 'Latency percentiles (ms, lower is better)', subtitle: subtitle(result) },
    data: { values },
    facet: { field: 'scenario', type: 'nominal', sort: scenarios, title: null },
    columns: 5,
    spec: {
      width: 150,
      height: 120,
      mark: 'bar',
      encoding: {
        x: { field: 'target', type: 'nominal', sort: targets, title: null, axis: { labelAngle: -40, labelFontSize: 8 } },
        xOffset: { field: 'percentile', type: 'nominal', sort: ['p50', 'p99'] },
        y: { field: 'ms', type: 'quantitative', title: 'ms' },
        color: { field: 'percentile', type: 'nominal', sort: ['p50', 'p99'], scale: { range: ['#9ecae9', '#4c78a8'] }, title: null, legend: { orient: 'top' } }
      }
    },
    resolve: { scale: { y: 'independent' } }
  }
}

/** Every chart the matrix writes: file name to vega-lite spec. */
function chartSpecs (result) {
  return {
    'overview.svg': {
      title: { text: 'httpsys and its peers, relative to bare node', subtitle: subtitle(result), fontSize: 15 },
      vconcat: [
        relativeSpec(result, 'rpsRel', 'Requests/s (higher is better)'),
        relativeSpec(result, 'cpuRel', 'CPU time per request, whole process tree (lower is better)')
      ]
    },
    'rps.svg': facetSpec(result, 'rps', 'req/s', 'Requests per second (higher is better)'),
    'cpu.svg': facetSpec(result, 'cpu', 'us CPU/req', 'CPU time per request, whole process tree (microseconds, lower is better)'),
    'latency.svg': latencySpec(result),
    'memory.svg': facetSpec(result, 'rss', 'MB', 'Peak resident memory of the whole process tree (MB)')
  }
}

/** A vega-lite spec as an SVG string. */
async function renderSvg (spec) {
  const vega = await import('vega')
  const vl = await import('vega-lite')
  const compiled = vl.compile({ $schema: 'https://vega.github.io/schema/vega-lite/v6.json', background: 'white', ...spec }).spec
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' })
  try {
    return await view.toSVG()
  } finally {
    view.finalize()
  }
}

module.exports = { chartRows, chartSpecs, renderSvg }
