'use strict'

// max_memory_restart: an instance whose memory stays above the limit is replaced by a
// rolling reload (no failed request), with a record of what was measured.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, loadLoop, freePort, writeConfig, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-mem-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('an instance above max_memory_restart for several samples is reloaded without a failed request', async () => {
  const port = await freePort()
  run = start(['-c', writeConfig(dir, {
    apps: [{ name: 'hog', script: path.join(APPS, 'memory-hog.js'), urls: [`http://127.0.0.1:${port}/`], max_memory_restart: '80M', env: { HOG_MB: '96' } }]
  })], { env: { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') } })
  const { pid } = await run.waitFor((r) => r.event === 'ready')
  let done = false
  const load = loadLoop(port, { concurrency: 2, until: () => done, timeout: 20000 })
  const memory = await run.waitFor((r) => r.event === 'memory', { timeout: 15000 })
  await run.waitFor((r) => r.event === 'reload:done', { timeout: 10000 })
  done = true
  const { sent, failed } = await load
  expect(memory).toMatchObject({ level: 40, app: 'hog', inst: 0, pid, limit: 80 * 1024 * 1024, samples: 3 })
  expect(memory.rss).toBeGreaterThan(80 * 1024 * 1024)
  expect(memory.msg).toMatch(/^memory \d+M above max_memory_restart 80M for 3 samples; reloading$/)
  expect(run.records.find((r) => r.event === 'reload:start')).toMatchObject({ app: 'hog', reason: 'memory' })
  expect(failed).toEqual([])
  expect(sent).toBeGreaterThan(10)
}, 30000)
