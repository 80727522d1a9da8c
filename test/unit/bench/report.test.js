'use strict'

const { scenarioSummary, markdownTable, num, renderMarkdown, fromHubEra } = require('../../../bench/lib/report')
const { chartRows } = require('../../../bench/lib/charts')

const m = (rps, cpuUsPerRequest, extra = {}) => ({ rps, cpuUsPerRequest, p50: 1, p99: 2, rssMB: 50, errors: 0, ...extra })

test('markdownTable: header, alignment rule, rows, and | in a cell escaped', () => {
  expect(markdownTable(['a', 'b'], [['1', 'x|y'], ['2', '']], ['l', 'r'])).toBe(
    '| a | b |\n| --- | ---: |\n| 1 | x\\|y |\n| 2 |  |'
  )
})

test('num: fixed decimals, whole numbers from 1000, n/a for missing', () => {
  expect(num(12.345, 2)).toBe('12.35')
  expect(num(1016.6, 1)).toBe('1017')
  expect(num(null)).toBe('n/a')
  expect(num(NaN)).toBe('n/a')
})

test('scenarioSummary: medians per target, paired ratios per pair present', () => {
  const rounds = [
    { node: m(100, 20), cluster: m(150, 22), 'httpsys-1': m(120, 18), 'httpsys-N': m(140, 30) },
    { node: m(50, 40), cluster: m(75, 44), 'httpsys-1': m(60, 36), 'httpsys-N': m(70, 60) }
  ]
  const s = scenarioSummary(rounds, ['node', 'cluster', 'nginx', 'httpsys-1', 'httpsys-N'])
  expect(Object.keys(s.targets)).toEqual(['node', 'cluster', 'httpsys-1', 'httpsys-N'])
  expect(s.targets.node.rps).toBe(75)
  expect(s.ratios['httpsys-1/node'].rps).toBeCloseTo(1.2)
  expect(s.ratios['httpsys-1/node'].cpu).toBeCloseTo(0.9)
  expect(s.ratios['httpsys-N/cluster'].rps).toBeCloseTo(140 / 150)
  expect(s.ratios['httpsys-N/nginx']).toBeUndefined()
})

function result () {
  const rounds = [{ node: m(1000, 20), 'httpsys-1': m(1100, 18, { errors: 3 }) }]
  return {
    date: '2026-01-02T03:04:05.000Z',
    machine: { description: '2 cores (test CPU)' },
    tool: 'wrk',
    command: 'npm run bench -- --matrix',
    options: { duration: 3, rounds: 1, warmup: 1, connections: 50, instances: 2 },
    targetList: [{ name: 'node', label: 'bare node' }, { name: 'nginx', label: 'nginx + node x2' }, { name: 'httpsys-1', label: 'httpsys x1' }],
    notes: ['a note'],
    scenarios: [
      { name: 'hello', title: 'keep-alive hello', ...scenarioSummary(rounds, ['node', 'nginx', 'httpsys-1']), skippedTargets: { nginx: 'skipped: nginx not installed' } },
      { name: 'cached', title: 'cached response', skipped: 'skipped: no cache yet' }
    ],
    routerTargets: [{ target: 'keep-alive, 1 instance', measured: '1.10x', status: 'met' }]
  }
}

test('renderMarkdown: targets, one row per target with its ratio to node, skips and notes said', () => {
  const md = renderMarkdown(result())
  expect(md).toContain('| keep-alive, 1 instance | 1.10x | met |')
  expect(md).toContain('| keep-alive hello | bare node | 1000 | 1.00x | 1.00 | 2.00 | 20.0 | 1.00x | 50 |  |')
  expect(md).toContain('|  | nginx + node x2 | - | - | - | - | - | - | - | skipped: nginx not installed |')
  expect(md).toContain('|  | httpsys x1 | 1100 | 1.10x | 1.00 | 2.00 | 18.0 | 0.90x | 50 | 3 |')
  expect(md).toContain('| cached response | - | - | - | - | - | - | - | - | skipped: no cache yet |')
  expect(md).toContain('- a note')
  expect(md).toContain('`npm run bench -- --matrix`')
})

test('fromHubEra: a run from while the JS hub was the default shows the router as httpsys-1/-N and no hub figure', () => {
  const rounds = [{ node: m(1000, 20), 'httpsys-1': m(900, 30), 'native-1': m(1200, 15), 'native-N': m(1300, 16) }]
  const old = {
    ...result(),
    targetList: [{ name: 'node', label: 'bare node' }, { name: 'httpsys-1', label: 'httpsys x1' }, { name: 'native-1', label: 'httpsys native x1' }, { name: 'native-N', label: 'httpsys native x2' }],
    scenarios: [{
      name: 'hello',
      title: 'keep-alive hello',
      targets: { node: m(1000, 20), 'httpsys-1': m(900, 30), 'native-1': m(1200, 15), 'native-N': m(1300, 16) },
      // as the matrix paired them then
      ratios: { 'httpsys-1/node': { rps: 0.9 }, 'native-1/node': { rps: 1.2 }, 'native-N/node': { rps: 1.3 }, 'native-1/httpsys-1': { rps: 1.33 } },
      skippedTargets: { 'httpsys-N': 'skipped: x' },
      rounds
    }],
    targets: [{ target: 'the hub\'s', measured: '0.90x', status: 'missed' }]
  }
  const now = fromHubEra(old)
  expect(now.targetList).toEqual([{ name: 'node', label: 'bare node' }, { name: 'httpsys-1', label: 'httpsys x1' }, { name: 'httpsys-N', label: 'httpsys x2' }])
  expect(now.scenarios[0].targets['httpsys-1'].rps).toBe(1200)
  expect(Object.keys(now.scenarios[0].ratios).sort()).toEqual(['httpsys-1/node', 'httpsys-N/node'])
  expect(now.scenarios[0].ratios['httpsys-1/node'].rps).toBe(1.2)
  expect(now.scenarios[0].skippedTargets).toEqual({})
  expect(now.scenarios[0].rounds).toEqual([{ node: m(1000, 20), 'httpsys-1': m(1200, 15), 'httpsys-N': m(1300, 16) }])
  expect(now.targets).toBeUndefined()
  expect(now.notes[now.notes.length - 1]).toMatch(/JS hub/)
  // a run of today is left as it is
  expect(fromHubEra(result())).toEqual(result())
})

test('chartRows: one row per scenario and target that ran, bare node at 1', () => {
  const rows = chartRows(result())
  expect(rows).toHaveLength(2)
  expect(rows[0]).toMatchObject({ scenario: 'keep-alive hello', target: 'bare node', rps: 1000, rpsRel: 1, cpuRel: 1 })
  expect(rows[1].rpsRel).toBeCloseTo(1.1)
  expect(rows[1].cpuRel).toBeCloseTo(0.9)
})

test('chartSpecs: the five charts, each target in its own colour whichever targets ran', () => {
  const { chartSpecs } = require('../../../bench/lib/charts')
  const specs = chartSpecs(result())
  expect(Object.keys(specs).sort()).toEqual(['cpu.svg', 'latency.svg', 'memory.svg', 'overview.svg', 'rps.svg'])
  const color = specs['rps.svg'].spec.encoding.color.scale
  expect(color.domain).toEqual(['bare node', 'nginx + node x2', 'httpsys x1'])
  expect(color.range).toEqual(['#4c78a8', '#54a24b', '#f58518'])
})
