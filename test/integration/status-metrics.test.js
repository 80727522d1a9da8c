'use strict'

// The metrics endpoint during a load run, scraped and parsed by a Prometheus text-format
// parser: every request the clients sent is counted once, by status class, in the
// histogram and in its count; the readiness endpoint follows the apps (503 once one is
// stopped, 404 for an app this supervisor lacks); `ls --json` carries CPU, memory,
// requests/s, p99 and queue depth while the load runs.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const parsePrometheus = require('parse-prometheus-text-format')
const { start, cli, loadLoop, freePort, request, waitUntil, APPS } = require('../fixtures/apps/harness')

let dir
let run
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-metrics-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  run = null
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })

async function scrape (port) {
  const res = await request(port, { path: '/metrics' })
  expect(res.status).toBe(200)
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
  const families = Object.fromEntries(parsePrometheus(res.body).map((f) => [f.name, f]))
  // the parser reads only unlabelled histograms: give it each series alone
  const hist = families.httpsys_request_duration_seconds
  const head = res.body.split('\n').filter((l) => /^# (HELP|TYPE) httpsys_request_duration_seconds /.test(l))
  const series = new Map()
  for (const line of res.body.split('\n')) {
    const m = /^httpsys_request_duration_seconds_(?:bucket|sum|count)\{app="([^"]+)",inst="([^"]+)"/.exec(line)
    if (!m) continue
    const key = `${m[1]}#${m[2]}`
    if (!series.has(key)) series.set(key, [...head])
    // and without the labels that tell the series apart (it keeps only le)
    series.get(key).push(line.replace(/\{app="[^"]+",inst="[^"]+",?/, '{').replace('{}', ''))
  }
  hist.metrics = [...series].map(([key, lines]) => {
    const [app, inst] = key.split('#')
    const [one] = parsePrometheus(lines.join('\n') + '\n')
    expect(one.type).toBe('HISTOGRAM')
    return { labels: { app, inst }, ...one.metrics[0] }
  })
  return families
}

const bound = (le) => le === '+Inf' ? Infinity : Number(le)

function sumOf (family, match = {}) {
  return family.metrics
    .filter((m) => Object.entries(match).every(([k, v]) => (m.labels || {})[k] === v))
    .reduce((n, m) => n + Number(m.value !== undefined ? m.value : m.count), 0)
}

test('a load run is counted exactly, by class and in the histogram; /healthz follows the apps', async () => {
  const port = await freePort()
  const metricsPort = await freePort()
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = {
    metrics: { listen: '127.0.0.1:${metricsPort}' },
    apps: [
      { name: 'api', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/api/'], instances: 2 },
      { name: 'web', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/'] }
    ] }\n`)
  run = start([], { env: env(), cwd: dir })
  await run.waitFor((r) => r.event === 'all-ready', { timeout: 20000 })
  expect(run.records.find((r) => r.event === 'metrics').endpoint).toBe(`http://127.0.0.1:${metricsPort}`)

  // scrape while the load runs: every scrape parses, and the count never goes back
  const loadState = { done: false }
  let scrapes = 0
  let last = 0
  const scraper = (async () => {
    while (!loadState.done) {
      const m = await scrape(metricsPort)
      const n = sumOf(m.httpsys_request_duration_seconds, { app: 'api' })
      expect(n).toBeGreaterThanOrEqual(last)
      last = n
      scrapes++
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  })()
  let lsDuring = null
  const load = loadLoop(port, { path: '/api/x?delay=15', concurrency: 6, max: 400 })
  await waitUntil(() => last > 50, 20000)
  lsDuring = JSON.parse((await cli(['ls', '--json'], { env: env(), cwd: dir })).stdout)
  const result = await load
  loadState.done = true
  await scraper
  expect(result.failed).toEqual([])
  expect(scrapes).toBeGreaterThan(2)

  const m = await scrape(metricsPort)
  // every request once, all 2xx, on both instances
  expect(sumOf(m.httpsys_requests_total, { app: 'api', class: '2xx' })).toBe(result.sent)
  expect(sumOf(m.httpsys_requests_total, { app: 'api' })).toBe(result.sent)
  expect(new Set(m.httpsys_requests_total.metrics.filter((x) => x.labels.app === 'api' && Number(x.value) > 0).map((x) => x.labels.inst))).toEqual(new Set(['0', '1']))
  // the histogram: count = requests, buckets cumulative, nothing under the app's 15 ms delay
  const hist = m.httpsys_request_duration_seconds
  expect(hist.type).toBe('HISTOGRAM')
  let count = 0
  let sum = 0
  for (const series of hist.metrics.filter((x) => x.labels.app === 'api')) {
    count += Number(series.count)
    sum += Number(series.sum)
    // (integer-like keys such as "5" come first in an object: order by the bound)
    const les = Object.keys(series.buckets).sort((a, b) => bound(a) - bound(b))
    const values = les.map((le) => Number(series.buckets[le]))
    for (let i = 1; i < values.length; i++) expect(values[i]).toBeGreaterThanOrEqual(values[i - 1])
    expect(Number(series.buckets['0.01'])).toBe(0)
    expect(values[values.length - 1]).toBe(Number(series.count))
  }
  expect(count).toBe(result.sent)
  expect(sum / count).toBeGreaterThanOrEqual(0.015)
  expect(sumOf(m.httpsys_requests_in_flight, { app: 'api' })).toBe(0)
  expect(sumOf(m.httpsys_queue_waiting, { app: 'api' })).toBe(0)
  // the app's responses are not cacheable: every GET passed the output cache by
  expect(sumOf(m.httpsys_cache_requests_total, { app: 'api', result: 'miss' })).toBe(result.sent)
  expect(sumOf(m.httpsys_cache_requests_total, { app: 'api', result: 'hit' })).toBe(0)
  expect(sumOf(m.httpsys_cache_entries, { app: 'api' })).toBe(0)
  expect(sumOf(m.httpsys_app_ready, { app: 'web' })).toBe(1)
  expect(sumOf(m.httpsys_instance_resident_memory_bytes, { app: 'api', inst: '0' })).toBeGreaterThan(10 * 1024 * 1024)
  expect(sumOf(m.httpsys_instance_cpu_seconds_total, { app: 'api', inst: '0' })).toBeGreaterThan(0)
  expect(m.httpsys_supervisor_process_cpu_user_seconds_total).toBeDefined()

  // ls during the load: the numbers a person reads
  const api = lsDuring[0].apps.find((a) => a.name === 'api')
  expect(api.waiting).toBe(0)
  expect(api.reqPerSec).toBeGreaterThan(0)
  expect(api.p99Ms).toBeGreaterThanOrEqual(15)
  for (const i of api.instances) {
    expect(i.cpu).toBeGreaterThanOrEqual(0)
    expect(i.memory).toBeGreaterThan(0)
    expect(typeof i.inFlight).toBe('number')
  }

  // readiness: all, one app, an unknown app; then one app stopped by command
  expect((await request(metricsPort, { path: '/healthz' })).status).toBe(200)
  expect(JSON.parse((await request(metricsPort, { path: '/healthz/api' })).body)).toMatchObject({ status: 'ready', apps: [{ name: 'api', ready: 2, instances: 2 }] })
  expect((await request(metricsPort, { path: '/healthz/nope' })).status).toBe(404)
  expect((await request(metricsPort, { path: '/other' })).status).toBe(404)
  expect((await request(metricsPort, { method: 'POST', path: '/metrics' })).status).toBe(405)
  expect((await cli(['stop', 'web'], { env: env(), cwd: dir })).code).toBe(0)
  expect((await request(metricsPort, { path: '/healthz/web' })).status).toBe(503)
  expect((await request(metricsPort, { path: '/healthz' })).status).toBe(503)
  expect((await request(metricsPort, { path: '/healthz/api' })).status).toBe(200)
  expect(sumOf((await scrape(metricsPort)).httpsys_app_ready, { app: 'web' })).toBe(0)
}, 60000)

test('a metrics port that is taken stops the start with the fix, before any app runs', async () => {
  const net = require('node:net')
  const holder = net.createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => holder.once('listening', resolve))
  const taken = holder.address().port
  try {
    const port = await freePort()
    const r = await cli(['start', path.join(APPS, 'pid-server.js'), '-u', `http://127.0.0.1:${port}/`, '--metrics', `127.0.0.1:${taken}`], { env: env(), cwd: dir })
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(new RegExp(`Cannot serve metrics on 127\\.0\\.0\\.1:${taken}: the port is in use\\. Choose another metrics\\.listen \\(or --metrics\\)`))
    expect(r.stderr).toMatch(/\(ERR_HTTPSYS_METRICS_LISTEN\)/)
    expect(r.stdout).not.toMatch(/started pid/)
  } finally {
    holder.close()
  }
})

test('a bad --metrics address names the flag and the fix', async () => {
  const port = await freePort()
  const r = await cli(['start', path.join(APPS, 'pid-server.js'), '-u', `http://127.0.0.1:${port}/`, '--metrics', 'localhost:99999'], { env: env(), cwd: dir })
  expect(r.code).toBe(1)
  expect(r.stderr).toMatch(/Invalid --metrics: must be "host:port", ":port" or a port number from 1 to 65535, got "localhost:99999"/)
})
