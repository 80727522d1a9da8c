'use strict'

// Rolling reload under load, driven from a second terminal: real HTTP requests keep
// coming while `httpsys reload all` replaces every process; not one fails, for an app
// of two instances and for an app of one (its requests wait in the queue). `httpsys ls
// --json` from another process shows what runs.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, loadLoop, freePort, get, alive, waitUntil, writeConfig, sleep, APPS } = require('../fixtures/apps/harness')

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

test('reload after a config edit, under load: instances 2 -> 3, a port added and a prefix dropped, an app added and one removed; 0 failed requests', async () => {
  const [port, port2, metrics] = [await freePort(), await freePort(), await freePort()]
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  const app = { script: path.join(APPS, 'pid-server.js'), kill_timeout: '5s' }
  const config = writeConfig(dir, {
    apps: [
      { name: 'api', ...app, urls: [`http://127.0.0.1:${port}/api/`, `http://127.0.0.1:${port}/v1/`], instances: 2 },
      { name: 'old', ...app, urls: [`http://127.0.0.1:${port}/old/`] }
    ]
  })
  run = start(['-c', config], { env })
  await run.waitFor((r) => r.event === 'all-ready')
  expect((await get(port, '/old/')).status).toBe(200)

  let reloading = true
  const load = loadLoop(port, { path: '/api/?delay=15', concurrency: 6, until: () => !reloading })
  await sleep(300)
  writeConfig(dir, {
    apps: [
      { name: 'api', ...app, urls: [`http://127.0.0.1:${port}/api/`, `http://127.0.0.1:${port2}/`], instances: 3, env: { RELEASE: '2' } },
      { name: 'new', ...app, urls: [`http://127.0.0.1:${port}/new/`] }
    ],
    metrics: { listen: `127.0.0.1:${metrics}` }
  })
  const reload = await cli(['reload', 'all', '-c', config], { env })
  await sleep(300)
  reloading = false
  const api = await load

  expect(reload.stderr).toBe('')
  expect(reload.code).toBe(0)
  const lines = reload.stdout.trim().split('\n')
  expect(lines).toHaveLength(4)
  expect(lines[0]).toMatch(/^old \[.*httpsys\.config\.js\]: removed \(no longer in the config\): drained and stopped in \d+ ms$/)
  expect(lines[1]).toMatch(new RegExp(`^api \\[.*\\]: reloaded in \\d+ ms \\(pid \\d+, \\d+, \\d+\\); applied: urls \\+ http://127\\.0\\.0\\.1:${port2}/ - http://127\\.0\\.0\\.1:${port}/v1/, instances 2 -> 3, env \\(RELEASE\\)$`))
  expect(lines[2]).toMatch(/^new \[.*\]: added, ready in \d+ ms \(pid \d+\)$/)
  expect(lines[3]).toMatch(/^httpsys \[.*\]: metrics changed in the config, not applied: the metrics endpoint listens from start; to apply, stop httpsys \(`httpsys stop all`\) and start it again$/)
  expect(api.failed).toEqual([])
  expect(api.sent).toBeGreaterThan(50)

  // the new port serves api; the dropped prefix and the removed app no longer route
  expect(JSON.parse((await get(port2, '/x')).body).app).toBe('api')
  expect((await get(port, '/v1/x')).status).toBe(404)
  expect((await get(port, '/old/x')).status).toBe(404)
  expect(JSON.parse((await get(port, '/new/x')).body).app).toBe('new')
  await expect(get(metrics, '/metrics')).rejects.toThrow(/ECONNREFUSED/)
  const ls = JSON.parse((await cli(['ls', '--json', '-c', config], { env })).stdout)[0]
  expect(ls.apps.map((a) => [a.name, a.state, a.instances.length])).toEqual([['api', 'ready', 3], ['new', 'ready', 1]])
  // a command for the new app finds it
  expect((await cli(['reload', 'new', '-c', config], { env })).code).toBe(0)

  run.signal('SIGINT')
  expect((await run.exited).code).toBe(0)
})

test('a config that fails its checks changes nothing and says why; `restart all` reads the config again too', async () => {
  const port = await freePort()
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  const script = path.join(dir, 'release.js')
  fs.writeFileSync(script, 'require("http").createServer((q, s) => s.end(process.env.RELEASE)).listen(process.env.PORT)\n')
  const web = { name: 'web', script, urls: [`http://127.0.0.1:${port}/`], env: { RELEASE: '1' } }
  const config = writeConfig(dir, { apps: [web] })
  run = start(['-c', config], { env })
  const { pid } = await run.waitFor((r) => r.event === 'ready')

  writeConfig(dir, { apps: [{ ...web, env: { RELEASE: '2' }, restart: 'sometimes' }] })
  for (const cmd of ['reload', 'restart']) {
    const refused = await cli([cmd, 'all', '-c', config], { env })
    expect(refused.code).toBe(1)
    expect(refused.stdout).toBe('')
    expect(refused.stderr).toMatch(/^httpsys: the config was not applied, nothing changed \(every app runs as before\): Invalid config at apps\[0\]\.restart: .*\(ERR_HTTPSYS_CONFIG_INVALID\)\n$/)
  }
  expect((await get(port, '/')).body).toBe('1')
  expect(run.records.filter((r) => r.event === 'spawn').map((r) => r.pid)).toEqual([pid])

  // pm2 re-reads only `restart <ecosystem file>`; here restart applies the config as reload does
  writeConfig(dir, { apps: [{ ...web, env: { RELEASE: '2' }, instances: 2 }] })
  const restarted = await cli(['restart', 'all', '-c', config], { env })
  expect(restarted.stderr).toBe('')
  expect(restarted.stdout).toMatch(/^web \[.*\]: restarted; applied: instances 1 -> 2, env \(RELEASE\)\n$/)
  await run.waitFor((r) => r.event === 'ready' && r.pid !== pid, { count: 2 })
  expect((await get(port, '/')).body).toBe('2')
})

test('scale: instances added and removed while a load runs, 0 failed requests; the output says the config decides again at the next reload', async () => {
  const port = await freePort()
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  const config = writeConfig(dir, { apps: [{ name: 'api', script: path.join(APPS, 'pid-server.js'), urls: [`http://127.0.0.1:${port}/`], kill_timeout: '5s' }] })
  run = start(['-c', config], { env })
  await run.waitFor((r) => r.event === 'ready')
  let scaling = true
  const load = loadLoop(port, { path: '/?delay=15', concurrency: 6, until: () => !scaling })
  await sleep(200)
  const up = await cli(['scale', 'api', '3', '-c', config], { env })
  expect(up.stderr).toBe('')
  expect(up.stdout).toMatch(/^api \[.*\]: 1 -> 3 instances \(pid \d+, \d+, \d+\); .*httpsys\.config\.js says 1: the next reload or start applies that, so set instances: 3 there to keep it\n$/)
  await sleep(300)
  const down = await cli(['scale', 'api', '1', '-c', config], { env })
  expect(down.stdout).toMatch(/^api \[.*\]: 3 -> 1 instance \(pid \d+\)\n$/)
  const plus = await cli(['scale', 'api', '+1', '-c', config], { env })
  expect(plus.stdout).toMatch(/^api \[.*\]: 1 -> 2 instances/)
  await sleep(200)
  scaling = false
  const result = await load
  expect(result.failed).toEqual([])
  expect(result.pids.size).toBeGreaterThanOrEqual(3)
  const ls = JSON.parse((await cli(['ls', '--json', '-c', config], { env })).stdout)[0]
  expect(ls.apps[0].instances.map((i) => i.state)).toEqual(['ready', 'ready'])
  // the config's instances again at the next reload
  const reload = await cli(['reload', 'api', '-c', config], { env })
  expect(reload.stdout).toMatch(/applied: instances 2 -> 1\n$/)
})

test('an ES module config (a "type": "module" project) is read afresh by reload, as a CommonJS one is', async () => {
  const port = await freePort()
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'shop', type: 'module' }))
  const config = path.join(dir, 'httpsys.config.js')
  const write = (instances) => fs.writeFileSync(config, `export default { apps: [{ name: 'api', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/'], instances: ${instances} }] }\n`)
  write(1)
  run = start(['-c', config], { env })
  await run.waitFor((r) => r.event === 'all-ready')
  write(2)
  const reload = await cli(['reload', 'all', '-c', config], { env })
  expect(reload.stdout).toMatch(/^api \[.*\]: reloaded in \d+ ms \(pid \d+, \d+\); applied: instances 1 -> 2\n$/)
  write(3)
  expect((await cli(['reload', 'all', '-c', config], { env })).stdout).toMatch(/applied: instances 2 -> 3\n$/)
})
