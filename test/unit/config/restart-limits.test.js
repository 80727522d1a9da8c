'use strict'

// Config values that looked valid but could never work: a crash-loop limit no app could
// reach with the default backoff (it restarted for ever), a timeout beyond what node's
// timers hold (it fired at once, for ever), and an app named like the `all` of
// `httpsys stop all`.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { validate } = require('../../../src/config')
const { backoffDelay, isUnstable, CrashLoop } = require('../../../src/supervisor/restart-policy')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-limits-'))
fs.writeFileSync(path.join(dir, 'app.js'), '')
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const one = (extra) => validate({ apps: [{ script: 'app.js', ...extra }] }, { baseDir: dir }).apps[0]
const failure = (fn) => {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('did not throw')
}

/**
 * An instance that is never ready and dies `lifeMs` after each spawn, restarted as
 * instance.js does (real backoff, longest delays: no jitter luck), until the crash loop
 * gives up or maxExits have happened. @returns {number|null} the exit that made it errored
 */
function erroredAfter (app, lifeMs, maxExits = 100) {
  const loop = new CrashLoop({ max: app.max_restarts, window: app.restart_window || Infinity })
  let now = 0
  for (let exit = 1, attempt = 0; exit <= maxExits; exit++) {
    now += lifeMs
    expect(isUnstable({ readyAt: null, exitAt: now }, app.min_uptime)).toBe(true)
    if (loop.record(now)) return exit
    now += backoffDelay(app.backoff, attempt++, () => 0)
  }
  return null
}

test('with the defaults, an app that dies 10 s after each start ends errored after max_restarts exits', () => {
  const app = one({})
  expect(app.max_restarts).toBe(10)
  expect(erroredAfter(app, 10000)).toBe(10)
  // the slowest unstable exit there is: killed at ready_timeout, after kill_timeout
  expect(erroredAfter(app, app.ready_timeout + app.kill_timeout)).toBe(10)
  // what the old fixed 2 m window did with it: restarted for ever
  expect(erroredAfter({ ...app, restart_window: 120000 }, 10000)).toBeNull()
})

test('restart_window "auto" follows max_restarts and the backoff cap; 0 (no window) with ready_timeout 0', () => {
  expect(one({ max_restarts: 3, backoff: { max: '1s' }, ready_timeout: '2s', kill_timeout: '1s', min_uptime: '1s' }).restart_window).toBe(3 * 5000)
  const forever = one({ ready_timeout: 0 })
  expect(forever.restart_window).toBe(0)
  expect(erroredAfter(forever, 3600000)).toBe(10)
})

test('a restart_window too short for max_restarts exits with the backoff is rejected, naming the keys', () => {
  const err = failure(() => one({ restart_window: '1m' }))
  expect(err.code).toBe('ERR_HTTPSYS_CONFIG_INVALID')
  expect(err.message).toMatch(/^Invalid config at apps\[0\]\.restart_window: is 60000 ms, but max_restarts \(10\) exits with this backoff take at least \d+ ms/)
  expect(err.message).toMatch(/restart_window: "auto"/)
  expect(err.message).toMatch(/backoff\.max/)
  // reachable: accepted as written
  expect(one({ restart_window: '1m', max_restarts: 5 }).restart_window).toBe(60000)
})

test.each([
  ['kill_timeout', { kill_timeout: '700h' }, 'apps[0].kill_timeout', false],
  ['ready_timeout', { ready_timeout: '700h' }, 'apps[0].ready_timeout', true],
  ['backoff.max', { backoff: { max: 2147483648 } }, 'apps[0].backoff.max', false]
])('%s above 24.8 days is rejected (node would fire it after 1 ms)', (_, extra, key, zeroForEver) => {
  const err = failure(() => one(extra))
  expect(err.code).toBe('ERR_HTTPSYS_CONFIG_INVALID')
  expect(err.message).toContain(`Invalid config at ${key}: must be at most 24.8 days (2147483647 ms)`)
  expect(err.message.includes('0 means for ever')).toBe(zeroForEver)
})

test('the longest timer node holds is accepted', () => {
  expect(one({ ready_timeout: 2147483647 }).ready_timeout).toBe(2147483647)
})

test('the app name "all" is reserved (httpsys stop all means every app)', () => {
  const err = failure(() => one({ name: 'all' }))
  expect(err.code).toBe('ERR_HTTPSYS_CONFIG_INVALID')
  expect(err.message).toMatch(/apps\[0\]\.name: "all" is reserved/)
  expect(one({ name: 'all-api' }).name).toBe('all-api')
})
