'use strict'

// An instance over many processes (real processes, the stand-in preload, no hub):
// backoff that grows and resets, a crash loop that ends in errored, readiness from
// process.send('ready') and its timeout, and the reload that keeps the old process
// until the new one is ready.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const pino = require('pino')
const { validate } = require('../../../src/config')
const { Instance } = require('../../../src/supervisor/instance')
const { waitForRecords } = require('../../helpers/records')

const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')
const PRELOAD = path.join(APPS, 'fake-preload.js')

const instances = []
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-life-')) })
afterEach(async () => {
  await Promise.all(instances.splice(0).map((i) => i.kill()))
  fs.rmSync(dir, { recursive: true, force: true })
})

function makeInstance (appConfig) {
  const app = validate({
    apps: [{ kill_timeout: 2000, backoff: { initial: 50, factor: 2, jitter: 0, max: 1000, reset_after: 400 }, ...appConfig }]
  }, { baseDir: APPS }).apps[0]
  const records = []
  const logger = pino({ level: 'debug', base: null }, { write (line) { records.push(JSON.parse(line)) } })
  const instance = new Instance(app, 0, { routerEnv: { HTTPSYS_HUB: '/tmp/hub.sock' }, logger, preload: PRELOAD })
  instances.push(instance)
  return { instance, records }
}

async function waitFor (records, predicate, { timeout = 8000, count = 1 } = {}) {
  const found = await waitForRecords(records, predicate, { timeout, count })
  return count === 1 ? found[0] : found
}

test('backoff delays grow while it keeps crashing, and start over after a stable run', async () => {
  const flag = path.join(dir, 'fail')
  fs.writeFileSync(flag, '')
  const { instance, records } = makeInstance({
    name: 'flaky', script: 'ready-app.js', wait_ready: true, max_restarts: 0, min_uptime: 500, env: { FAIL_FILE: flag, CRASH_AFTER_MS: '700' }
  })
  instance.start()
  const crashing = await waitFor(records, (r) => r.event === 'backoff', { count: 4 })
  expect(crashing.map((r) => r.delay)).toEqual([50, 100, 200, 400])
  expect(crashing.every((r) => r.code === 2 && r.signal === null && r.unstable === true)).toBe(true)

  // the deploy is fixed: it becomes ready, stays up longer than reset_after (400 ms),
  // then crashes once (700 ms after ready): the wait is the floor again
  fs.unlinkSync(flag)
  const ready = await waitFor(records, (r) => r.event === 'ready')
  const after = await waitFor(records, (r) => r.event === 'backoff' && r.pid === ready.pid, { timeout: 10000 })
  expect(after).toMatchObject({ delay: 50, code: 3, unstable: false })
})

test('a crash loop ends in errored with one clear record, and nothing restarts it', async () => {
  // ready, then crashing within min_uptime each time: unstable exits of an app that did start
  const { instance, records } = makeInstance({ name: 'doomed', script: 'ready-app.js', wait_ready: true, max_restarts: 3, restart_window: '1m', env: { CRASH_AFTER_MS: '30' } })
  const errored = new Promise((resolve) => instance.once('errored', resolve))
  instance.start()
  await errored
  const record = await waitFor(records, (r) => r.event === 'errored')
  expect(record).toMatchObject({ level: 50, app: 'doomed', inst: 0, code: 3, unstableExits: 3 })
  expect(record.msg).toMatch(/crash loop: 3 unstable exits within 60000 ms .*httpsys restart doomed/)
  expect(records.filter((r) => r.event === 'errored')).toHaveLength(1)
  expect(instance.state).toBe('errored')
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(records.filter((r) => r.event === 'spawn')).toHaveLength(3)
})

test('an app that never got ready is errored after 3 attempts, with the cause in one line', async () => {
  const { instance, records } = makeInstance({ name: 'firstrun', script: 'crash-start.js' })
  const errored = new Promise((resolve) => instance.once('errored', resolve))
  instance.start()
  await errored
  const record = await waitFor(records, (r) => r.event === 'errored')
  expect(record).toMatchObject({ level: 50, firstStart: true, attempts: 3, cause: 'boom: cannot start (missing DATABASE_URL)' })
  expect(record.msg).toBe('did not start (3 attempts): boom: cannot start (missing DATABASE_URL); not restarting, fix it, then `httpsys restart firstrun`')
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(records.filter((r) => r.event === 'spawn')).toHaveLength(3)
  // a restart gives it its attempts again
  await instance.restart()
  await waitFor(records, (r) => r.event === 'errored', { count: 2 })
  expect(records.filter((r) => r.event === 'spawn')).toHaveLength(6)
})

test('restart: "on-failure" leaves a clean exit alone; stop_exit_codes too', async () => {
  const { instance, records } = makeInstance({ name: 'job', script: 'output.js', args: ['0'], restart: 'on-failure' })
  instance.start()
  await waitFor(records, (r) => r.event === 'done')
  expect(instance.state).toBe('exited')
  const other = makeInstance({ name: 'job2', script: 'output.js', args: ['4'], stop_exit_codes: [4] })
  other.instance.start()
  expect(await waitFor(other.records, (r) => r.event === 'done')).toMatchObject({ code: 4 })
  expect(other.records.filter((r) => r.event === 'spawn')).toHaveLength(1)
})

test('wait_ready: ready on process.send("ready"); not ready in time is a failure that restarts', async () => {
  const { instance, records } = makeInstance({ name: 'warm', script: 'ready-app.js', wait_ready: true, env: { READY_DELAY: '150' } })
  instance.start()
  const ready = await waitFor(records, (r) => r.event === 'ready')
  expect(ready.via).toBe('message')
  expect(ready.ms).toBeGreaterThanOrEqual(140)

  const slow = makeInstance({ name: 'cold', script: 'ready-app.js', wait_ready: true, ready_timeout: 300, max_restarts: 0, env: { NEVER_READY: '1' } })
  slow.instance.start()
  const timeout = await waitFor(slow.records, (r) => r.event === 'ready-timeout')
  expect(timeout.msg).toMatch(/did not send process\.send\('ready'\) within 300 ms/)
  // stopped, counted as unstable, restarted after the backoff
  expect(await waitFor(slow.records, (r) => r.event === 'backoff')).toMatchObject({ unstable: true })
  await waitFor(slow.records, (r) => r.event === 'spawn', { count: 2 })
})

test('reload: the new process is ready before the old one is asked to stop', async () => {
  const { instance, records } = makeInstance({ name: 'api', script: 'ready-app.js', wait_ready: true, env: { READY_DELAY: '100' } })
  instance.start()
  const first = await waitFor(records, (r) => r.event === 'ready')
  const result = await instance.reload()
  expect(result).toMatchObject({ ok: true, pid: expect.any(Number) })
  expect(result.pid).not.toBe(first.pid)
  expect(instance.pid).toBe(result.pid)
  const at = (pred) => records.findIndex(pred)
  const newReady = at((r) => r.event === 'ready' && r.pid === result.pid)
  const oldAsked = at((r) => r.event === 'stop:shutdown' && r.pid === first.pid)
  const oldExit = at((r) => r.event === 'exit' && r.pid === first.pid)
  expect(newReady).toBeGreaterThan(0)
  expect(oldAsked).toBeGreaterThan(newReady)
  expect(oldExit).toBeGreaterThan(oldAsked)
  expect(instance.state).toBe('ready')
  expect(instance.restarts).toBe(1)
})

test('a reload whose new process fails keeps the old one serving', async () => {
  const flag = path.join(dir, 'fail')
  const { instance, records } = makeInstance({ name: 'api', script: 'ready-app.js', wait_ready: true, env: { FAIL_FILE: flag } })
  instance.start()
  const first = await waitFor(records, (r) => r.event === 'ready')
  fs.writeFileSync(flag, '')
  const result = await instance.reload()
  expect(result).toMatchObject({ ok: false, reason: 'exited with code 2 before it was ready' })
  expect(instance.pid).toBe(first.pid)
  expect(instance.state).toBe('ready')
  expect(await waitFor(records, (r) => r.event === 'reload:failed')).toMatchObject({ level: 50, keep: first.pid })
  // the failed candidate is not restarted by the crash policy
  await new Promise((resolve) => setTimeout(resolve, 200))
  expect(records.filter((r) => r.event === 'spawn')).toHaveLength(2)
  process.kill(first.pid, 0) // still there
})

test('the old process dying during a reload: the new one takes over, or the crash policy does; never two', async () => {
  const flag = path.join(dir, 'fail')
  const { instance, records } = makeInstance({ name: 'api', script: 'ready-app.js', wait_ready: true, env: { READY_DELAY: '250', FAIL_FILE: flag, FAIL_DELAY: '250' } })
  instance.start()
  const first = await waitFor(records, (r) => r.event === 'ready')
  const reloading = instance.reload()
  await waitFor(records, (r) => r.event === 'spawn', { count: 2 })
  process.kill(first.pid, 'SIGKILL')
  expect(await reloading).toMatchObject({ ok: true })
  await new Promise((resolve) => setTimeout(resolve, 300))
  expect(records.filter((r) => r.event === 'spawn')).toHaveLength(2)
  expect(records.find((r) => r.event === 'backoff')).toBeUndefined()
  expect(instance.processes()).toHaveLength(1)

  // now the new process fails too: the old one's crash is handled as without a reload
  fs.writeFileSync(flag, '')
  const second = instance.pid
  const failing = instance.reload()
  await waitFor(records, (r) => r.event === 'spawn', { count: 3 })
  process.kill(second, 'SIGKILL')
  expect(await failing).toMatchObject({ ok: false })
  expect(await waitFor(records, (r) => r.event === 'backoff')).toMatchObject({ pid: second, signal: 'SIGKILL' })
  expect(instance.processes().length).toBeLessThanOrEqual(1)
})

test('listen_timeout: a web app that never listens is stopped by httpsys, and every record says so, never "exited with code 0"', async () => {
  const { instance, records } = makeInstance({ name: 'mute', script: 'graceful.js', listen_timeout: 300, max_restarts: 2 })
  instance.start()
  const timeout = await waitFor(records, (r) => r.event === 'ready-timeout')
  expect(timeout).toMatchObject({ kind: 'listen', ms: 300 })
  expect(timeout.msg).toMatch(/^never listened within 300 ms; stopping it; if it serves no HTTP, give it type: "worker"/)
  // graceful.js exits 0 when asked to stop: that code is the stop's, not the cause
  expect(await waitFor(records, (r) => r.event === 'backoff')).toMatchObject({
    code: 0, reason: 'never listened within 300 ms; stopped by httpsys', msg: expect.stringMatching(/^never listened within 300 ms; stopped by httpsys; restarting in \d+ ms$/)
  })
  const errored = await waitFor(records, (r) => r.event === 'errored')
  expect(errored).toMatchObject({ firstStart: true, attempts: 2, cause: 'never listened within 300 ms; stopped by httpsys' })
  expect(records.filter((r) => r.event === 'exit').map((r) => r.msg)).toEqual(['stopped (never listened within 300 ms; exit code 0)', 'stopped (never listened within 300 ms; exit code 0)'])
  expect(records.some((r) => /exited with code 0/.test(r.msg))).toBe(false)
  expect(instance.state).toBe('errored')
})

test('listen_timeout and ready_timeout: without wait_ready the shorter one stops it; with wait_ready each has its own cause', async () => {
  const short = makeInstance({ name: 'short', script: 'graceful.js', listen_timeout: 5000, ready_timeout: 250, max_restarts: 1 })
  short.instance.start()
  expect((await waitFor(short.records, (r) => r.event === 'errored')).cause).toBe('never listened within 250 ms; stopped by httpsys')

  const silent = makeInstance({ name: 'silent', script: 'ready-app.js', wait_ready: true, listen_timeout: 0, ready_timeout: 250, max_restarts: 1, env: { NEVER_READY: '1' } })
  silent.instance.start()
  expect((await waitFor(silent.records, (r) => r.event === 'errored')).cause).toBe('did not send process.send(\'ready\') within 250 ms; stopped by httpsys')
})
