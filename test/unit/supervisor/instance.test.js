'use strict'

// Instance against real processes, with a stand-in preload (no hub needed): what a user
// sees of one app instance: its environment, its output as records, restarts after a
// crash, and the stop ladder.

const path = require('node:path')
const pino = require('pino')
const { validate } = require('../../../src/config')
const { Instance } = require('../../../src/supervisor/instance')
const { waitForRecord } = require('../../helpers/records')
const { alive } = require('../../fixtures/apps/harness')

const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')
const PRELOAD = path.join(APPS, 'fake-preload.js')

const instances = []
afterEach(async () => {
  await Promise.all(instances.splice(0).map((i) => i.kill()))
})

function memoryLogger () {
  const records = []
  const logger = pino({ level: 'info', base: null }, { write (line) { records.push(JSON.parse(line)) } })
  return { logger, records }
}

function makeInstance (appConfig, inst = 0) {
  const app = validate({ apps: [{ kill_timeout: 2000, ...appConfig }] }, { baseDir: APPS }).apps[0]
  const { logger, records } = memoryLogger()
  const instance = new Instance(app, inst, { routerEnv: { HTTPSYS_HUB: '/tmp/hub.sock' }, logger, preload: PRELOAD, env: { HTTPSYS_LOG_LEVEL: 'debug' } })
  instances.push(instance)
  return { instance, records }
}

const waitFor = (records, predicate, timeout) => waitForRecord(records, predicate, { timeout })

test('starts the script with the httpsys environment, its args, node args and cwd', async () => {
  const { instance, records } = makeInstance({
    name: 'api', script: 'env-dump.js', args: ['--flag', 'x'], node_args: '--no-warnings', env: { FIXTURE_VAR: 'yes' }
  }, 1)
  instance.start()
  const line = await waitFor(records, (r) => typeof r.msg === 'string' && r.msg.startsWith('ENV '))
  const seen = JSON.parse(line.msg.slice(4))
  expect(seen.env).toEqual({
    HTTPSYS_HUB: '/tmp/hub.sock',
    HTTPSYS_QUEUE: 'api',
    HTTPSYS_APP: 'api',
    HTTPSYS_INSTANCE: '1',
    NODE_APP_INSTANCE: '1',
    HTTPSYS_LOG_LEVEL: 'debug',
    FIXTURE_VAR: 'yes',
    PORT: process.env.PORT
  })
  expect(seen.argv).toEqual(['--flag', 'x'])
  expect(seen.execArgv).toEqual(['--no-warnings', '--require', PRELOAD])
  expect(seen.cwd).toBe(APPS)
  expect(records[0]).toMatchObject({ event: 'spawn', app: 'api', inst: 1, pid: instance.pid })
})

test('PORT is the port of the first configured URL prefix', async () => {
  const { instance, records } = makeInstance({ script: 'env-dump.js', urls: ['http://+:8123/a/', 'http://+:9000/'] })
  instance.start()
  const line = await waitFor(records, (r) => typeof r.msg === 'string' && r.msg.startsWith('ENV '))
  expect(JSON.parse(line.msg.slice(4)).env.PORT).toBe('8123')
})

test('every output line becomes one tagged record; pino lines are merged, the last partial line is kept', async () => {
  const { instance, records } = makeInstance({ name: 'out', script: 'output.js', args: ['0'] })
  instance.start()
  await waitFor(records, (r) => r.event === 'exit')
  const pid = records[0].pid
  const lines = records.filter((r) => r.event === undefined)
  expect(lines).toEqual(expect.arrayContaining([
    expect.objectContaining({ level: 30, app: 'out', inst: 0, pid, stream: 'stdout', msg: 'plain line on stdout' }),
    // merged: the worker's own level, time and fields, not a string inside a record
    expect.objectContaining({ level: 40, time: 1700000000000, app: 'out', inst: 0, pid, stream: 'stderr', msg: 'pino record', custom: 42 }),
    expect.objectContaining({ stream: 'stdout', msg: 'windows line' }),
    expect.objectContaining({ stream: 'stdout', msg: 'last words: \u00e9t\u00e9' })
  ]))
  expect(lines).toHaveLength(4)
  // the output comes before the exit record
  expect(records.findIndex((r) => r.event === 'exit')).toBeGreaterThan(records.findIndex((r) => r.msg === 'last words: \u00e9t\u00e9'))
})

test('a crashed process is logged and started again', async () => {
  const { instance, records } = makeInstance({ name: 'crashy', script: 'output.js', args: ['3'] })
  instance.start()
  const first = instance.pid
  const exit = await waitFor(records, (r) => r.event === 'exit')
  expect(exit).toMatchObject({ app: 'crashy', inst: 0, pid: first, code: 3, signal: null, level: 40 })
  // the first delay is the backoff's floor (jitter never goes below it)
  expect(await waitFor(records, (r) => r.event === 'backoff')).toMatchObject({ app: 'crashy', inst: 0, pid: first, code: 3, signal: null, delay: 200 })
  const respawn = await waitFor(records, (r) => r.event === 'spawn' && r.pid !== first)
  expect(respawn.pid).toEqual(expect.any(Number))
})

test('stop asks over IPC and the app exits by itself; no restart follows', async () => {
  const { instance, records } = makeInstance({ name: 'nice', script: 'graceful.js' })
  instance.start()
  const pid = instance.pid
  await waitFor(records, (r) => r.event === 'spawn')
  const started = Date.now()
  await instance.stop()
  expect(Date.now() - started).toBeLessThan(1500)
  expect(records.find((r) => r.msg === 'cleaning up')).toBeTruthy()
  expect(records.find((r) => r.event === 'exit')).toMatchObject({ pid, code: 0, signal: null })
  expect(instance.state).toBe('stopped')
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(records.filter((r) => r.event === 'spawn')).toHaveLength(1)
  expect(alive(pid)).toBe(false)
})

test('an app that ignores the stop is killed with its children after kill_timeout', async () => {
  const { instance, records } = makeInstance({ name: 'stubborn', script: 'stubborn.js', kill_timeout: 400 })
  instance.start()
  const line = await waitFor(records, (r) => typeof r.msg === 'string' && r.msg.startsWith('grandchild '))
  const grandchild = Number(line.msg.split(' ')[1])
  expect(alive(grandchild)).toBe(true)
  const started = Date.now()
  await instance.stop()
  const took = Date.now() - started
  expect(took).toBeGreaterThanOrEqual(350)
  expect(took).toBeLessThan(2000)
  expect(records.find((r) => r.msg === 'SIGTERM ignored')).toBeTruthy()
  expect(records.find((r) => r.event === 'stop:kill')).toMatchObject({ app: 'stubborn', level: 40, ms: expect.any(Number) })
  expect(records.find((r) => r.event === 'exit')).toMatchObject({ signal: 'SIGKILL' })
  await waitForDeath(grandchild)
})

test('kill() does not wait; stop() and kill() twice are harmless', async () => {
  const { instance, records } = makeInstance({ name: 'stubborn', script: 'stubborn.js', kill_timeout: 10000 })
  instance.start()
  await waitFor(records, (r) => typeof r.msg === 'string' && r.msg.startsWith('grandchild '))
  const stopping = instance.stop()
  const started = Date.now()
  await Promise.all([instance.kill(), instance.kill(), instance.stop(), stopping])
  expect(Date.now() - started).toBeLessThan(2000)
  expect(records.filter((r) => r.event === 'exit')).toHaveLength(1)
  await instance.stop()
})

test('stop during the restart delay leaves it stopped', async () => {
  const { instance, records } = makeInstance({ name: 'crashy', script: 'output.js', args: ['1'] })
  instance.start()
  await waitFor(records, (r) => r.event === 'backoff')
  await instance.stop()
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(records.filter((r) => r.event === 'spawn')).toHaveLength(1)
  expect(instance.state).toBe('stopped')
})

async function waitForDeath (pid, timeout = 3000) {
  const end = Date.now() + timeout
  while (alive(pid) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20))
  expect(alive(pid)).toBe(false)
}
