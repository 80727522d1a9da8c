'use strict'

// The native router's row in ls (issue 25): its CPU time turned into a share of one core
// over the last minute, as a worker's is (app-stats.js), and its memory.

const { ProcessUsage, WINDOW_MS } = require('../../../src/supervisor/router-usage')

function clock () {
  let t = 1000000
  const now = () => t
  now.advance = (ms) => { t += ms }
  return now
}

const proc = { exitInfo: null }

test('before a second of samples: CPU over the process\'s life', async () => {
  const now = clock()
  const u = new ProcessUsage({ now })
  u.started(42)
  expect(await u.view(proc)).toBe(null)
  now.advance(500)
  u.add({ cpuMicros: 100000, rss: 8 << 20, goroutines: 5 })
  // 100 ms of CPU in 500 ms: 20% of one core
  expect(await u.view(proc)).toEqual({ pid: 42, cpu: 20, cpuMicros: 100000, memory: 8 << 20, uptimeMs: 500, goroutines: 5 })
})

test('then over the last minute only: a busy start no longer counts', async () => {
  const now = clock()
  const u = new ProcessUsage({ now })
  u.started(42)
  let cpu = 0
  // a first minute at one whole core, then two at 10%
  for (let s = 1; s <= 180; s++) {
    now.advance(1000)
    cpu += s <= 60 ? 1e6 : 1e5
    if (u.due()) u.add({ cpuMicros: cpu, rss: 8 << 20 })
  }
  const v = await u.view(proc)
  expect(v.cpu).toBe(10)
  expect(v.uptimeMs).toBe(180000)
  expect(u.samples.length).toBeLessThanOrEqual(WINDOW_MS / 1000 + 2)
})

test('answers more often than once a second do not shrink the window', async () => {
  const now = clock()
  const u = new ProcessUsage({ now })
  u.started(42)
  let cpu = 0
  for (let i = 0; i < 400; i++) {
    now.advance(250)
    cpu += 50000 // 20% of a core
    u.add({ cpuMicros: cpu, rss: 1 })
  }
  expect((await u.view(proc)).cpu).toBe(20)
  expect(u.samples[u.samples.length - 1].t - u.samples[0].t).toBeGreaterThanOrEqual(WINDOW_MS - 1000)
})
