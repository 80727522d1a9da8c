'use strict'

// Issue 25's targets table for httpsys's router, the CPU split by role behind it, and
// the memory scenario's medians: a wrong role or a wrong pair would report the router's
// cost as the workers' or a target met that was not measured.

const { parseStat, roleTotals } = require('../../../bench/lib/procstat')
const { evaluateRouterTargets, memorySummary, roleSplit } = require('../../../bench/lib/router-targets')
const { summarise } = require('../../../bench/lib/stats')
const { unitRole, unitConfig } = require('../../../bench/lib/unit')
const { renderMarkdown } = require('../../../bench/lib/report')

function stat (pid, ppid, comm, ticks, rss) {
  const f = new Array(50).fill('0')
  f[0] = 'S'
  f[1] = String(ppid)
  f[11] = String(ticks)
  f[21] = String(rss)
  return parseStat(`${pid} (${comm}) ${f.join(' ')}`)
}

test('roleTotals: each process of the tree counted once under the role classify gives it, none outside the tree', () => {
  const procs = new Map([
    [10, stat(10, 1, 'node', 5, 100)], // supervisor
    [11, stat(11, 10, 'httpsys-router', 40, 20)],
    [12, stat(12, 10, 'node', 30, 200)],
    [13, stat(13, 10, 'node', 20, 200)],
    [99, stat(99, 1, 'httpsys-router', 1000, 1000)] // another supervisor's router
  ])
  const classify = (pid, p) => (pid === 10 ? 'supervisor' : p.ppid === 10 && p.comm === 'httpsys-router' ? 'router' : 'workers')
  expect(roleTotals(procs, [10], classify)).toEqual({
    supervisor: { ticks: 5, rssPages: 100, processes: 1 },
    router: { ticks: 40, rssPages: 20, processes: 1 },
    workers: { ticks: 50, rssPages: 400, processes: 2 }
  })
})

test('unitRole: Unit\'s router and its main and controller by title; the node processes it execs are the workers', () => {
  expect(unitRole('unit: router')).toBe('router')
  expect(unitRole('unit: main v1.35.0 [/x/unitd --no-daemon]')).toBe('supervisor')
  expect(unitRole('unit: controller')).toBe('supervisor')
  expect(unitRole('unit: "app" prototype')).toBe('workers')
  expect(unitRole('/usr/bin/node --require unit-http/loader /b/hello.js')).toBe('workers')
})

test('unitConfig: one listener on the port passing to the app, run by node with unit-http\'s loader', () => {
  const c = unitConfig({ port: 8123, app: '/b/apps/hello.js', env: { A: '1' }, processes: 1, nodeModules: '/u/node/node_modules' })
  expect(c.listeners).toEqual({ '127.0.0.1:8123': { pass: 'applications/app' } })
  expect(c.applications.app).toMatchObject({
    type: 'external',
    working_directory: '/b/apps',
    arguments: ['--require', 'unit-http/loader', '/b/apps/hello.js'],
    processes: 1,
    environment: { A: '1', NODE_PATH: '/u/node/node_modules' }
  })
})

test('summarise: the median CPU per request of each role over the rounds', () => {
  const m = (router, workers) => ({ rps: 1, cpuUsPerRequest: router + workers, roles: { router: { cpuUsPerRequest: router, rssMB: 9 }, workers: { cpuUsPerRequest: workers, rssMB: 50 } } })
  const s = summarise([m(4, 6), m(5, 7), m(40, 8)])
  expect(s.roles.router.cpuUsPerRequest).toBe(5)
  expect(s.roles.workers.cpuUsPerRequest).toBe(7)
  expect(roleSplit(s)).toBe('router 5.0 + workers 7.0 us')
})

test('memorySummary: medians of idle, loaded and of each round\'s growth, by role', () => {
  const r = (idle, loaded) => ({ 'httpsys-1': { idle: { router: idle, workers: 50 }, loaded: { router: loaded, workers: 52 } } })
  const s = memorySummary([r(9, 60), r(10, 200), r(11, 70)])
  expect(s['httpsys-1'].idle.router).toBe(10)
  expect(s['httpsys-1'].loaded.router).toBe(70)
  expect(s['httpsys-1'].growth.router).toBe(59) // 51, 190, 59
})

function scenarios ({ hello = { rps: 1.4, cpu: 0.5 }, closeUnit = { rps: 1.1, cpu: 0.9 }, routerClose = 40, memory = { idle: 9, loaded: 60 }, cached = { rps: 2, cpu: 0.5 }, ceiling = { rps: 2.5, cpu: 0.4 } } = {}) {
  const f = (router) => ({ rps: 1, cpuUsPerRequest: 10, roles: { router: { cpuUsPerRequest: router }, workers: { cpuUsPerRequest: 6 } } })
  return [
    { name: 'hello', targets: { node: f(0), 'httpsys-1': f(4), 'httpsys-N': f(4), cluster: f(0) }, ratios: { 'httpsys-1/node': hello, 'httpsys-N/cluster': { rps: 1.25, cpu: 0.75 } }, skippedTargets: {} },
    { name: 'close', targets: { node: f(0), 'httpsys-1': f(routerClose), 'httpsys-N': f(routerClose), unit: f(45) }, ratios: { 'httpsys-1/node': { rps: 1.3, cpu: 0.5 }, 'httpsys-1/unit': closeUnit }, skippedTargets: { nginx: 'skipped: nginx not installed' } },
    { name: 'cached', targets: { node: f(0), 'httpsys-1': f(3), ceiling: { rps: 1, cpuUsPerRequest: 8 } }, ratios: { 'httpsys-1/node': cached, 'ceiling/node': ceiling }, skippedTargets: {} },
    { name: 'https', skipped: 'skipped: wrk missing' },
    { name: 'memory', kind: 'memory', memory: { 'httpsys-1': { idle: { router: memory.idle }, loaded: { router: memory.loaded }, growth: { router: memory.loaded - memory.idle } } }, skippedTargets: {} }
  ]
}

test('evaluateRouterTargets: both halves of a target needed; the bounds themselves meet it', () => {
  const rows = evaluateRouterTargets(scenarios(), 2)
  const of = (re) => rows.find((r) => re.test(r.target))
  expect(of(/1 instance/).status).toBe('met')
  expect(evaluateRouterTargets(scenarios({ hello: { rps: 1.3, cpu: 0.6 } }), 2).find((r) => /1 instance/.test(r.target)).status).toBe('met')
  expect(evaluateRouterTargets(scenarios({ hello: { rps: 2, cpu: 0.61 } }), 2).find((r) => /1 instance/.test(r.target)).status).toBe('missed')
  expect(of(/2 instances/).status).toBe('missed') // 0.75x CPU against <= 0.7x
  expect(of(/^Connection: close/).status).toBe('met')
  expect(of(/^Connection: close/).measured).toBe("1.30x bare node, 1.10x Unit, router 40.0 us per connection (Unit's router 45.0 us)")
  expect(evaluateRouterTargets(scenarios({ routerClose: 50.5 }), 2).find((r) => /^Connection: close/.test(r.target)).status).toBe('missed')
  expect(of(/^cached hello/)).toMatchObject({ status: 'met', measured: 'router 3.0 us per hit, ceiling 8.0 us' })
  expect(of(/router memory/).status).toBe('met')
  expect(evaluateRouterTargets(scenarios({ memory: { idle: 9, loaded: 110 } }), 2).find((r) => /^router memory/.test(r.target)).status).toBe('missed')
})

test('evaluateRouterTargets: what was skipped or not run is "not measured", with the reason', () => {
  const rows = evaluateRouterTargets(scenarios(), 2)
  const of = (re) => rows.find((r) => re.test(r.target))
  expect(of(/issue 13/)).toMatchObject({ status: 'not measured', measured: 'not measured: skipped: nginx not installed' })
  expect(of(/HTTPS keep-alive/)).toMatchObject({ status: 'not measured', measured: 'not measured: skipped: wrk missing' })
  expect(of(/10 KB/)).toMatchObject({ status: 'not measured', measured: 'not measured: scenario not run' })
  // without Unit's column a close run that meets the rest cannot be called met
  const noUnit = scenarios({ closeUnit: {} })
  noUnit[1].skippedTargets = { unit: 'skipped: NGINX Unit is not built' }
  expect(evaluateRouterTargets(noUnit, 2).find((r) => /^Connection: close/.test(r.target)).status).toBe('not measured (no Unit column)')
  expect(evaluateRouterTargets([], 2).every((r) => r.status === 'not measured')).toBe(true)
})

test('evaluateRouterTargets: issue 11\'s cached 3x is "not measurable here" only when the machine\'s ceiling is under 3x too', () => {
  const of = (cached, ceiling) => evaluateRouterTargets(scenarios({ cached: { rps: cached, cpu: 0.3 }, ceiling: { rps: ceiling, cpu: 0.2 } }), 2).find((r) => /issue 11/.test(r.target))
  expect(of(1.4, 1.6)).toMatchObject({ status: 'not measurable here (the ceiling is under 3x)', measured: '1.40x req/s at 0.30x CPU (10 KB: n/a); this machine\'s ceiling: 1.60x' })
  expect(of(1.4, 3.5).status).toBe('missed')
  expect(of(3, 2.9).status).toBe('met')
})

test('renderMarkdown: the targets table and the memory table when the run has them', () => {
  const result = {
    date: '2026-01-02T03:04:05.000Z',
    machine: { description: '2 cores' },
    tool: 'wrk',
    command: 'npm run bench -- --matrix',
    options: { duration: 3, rounds: 3, warmup: 1, connections: 50, instances: 2 },
    targetList: [{ name: 'httpsys-1', label: 'httpsys x1' }],
    notes: [],
    scenarios: scenarios().filter((s) => s.name === 'memory'),
    routerTargets: [{ target: 't1', measured: 'm1', status: 'met' }]
  }
  const md = renderMarkdown(result)
  expect(md).toContain('| target | measured | status |\n| --- | --- | --- |\n| t1 | m1 | met |')
  expect(md).toContain('| httpsys x1 | router | 9.0 | 60.0 | +51.0 |  |')
})
