'use strict'

// Stopping `httpsys start`: Ctrl+C stops every app (and what the apps started), a second
// Ctrl+C forces, an app that ignores the stop is killed after kill_timeout.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, freePort, get, alive, waitUntil, writeConfig, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-stop-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

const grandchildOf = async (run, app) => {
  const line = await run.waitFor((r) => r.app === app && typeof r.msg === 'string' && r.msg.startsWith('grandchild '))
  return Number(line.msg.split(' ')[1])
}

test('Ctrl+C stops every app gracefully; no worker and no child of a worker survives', async () => {
  const port = await freePort()
  const config = writeConfig(dir, {
    apps: [
      { name: 'pids', script: path.join(APPS, 'pid-server.js'), urls: [`http://127.0.0.1:${port}/pids/`], instances: 2 },
      { name: 'parent', script: path.join(APPS, 'parent.js'), urls: [`http://127.0.0.1:${port}/`] }
    ]
  })
  run = start(['-c', config])
  await run.waitFor((r) => r.event === 'ready', { count: 3 })
  const grandchild = await grandchildOf(run, 'parent')
  expect((await get(port, '/pids/')).status).toBe(200)
  const pids = [...run.pids(), grandchild]
  expect(pids.every(alive)).toBe(true)

  const started = Date.now()
  run.signal('SIGINT')
  expect(await run.exited).toEqual({ code: 0, signal: null })
  expect(Date.now() - started).toBeLessThan(4000) // well-behaved apps: no kill_timeout wait
  expect(run.records.filter((r) => r.event === 'exit')).toHaveLength(3)
  expect(run.records.find((r) => r.event === 'stop:kill')).toBeUndefined()
  expect(await waitUntil(() => pids.every((pid) => !alive(pid)), 3000)).toBe(true)
})

test('an app that ignores the stop is killed, with its children, after kill_timeout', async () => {
  const port = await freePort()
  run = start(['-c', writeConfig(dir, {
    apps: [{ name: 'stubborn', script: path.join(APPS, 'stubborn.js'), urls: [`http://127.0.0.1:${port}/`], kill_timeout: '700ms', env: { FIXTURE_LISTEN: '1' } }]
  })])
  const { pid } = await run.waitFor((r) => r.event === 'ready')
  const grandchild = await grandchildOf(run, 'stubborn')

  const started = Date.now()
  run.signal('SIGTERM')
  expect(await run.exited).toEqual({ code: 0, signal: null })
  expect(Date.now() - started).toBeGreaterThanOrEqual(650)
  await run.waitFor((r) => r.app === 'stubborn' && r.msg === 'SIGTERM ignored')
  expect(await run.waitFor((r) => r.event === 'stop:kill')).toMatchObject({ app: 'stubborn', inst: 0, pid })
  expect(await run.waitFor((r) => r.event === 'exit')).toMatchObject({ pid, signal: 'SIGKILL' })
  expect(await waitUntil(() => !alive(pid) && !alive(grandchild), 3000)).toBe(true)
})

test('a second Ctrl+C kills everything at once and exits 130', async () => {
  const port = await freePort()
  run = start(['-c', writeConfig(dir, {
    apps: [{ name: 'stubborn', script: path.join(APPS, 'stubborn.js'), urls: [`http://127.0.0.1:${port}/`], kill_timeout: '60s', env: { FIXTURE_LISTEN: '1' } }]
  })])
  const { pid } = await run.waitFor((r) => r.event === 'ready')
  const grandchild = await grandchildOf(run, 'stubborn')

  run.signal('SIGINT')
  await run.waitFor((r) => r.app === 'stubborn' && r.msg === 'SIGTERM ignored')
  const started = Date.now()
  run.signal('SIGINT')
  expect(await run.exited).toEqual({ code: 130, signal: null })
  expect(Date.now() - started).toBeLessThan(3000)
  expect(await waitUntil(() => !alive(pid) && !alive(grandchild), 3000)).toBe(true)
})
