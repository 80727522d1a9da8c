'use strict'

// Rolling reload under load, driven from a second terminal: real HTTP requests keep
// coming while `httpsys reload all` replaces every process; not one fails, for an app
// of two instances and for an app of one (its requests wait in the queue). `httpsys ls
// --json` from another process shows what runs.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, loadLoop, freePort, get, alive, waitUntil, writeConfig, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-reload-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('reload all under a load loop: 0 failed requests, every process replaced, ls from another process', async () => {
  const port = await freePort()
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  const config = writeConfig(dir, {
    apps: [
      { name: 'api', script: path.join(APPS, 'pid-server.js'), urls: [`http://127.0.0.1:${port}/api/`], instances: 2, kill_timeout: '5s' },
      { name: 'solo', script: path.join(APPS, 'pid-server.js'), urls: [`http://127.0.0.1:${port}/`], kill_timeout: '5s' }
    ]
  })
  run = start(['-c', config], { env })
  const ready = await run.waitFor((r) => r.event === 'ready', { count: 3 })
  const before = ready.map((r) => r.pid)

  const ls = await cli(['ls', '--json', '-c', config], { env })
  expect(ls.code).toBe(0)
  const [listed] = JSON.parse(ls.stdout)
  expect(listed).toMatchObject({ pid: run.child.pid, config })
  expect(listed.apps.map((a) => [a.name, a.state, a.instances.length])).toEqual([['api', 'ready', 2], ['solo', 'ready', 1]])
  expect(listed.apps[0].instances[1]).toMatchObject({ app: 'api', inst: 1, state: 'ready', restarts: 0, inFlight: 0, memory: expect.any(Number) })
  expect(listed.apps.flatMap((a) => a.instances.map((i) => i.pid)).sort()).toEqual(before.slice().sort())

  let reloading = true
  const loads = Promise.all([
    loadLoop(port, { path: '/api/?delay=15', concurrency: 6, until: () => !reloading }),
    loadLoop(port, { path: '/?delay=15', concurrency: 4, until: () => !reloading })
  ])
  await new Promise((resolve) => setTimeout(resolve, 300))
  const reload = await cli(['reload', 'all', '-c', config], { env })
  await new Promise((resolve) => setTimeout(resolve, 300))
  reloading = false
  const [api, solo] = await loads
  if (process.env.HTTPSYS_TEST_REPORT) console.log(`reload under load: api sent ${api.sent} failed ${api.failed.length}; solo sent ${solo.sent} failed ${solo.failed.length}`)

  expect(reload.stderr).toBe('')
  expect(reload.code).toBe(0)
  expect(reload.stdout).toMatch(/^api \[.*httpsys\.config\.js\]: reloaded in \d+ ms \(pid \d+, \d+\)\nsolo \[.*httpsys\.config\.js\]: reloaded in \d+ ms \(pid \d+\)\n$/)
  expect(api.failed).toEqual([])
  expect(solo.failed).toEqual([])
  expect(api.sent).toBeGreaterThan(50)
  expect(solo.sent).toBeGreaterThan(20)
  // requests were answered by the old processes and by the new ones
  const after = run.records.filter((r) => r.event === 'reload:done').flatMap((r) => r.pids)
  expect(after).toHaveLength(3)
  expect(after.some((pid) => before.includes(pid))).toBe(false)
  expect([...api.pids, ...solo.pids].some((pid) => before.includes(pid))).toBe(true)
  expect([...api.pids, ...solo.pids].some((pid) => after.includes(pid))).toBe(true)
  expect(await waitUntil(() => before.every((pid) => !alive(pid)), 3000)).toBe(true)

  const served = JSON.parse((await cli(['ls', '--json', '-c', config], { env })).stdout)[0]
  expect(served.apps[0].instances.map((i) => i.restarts)).toEqual([1, 1])
  const apiPids = run.records.find((r) => r.event === 'reload:done' && r.app === 'api').pids
  expect(served.apps[0].instances.map((i) => i.pid)).toEqual(apiPids)
  expect(served.apps[0].instances.reduce((n, i) => n + i.served, 0)).toBeGreaterThan(0)
  expect((await get(port, '/api/')).status).toBe(200)

  run.signal('SIGINT')
  expect((await run.exited).code).toBe(0)
})

test('a reload whose new process cannot start keeps the old one serving, and says so', async () => {
  const port = await freePort()
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  const flag = path.join(dir, 'broken')
  const config = writeConfig(dir, {
    apps: [{ name: 'web', script: path.join(APPS, 'ready-app.js'), urls: [`http://127.0.0.1:${port}/`], env: { FAIL_FILE: flag } }]
  })
  run = start(['-c', config], { env })
  const { pid } = await run.waitFor((r) => r.event === 'ready')
  fs.writeFileSync(flag, 'a bad deploy')
  const reload = await cli(['reload', 'web', '-c', config], { env })
  expect(reload.code).toBe(1)
  expect(reload.stderr).toMatch(/^httpsys: Reloading "web" failed: a new process exited with code 2 before it was ready\. The instances that were serving still serve.*\(ERR_HTTPSYS_RELOAD_FAILED\)\n$/)
  expect(JSON.parse((await get(port, '/')).body).pid).toBe(pid)
  expect(run.records.find((r) => r.event === 'reload:failed' && r.keep === pid)).toBeTruthy()

  const missing = await cli(['reload', 'nope', '-c', config], { env })
  expect(missing.code).toBe(1)
  expect(missing.stderr).toMatch(/No app named "nope" is running \(running: web\).*ERR_HTTPSYS_APP_NOT_FOUND/)
})
