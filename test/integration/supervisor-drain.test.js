'use strict'

// The drain step of the stop ladder, end to end with the real hub: the old process is
// detached and finishes what it holds before it is asked to exit, so even an app whose
// SIGTERM handler exits at once loses no request in a reload. Uses the preload with the
// httpsys:drain message (src/register.js answers it).

const pino = require('pino')
const { validate } = require('../../src/config')
const { Supervisor } = require('../../src/supervisor')
const { loadLoop, freePort, APPS } = require('../fixtures/apps/harness')

let supervisor
afterEach(async () => { if (supervisor) await supervisor.kill() })

test('reload of an app that exits on SIGTERM at once: drained first, 0 failed requests, quick stop', async () => {
  const port = await freePort()
  const config = validate({
    apps: [{ name: 'abrupt', script: 'abrupt.js', urls: [`http://127.0.0.1:${port}/`], instances: 2, kill_timeout: '5s' }]
  }, { baseDir: APPS })
  const records = []
  const logger = pino({ level: 'debug', base: null }, { write (line) { records.push(JSON.parse(line)) } })
  supervisor = new Supervisor(config, { logger })
  await supervisor.start()
  const ready = new Promise((resolve) => { let n = 0; supervisor.on('ready', () => { if (++n === 2) resolve() }) })
  await ready

  let reloading = true
  const load = loadLoop(port, { path: '/?delay=40', concurrency: 8, until: () => !reloading })
  await new Promise((resolve) => setTimeout(resolve, 200))
  const [result] = await supervisor.reload('abrupt')
  reloading = false
  const { sent, failed } = await load
  if (process.env.HTTPSYS_TEST_REPORT) console.log(`drain reload: ${sent} sent, ${failed.length} failed, reload ${result.ms} ms`)
  expect(result).toMatchObject({ ok: true })
  expect(failed).toEqual([])
  expect(sent).toBeGreaterThan(40)
  const drained = records.filter((r) => r.event === 'stop:drained')
  // the preload said so ('drained'), or the hub saw it detached with nothing in flight
  // ('idle'), whichever came first: never a drain that gave up ('timeout', 'unsupported')
  expect(drained).toHaveLength(2)
  for (const r of drained) expect(['drained', 'idle']).toContain(r.how)
  // detached and idle well before kill_timeout; the stop of each old process is quick
  const done = records.filter((r) => r.event === 'stop:done')
  expect(done.every((r) => r.ms < 1000)).toBe(true)
  expect(records.find((r) => r.event === 'stop:kill')).toBeUndefined()
})
