'use strict'

// Crashes as a user of `httpsys start` sees them: an app that crashes after some
// requests is restarted and no request fails; an app that cannot start backs off with
// growing delays and, after 3 attempts, ends errored with its cause in one line while
// the other app keeps serving; when every app is errored the supervisor exits non-zero.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, loadLoop, writeConfig, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-crash-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })
const crashing = { name: 'bad', script: path.join(APPS, 'crash-start.js'), max_restarts: 4, restart_window: '1m', backoff: { initial: '100ms', factor: 2, jitter: 0 } }

test('a crash loop ends errored with one record and growing delays; the other apps keep serving', async () => {
  const port = await freePort()
  run = start(['-c', writeConfig(dir, {
    apps: [
      { name: 'good', script: path.join(APPS, 'pid-server.js'), urls: [`http://127.0.0.1:${port}/good/`] },
      { name: 'flaky', script: path.join(APPS, 'crash-after.js'), urls: [`http://127.0.0.1:${port}/flaky/`], env: { CRASH_AFTER: '5' }, min_uptime: '100ms' },
      { ...crashing, urls: [`http://127.0.0.1:${port}/bad/`] }
    ]
  })], { env: env() })
  await run.waitFor((r) => r.event === 'ready' && r.app === 'good')

  // crashes after every 5th answer; the requests sent meanwhile wait for the next process
  const flaky = await loadLoop(port, { path: '/flaky/', concurrency: 2, max: 23 })
  expect(flaky.failed).toEqual([])
  expect(run.records.filter((r) => r.event === 'exit' && r.app === 'flaky').length).toBeGreaterThanOrEqual(3)

  // never ready: after 3 attempts, one record with the cause (a first-run mistake)
  const errored = await run.waitFor((r) => r.event === 'errored', { timeout: 15000 })
  expect(errored).toMatchObject({ level: 50, app: 'bad', inst: 0, code: 1, signal: null, firstStart: true, attempts: 3, cause: 'boom: cannot start (missing DATABASE_URL)' })
  expect(errored.msg).toMatch(/^did not start \(3 attempts\): boom: cannot start \(missing DATABASE_URL\); not restarting, fix it, then `httpsys restart bad`$/)
  expect(run.records.filter((r) => r.event === 'errored')).toHaveLength(1)
  const delays = run.records.filter((r) => r.event === 'backoff' && r.app === 'bad').map((r) => r.delay)
  expect(delays).toEqual([100, 200])
  // the app's own last words are in the records, next to the exits
  expect(run.records.filter((r) => r.app === 'bad' && r.stream === 'stderr' && /^boom/.test(r.msg))).toHaveLength(3)

  const res = await get(port, '/good/')
  expect(res.status).toBe(200)
  // nobody serves /bad/ any more, and nothing will without a command: its requests get
  // 503 with Retry-After at once instead of waiting out the queue timeout (2 minutes)
  const started = Date.now()
  const bad = await get(port, '/bad/x')
  expect(bad.status).toBe(503)
  expect(bad.headers['retry-after']).toBe('1')
  expect(bad.body).toMatch(/application is not running/)
  expect(Date.now() - started).toBeLessThan(2000)
  expect(run.records.find((r) => r.event === 'unavailable')).toMatchObject({ level: 40, app: 'bad' })
  expect(run.child.exitCode).toBeNull()
  run.signal('SIGINT')
  expect((await run.exited).code).toBe(0)
})

test('when every app is errored, the foreground supervisor exits 1, and says so instead of promising 503 answers', async () => {
  run = start(['-c', writeConfig(dir, { apps: [crashing] })], { env: env() })
  expect(await run.exited).toEqual({ code: 1, signal: null })
  expect(run.records.find((r) => r.event === 'errored').msg).toMatch(/; not restarting, nothing else runs here, so httpsys exits \(code 1\): fix it, then start httpsys again$/)
  expect(run.records.some((r) => r.event === 'unavailable')).toBe(false)
  expect(run.records.find((r) => r.event === 'settled')).toMatchObject({ level: 50, code: 1, errored: ['bad'] })
  expect(run.records.findIndex((r) => r.event === 'stopped')).toBeGreaterThan(run.records.findIndex((r) => r.event === 'settled'))
})

test('an app stopped by command answers 503 at once until `httpsys restart` brings it back', async () => {
  const port = await freePort()
  const config = writeConfig(dir, {
    apps: [
      { name: 'web', script: path.join(APPS, 'pid-server.js'), urls: [`http://127.0.0.1:${port}/`] },
      { name: 'api', script: path.join(APPS, 'pid-server.js'), urls: [`http://127.0.0.1:${port}/api/`] }
    ]
  })
  run = start(['-c', config], { env: env() })
  await run.waitFor((r) => r.event === 'ready', { count: 2 })
  expect((await cli(['stop', 'api', '-c', config], { env: env() })).code).toBe(0)
  const started = Date.now()
  const stopped = await get(port, '/api/x')
  expect(stopped.status).toBe(503)
  expect(stopped.headers['retry-after']).toBe('1')
  expect(Date.now() - started).toBeLessThan(2000)
  expect((await get(port, '/')).status).toBe(200) // the other app serves on
  expect((await cli(['restart', 'api', '-c', config], { env: env() })).code).toBe(0)
  await run.waitFor((r) => r.event === 'ready' && r.app === 'api', { count: 2 })
  const back = await get(port, '/api/y')
  expect(back.status).toBe(200)
  expect(JSON.parse(back.body).app).toBe('api')
})
