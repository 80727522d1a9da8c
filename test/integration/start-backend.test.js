'use strict'

// `httpsys start --backend ...` as a user meets it: the start log says which router runs
// the apps and why, and asking for HTTP.SYS where it cannot run fails at once with the
// loader's message and no app started.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, writeConfig, ROOT } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-backend-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  run = null
  fs.rmSync(dir, { recursive: true, force: true })
})

const onWindows = process.platform === 'win32'

;(onWindows ? test.skip : test)('--backend httpsys off Windows exits 1 with ERR_HTTPSYS_NATIVE_UNAVAILABLE and starts nothing', async () => {
  const marker = path.join(dir, 'started')
  const script = path.join(dir, 'app.js')
  fs.writeFileSync(script, `require('node:fs').writeFileSync(${JSON.stringify(marker)}, String(process.pid))\nsetInterval(() => {}, 1000)\n`)
  const port = await freePort()
  const r = await cli(['start', script, '-u', `http://127.0.0.1:${port}/`, '--backend', 'httpsys', '--json'], {
    env: { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') },
    timeout: 15000
  })
  expect(r.code).toBe(1)
  expect(r.stderr).toMatch(/^httpsys: The HTTP\.SYS addon cannot be loaded \(HTTP\.SYS exists only on Windows, this is linux\)\. .*--backend hub.*\(ERR_HTTPSYS_NATIVE_UNAVAILABLE\)\n$/)
  expect(r.stdout).not.toMatch(/"event":"spawn"/)
  expect(fs.existsSync(marker)).toBe(false)
})

test('a bad --backend value is a usage error listing the choices', async () => {
  const r = await cli(['start', 'examples/hello/app.js', '--backend', 'iis'], { env: { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }, timeout: 15000 })
  expect(r.code).toBe(2)
  expect(r.stderr).toMatch(/argument 'iis' is invalid\. Allowed choices are auto, httpsys, hub\./)
})

;(onWindows ? test.skip : test)('the start log names the router and why: auto on Linux, then the config file\'s choice', async () => {
  const port = await freePort()
  run = start(['examples/hello/app.js'], { env: { PORT: String(port), HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') } })
  const backend = await run.waitFor((r) => r.event === 'backend')
  // (the hub backend is the native router)
  expect(backend).toMatchObject({ backend: 'hub', reason: 'not Windows', msg: 'router: the native router (not Windows)' })
  await run.waitFor((r) => r.event === 'ready')
  // one record names the router: the native one's start says its pid only
  expect(run.records.filter((r) => /^router: /.test(r.msg))).toHaveLength(1)
  expect((await get(port, '/')).body).toBe('hello world\n')
  // the first record of the run: nothing starts before the router is chosen
  expect(run.records.findIndex((r) => r.event === 'backend')).toBeLessThan(run.records.findIndex((r) => r.event === 'spawn'))
  run.signal('SIGINT')
  expect(await run.exited).toEqual({ code: 0, signal: null })
  await run.cleanup()

  const file = writeConfig(dir, {
    backend: 'hub',
    apps: [{ name: 'hello', script: path.join(ROOT, 'examples', 'hello', 'app.js'), urls: [`http://127.0.0.1:${port}/`] }]
  })
  run = start(['-c', file], { env: { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') } })
  expect(await run.waitFor((r) => r.event === 'backend')).toMatchObject({ backend: 'hub', reason: 'backend: "hub" in the config' })
  await run.waitFor((r) => r.event === 'ready')
  expect((await get(port, '/')).status).toBe(200)
})
