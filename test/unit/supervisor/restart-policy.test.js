'use strict'

// The restart rules as a user relies on them: which exits restart, how long the waits
// get, and when a crash loop gives up.

const { shouldRestart, backoffDelay, isUnstable, CrashLoop } = require('../../../src/supervisor/restart-policy')

const app = (restart, stopExitCodes = []) => ({ restart, stop_exit_codes: stopExitCodes })

test.each([
  ['always', [], 0, null, true],
  ['always', [], 1, null, true],
  ['always', [0], 0, null, false],
  ['always', [0], null, 'SIGKILL', true],
  ['on-failure', [], 0, null, false],
  ['on-failure', [], 1, null, true],
  ['on-failure', [], null, 'SIGSEGV', true],
  ['on-failure', [2], 2, null, false],
  ['never', [], 1, null, false]
])('restart %p, stop_exit_codes %p: exit code %p signal %p restarts: %p', (mode, codes, code, signal, expected) => {
  expect(shouldRestart(app(mode, codes), { code, signal })).toBe(expected)
})

const backoff = { initial: 200, max: 30000, factor: 2, jitter: 0 }

test('the delays grow from the floor to the cap', () => {
  const delays = Array.from({ length: 10 }, (_, k) => backoffDelay(backoff, k))
  expect(delays).toEqual([200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000])
})

test('jitter shortens a delay by up to its fraction, never below the floor', () => {
  const jittered = { ...backoff, jitter: 0.5 }
  expect(backoffDelay(jittered, 3, () => 0)).toBe(1600)
  expect(backoffDelay(jittered, 3, () => 1)).toBe(800)
  expect(backoffDelay(jittered, 0, () => 1)).toBe(200)
  // below the cap, with factor 2 and jitter <= 0.5, a later delay is never shorter
  for (let k = 0; k < 7; k++) {
    expect(backoffDelay(jittered, k + 1, () => 1)).toBeGreaterThanOrEqual(backoffDelay(jittered, k, () => 0))
  }
})

test('unstable: an exit before ready, or within min_uptime after it', () => {
  expect(isUnstable({ readyAt: null, exitAt: 100000 }, 5000)).toBe(true)
  expect(isUnstable({ readyAt: 1000, exitAt: 5999 }, 5000)).toBe(true)
  // pm2 counts only exits within min_uptime of the *spawn*: a slow starter that dies
  // 1.1 s after start loops for ever there
  expect(isUnstable({ readyAt: 1000, exitAt: 6000 }, 5000)).toBe(false)
})

test('a crash loop is max unstable exits within a sliding window', () => {
  const loop = new CrashLoop({ max: 3, window: 10000 })
  expect(loop.record(0)).toBe(false)
  expect(loop.record(4000)).toBe(false)
  // the first one has left the window: still two
  expect(loop.record(10001)).toBe(false)
  expect(loop.count).toBe(2)
  expect(loop.record(12000)).toBe(true)
  // still counted however long the app ran before (pm2 stops counting after a while)
  const late = new CrashLoop({ max: 2, window: 1000 })
  late.record(1e9)
  expect(late.record(1e9 + 10)).toBe(true)
  loop.reset()
  expect(loop.count).toBe(0)
})

test('max 0 never gives up', () => {
  const loop = new CrashLoop({ max: 0, window: 1000 })
  for (let i = 0; i < 100; i++) expect(loop.record(i)).toBe(false)
})
