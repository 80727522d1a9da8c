'use strict'

// Logs: 100k lines printed in odd-sized writes arrive as 100k records, none lost, none
// split, in order, on stdout and in the rotated log files; an app's own pino lines are
// merged, not wrapped; `httpsys logs` from another terminal shows an app's records.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, writeConfig, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-logs-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

const LINES = 100000
const expected = () => {
  const out = []
  for (let i = 1; i <= LINES; i++) out.push(`line ${String(i).padStart(6, '0')} \u00e9\u00e9 ${'x'.repeat(i % 50)}`)
  out.push('partial last line')
  return out
}

test('100k lines: every one whole and in order, on stdout and across rotated files; pino lines merged; logs from another terminal', async () => {
  const port = await freePort()
  const logs = path.join(dir, 'logs')
  const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  const config = writeConfig(dir, {
    apps: [
      { name: 'flood', script: path.join(APPS, 'flood.js'), restart: 'never', log_dir: logs, log_max_size: '2M', log_keep: 50 },
      { name: 'orders', script: path.join(APPS, 'pino-app.js'), urls: [`http://127.0.0.1:${port}/`], log_dir: logs }
    ]
  })
  run = start(['-c', config], { env })
  await run.waitFor((r) => r.event === 'exit' && r.app === 'flood', { timeout: 30000 })
  await run.waitFor((r) => r.event === 'ready' && r.app === 'orders')
  expect((await get(port, '/checkout')).status).toBe(200)
  await run.waitFor((r) => r.app === 'orders' && r.msg === 'request')

  const tail = await cli(['logs', 'orders', '--lines', '3', '--json', '-c', config], { env })
  expect(tail.code).toBe(0)
  const shown = tail.stdout.trim().split('\n').map((l) => JSON.parse(l))
  expect(shown).toHaveLength(3)
  expect(shown.every((r) => r.app === 'orders')).toBe(true)
  expect(shown[2]).toMatchObject({ msg: 'request', url: '/checkout', service: 'orders' })

  run.signal('SIGINT')
  expect((await run.exited).code).toBe(0)

  const want = expected()
  const onStdout = run.records.filter((r) => r.app === 'flood' && r.stream === 'stdout')
  expect(onStdout.length).toBe(want.length)
  expect(onStdout.every((r, i) => r.msg === want[i] && r.truncated === undefined)).toBe(true)
  expect(run.records.filter((r) => r.app === 'flood' && r.stream === 'stderr').map((r) => [r.msg, r.level])).toEqual([['stderr one', 50], ['stderr two', 50]])

  // the files: <name>.log plus rotated <name>.<time>-<n>.log, oldest first by name
  const files = fs.readdirSync(logs).filter((f) => f.startsWith('flood.')).sort((a, b) => (a === 'flood.log') - (b === 'flood.log') || a.localeCompare(b))
  expect(files.length).toBeGreaterThan(4)
  const fromFiles = []
  for (const f of files) {
    const text = fs.readFileSync(path.join(logs, f), 'utf8')
    expect(text.endsWith('\n')).toBe(true)
    for (const line of text.split('\n').slice(0, -1)) {
      const record = JSON.parse(line) // a split record would not parse
      expect(record.app).toBe('flood')
      if (record.stream === 'stdout') fromFiles.push(record.msg)
    }
  }
  expect(fromFiles.length).toBe(want.length)
  expect(fromFiles.every((m, i) => m === want[i])).toBe(true)
  // lifecycle records are in the app's file too
  const last = fs.readFileSync(path.join(logs, 'flood.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  expect(last.some((r) => r.event === 'exit' && r.code === 0)).toBe(true)

  // pino JSON from the app: merged with its level, time and fields, not double-encoded
  const orders = fs.readFileSync(path.join(logs, 'orders.log'), 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  expect(orders.find((r) => r.msg === 'order placed')).toMatchObject({ level: 30, order: 42, service: 'orders', app: 'orders', inst: 0, stream: 'stdout' })
  expect(orders.find((r) => r.msg === 'stock low')).toMatchObject({ level: 40, app: 'orders' })
  expect(orders.some((r) => typeof r.msg === 'string' && r.msg.startsWith('{'))).toBe(false)
}, 60000)
