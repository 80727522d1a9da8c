'use strict'

// max_memory_restart: one sample over the limit is noise; the limit held for several
// samples in a row reloads that instance, with a record of what was measured.

const pino = require('pino')
const { MemoryMonitor, rssOf } = require('../../../src/supervisor/memory')

function setup (samples, limit = 100) {
  const proc = { pid: 4242, state: 'ready', exitInfo: null }
  const instance = { inst: 0, proc, processes: () => [proc] }
  const reloads = []
  const group = { app: { name: 'api', max_memory_restart: limit }, instances: [instance], reloadInstance: (i, why) => reloads.push([i.inst, why]) }
  const records = []
  const logger = pino({ base: null }, { write (line) { records.push(JSON.parse(line)) } })
  let i = 0
  const monitor = new MemoryMonitor({ groups: () => [group], logger, sustained: 3, sample: async () => samples[i++] })
  return { monitor, reloads, records }
}

test('reloads after 3 samples in a row above the limit, not before', async () => {
  const { monitor, reloads, records } = setup([150, 90, 150, 150, 150, 150])
  for (let k = 0; k < 4; k++) await monitor.tick()
  expect(reloads).toEqual([])
  expect(monitor.last(4242)).toBe(150)
  await monitor.tick()
  expect(reloads).toEqual([[0, 'memory']])
  expect(records[0]).toMatchObject({ event: 'memory', app: 'api', inst: 0, pid: 4242, rss: 150, limit: 100, samples: 3 })
  expect(records[0].msg).toMatch(/above max_memory_restart .* for 3 samples; reloading/)
})

test('no limit: sampled for `httpsys ls`, never reloaded', async () => {
  const { monitor, reloads } = setup([500, 500, 500, 500], 0)
  for (let k = 0; k < 4; k++) await monitor.tick()
  expect(reloads).toEqual([])
  expect(monitor.last(4242)).toBe(500)
})

test('rssOf reads a live process and gives null for one that is gone', async () => {
  const rss = await rssOf({ pid: process.pid, exitInfo: null, askStats: async () => process.memoryUsage() })
  expect(rss).toBeGreaterThan(10 * 1024 * 1024)
  expect(await rssOf({ pid: undefined, exitInfo: null })).toBeNull()
})
