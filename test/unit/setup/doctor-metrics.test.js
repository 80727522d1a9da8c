'use strict'

// `httpsys doctor` checks the metrics port (metrics.listen, --metrics) that `httpsys
// start` would otherwise fail on with ERR_HTTPSYS_METRICS_LISTEN (issue 28), on the hub
// and on HTTP.SYS alike: the endpoint is the supervisor's own node server.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { doctor } = require('../../../src/setup/doctor')
const { validate } = require('../../../src/config')

let dir
let holder = null
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-doctor-metrics-'))
  fs.writeFileSync(path.join(dir, 'app.js'), '')
})
afterEach(async () => {
  if (holder) await new Promise((resolve) => holder.close(resolve))
  holder = null
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const hub = (extra = {}) => ({ runtimeDir: () => path.join(dir, 'run'), portOwner: () => 'pid 42 (prometheus)', running: async () => null, ...extra })
const config = (listen, urls = []) => validate({ metrics: { listen }, apps: [{ script: 'app.js', urls }] }, { baseDir: dir })
const metrics = (report) => report.findings.filter((f) => f.area === 'metrics')

async function held () {
  holder = net.createServer()
  await new Promise((resolve) => holder.listen(0, '127.0.0.1', resolve))
  return holder.address().port
}

test('a metrics port someone holds is an error naming the owner and the start error it prevents', async () => {
  const port = await held()
  const report = await doctor({ config: config(`127.0.0.1:${port}`), platform: 'linux', hub: hub() })
  expect(metrics(report)).toEqual([{
    level: 'error',
    area: 'metrics',
    message: `the metrics endpoint cannot listen on 127.0.0.1:${port}: the port is in use by pid 42 (prometheus) (\`httpsys start\` would fail with ERR_HTTPSYS_METRICS_LISTEN)`,
    fix: 'choose another metrics.listen (or --metrics), e.g. 127.0.0.1:9464, or stop what holds the port'
  }])
  expect(report.ok).toBe(false)
})

test('a free one is ok; one this config\'s running supervisor serves is ok; no metrics, no finding', async () => {
  const port = await held()
  await new Promise((resolve) => holder.close(resolve))
  holder = null
  expect(metrics(await doctor({ config: config(`127.0.0.1:${port}`), platform: 'linux', hub: hub() }))).toEqual([
    { level: 'ok', area: 'metrics', message: `the metrics endpoint's 127.0.0.1:${port} is free` }
  ])
  const busy = await held()
  const mine = await doctor({ config: config(`127.0.0.1:${busy}`), platform: 'linux', hub: hub({ running: async () => ({ pid: 7 }) }) })
  expect(metrics(mine)).toEqual([{ level: 'ok', area: 'metrics', message: `127.0.0.1:${busy} serves the metrics of this config's running supervisor (pid 7)` }])
  const none = validate({ apps: [{ script: 'app.js' }] }, { baseDir: dir })
  expect(metrics(await doctor({ config: none, platform: 'linux', hub: hub() }))).toEqual([])
})

test('the port of an app\'s URL is an error: the router and the endpoint cannot share it', async () => {
  const report = await doctor({ config: config('127.0.0.1:18555', ['http://+:18555/']), platform: 'linux', hub: hub() })
  expect(metrics(report)).toEqual([expect.objectContaining({ level: 'error', message: 'metrics.listen 127.0.0.1:18555 is the port of app: the router and the metrics endpoint cannot share it' })])
})
