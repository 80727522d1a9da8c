'use strict'

// An app that forks its own cluster workers under `httpsys start`: its workers attach to
// the app's queue, the instance is ready when the first of them does (no wait_ready
// needed), httpsys's readiness message never reaches the app's own 'message'
// listeners, and a stop takes the workers along.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, alive, waitUntil, writeConfig, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-cluster-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('a cluster app is ready without wait_ready, both of its workers serve, and stop ends them', async () => {
  const port = await freePort()
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  const config = writeConfig(dir, {
    apps: [{ name: 'clustered', script: path.join(APPS, 'cluster-app.js'), urls: [`http://127.0.0.1:${port}/`], ready_timeout: '10s' }]
  })
  run = start(['-c', config], { env })
  const ready = await run.waitFor((r) => r.event === 'ready', { timeout: 10000 })
  const primary = ready.pid

  // ready is the first worker's attach; the second attaches when it has started
  const workers = new Set()
  const until = Date.now() + 15000
  while (workers.size < 2 && Date.now() < until) {
    const res = await get(port, '/')
    expect(res.status).toBe(200)
    const body = JSON.parse(res.body)
    expect(body.primary).toBe(primary)
    workers.add(body.pid)
    if (workers.size < 2) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  expect(workers.size).toBe(2)

  const stop = await cli(['stop', 'all', '-c', config], { env })
  expect(stop.code).toBe(0)
  expect(await waitUntil(() => [primary, ...workers].every((pid) => !alive(pid)), 10000)).toBe(true)
  // httpsys's messages went by the app: its cluster 'message' listener heard nothing
  const said = (re) => run.records.filter((r) => typeof r.msg === 'string' && re.test(r.msg))
  expect(said(/primary up/)).toHaveLength(1) // the app's output is in the records
  expect(said(/app message|primary message/)).toEqual([])
}, 30000)
