'use strict'

// Stopping an instance leaves nothing behind: not its children, not their children, not
// a child that left the process group (detached).

const path = require('node:path')
const pino = require('pino')
const { validate } = require('../../../src/config')
const { WorkerProcess } = require('../../../src/supervisor/worker-process')
const tree = require('../../../src/supervisor/process-tree')

const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')
const PRELOAD = path.join(APPS, 'fake-preload.js')
const posix = process.platform === 'win32' ? test.skip : test

posix('the stop ladder kills the whole tree, including a detached child; each step is a record', async () => {
  const app = validate({ apps: [{ name: 'tree', script: 'escape-tree.js', kill_timeout: 2000 }] }, { baseDir: APPS }).apps[0]
  const records = []
  const logger = pino({ level: 'debug', base: null }, { write (line) { records.push(JSON.parse(line)) } })
  const proc = new WorkerProcess(app, 0, { argv: ['--require', PRELOAD, app.script], env: { ...process.env }, logger })
  proc.spawn()
  const pids = {}
  const end = Date.now() + 5000
  while (Object.keys(pids).length < 3 && Date.now() < end) {
    for (const r of records) {
      const m = /^(child|grandchild|detached) (\d+)$/.exec(r.msg || '')
      if (m) pids[m[1]] = Number(m[2])
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  expect(Object.keys(pids).sort()).toEqual(['child', 'detached', 'grandchild'])
  const ids = Object.values(pids).map((pid) => ({ pid, start: null }))
  expect(tree.survivors(ids)).toHaveLength(3)
  const found = (await tree.snapshot(proc.pid)).map((p) => p.pid)
  expect(found).toEqual(expect.arrayContaining(Object.values(pids)))

  await proc.stop()
  const done = records.find((r) => r.event === 'stop:done')
  expect(done).toMatchObject({ app: 'tree', pid: proc.pid, ms: expect.any(Number) })
  // the detached one escaped the group kill: found by the snapshot, killed, reported
  expect(done.survivors).toContain(pids.detached)
  const deadline = Date.now() + 2000
  while (tree.survivors(ids).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  expect(tree.survivors(ids)).toEqual([])
  expect(tree.groupAlive(proc.pid)).toBe(false)
  expect(records.find((r) => r.event === 'stop:shutdown')).toMatchObject({ via: 'ipc', ms: expect.any(Number) })
})

test('a pid reused by another process is not taken for the one we saw', () => {
  expect(tree.survivors([{ pid: process.pid, start: 'not-our-start-time' }])).toEqual(process.platform === 'linux' ? [] : [{ pid: process.pid, start: 'not-our-start-time' }])
})
