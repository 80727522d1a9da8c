'use strict'

// Watch mode and a crash loop: the app gives up restarting by itself but waits for the
// next file change, which starts it again with fresh counters (nodemon's "app crashed -
// waiting for file changes", not pm2's endless restarts or a dead app).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const pino = require('pino')
const { validate } = require('../../../src/config')
const { AppGroup } = require('../../../src/supervisor/app-group')

const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')
const PRELOAD = path.join(APPS, 'fake-preload.js')

test('a crash-looping app in watch mode waits for a change, then starts again', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-group-'))
  const app = validate({
    apps: [{ name: 'dev', script: 'crash-start.js', watch: [dir], watch_delay: 100, max_restarts: 2, backoff: { initial: 20, jitter: 0 } }]
  }, { baseDir: APPS }).apps[0]
  const records = []
  const logger = pino({ base: null }, { write (line) { records.push(JSON.parse(line)) } })
  const group = new AppGroup(app, { routerEnv: { HTTPSYS_HUB: '/tmp/none.sock' }, logger, preload: PRELOAD })
  const waitFor = async (predicate, count = 1) => {
    const end = Date.now() + 8000
    while (records.filter(predicate).length < count && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 10))
    return records.filter(predicate)
  }
  try {
    await group.start()
    const [errored] = await waitFor((r) => r.event === 'errored')
    expect(errored.msg).toMatch(/waiting for a file change$/)
    expect(group.state()).toBe('errored')
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(records.filter((r) => r.event === 'spawn')).toHaveLength(2)

    fs.writeFileSync(path.join(dir, 'fix.js'), 'fixed?')
    await waitFor((r) => r.event === 'watch')
    // started again from scratch: two more tries before the next give-up
    expect(await waitFor((r) => r.event === 'errored', 2)).toHaveLength(2)
    expect(records.filter((r) => r.event === 'spawn')).toHaveLength(4)
  } finally {
    await group.kill()
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('reloading a stopped app says the app is stopped and starts nothing', async () => {
  const app = validate({ apps: [{ name: 'idle', script: 'crash-start.js' }] }, { baseDir: APPS }).apps[0]
  const records = []
  const logger = pino({ base: null }, { write (line) { records.push(JSON.parse(line)) } })
  const group = new AppGroup(app, { routerEnv: { HTTPSYS_HUB: '/tmp/none.sock' }, logger, preload: PRELOAD })
  await group.stop()
  const result = await group.reload('command')
  expect(result.ok).toBe(false)
  expect(result.reason).toBe('was not started: idle is stopped (`httpsys restart idle` starts it)')
  expect(records.filter((r) => r.event === 'spawn')).toHaveLength(0)
  expect(group.state()).toBe('stopped')
})
