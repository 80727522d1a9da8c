'use strict'

// The stop ladder as a user sees it: nothing an app started survives (children,
// grandchildren, a child that left the process group), an app hanging in its SIGTERM
// handler is killed at kill_timeout, each step is a record with its elapsed ms, and the
// stop can come from another terminal (`httpsys stop`) or a closed terminal (SIGHUP).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, alive, waitUntil, writeConfig, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-stop2-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })

test('`httpsys stop all` from another terminal: no process of any tree survives; a hung app is killed at kill_timeout', async () => {
  const port = await freePort()
  const config = writeConfig(dir, {
    apps: [
      { name: 'tree', script: path.join(APPS, 'escape-tree.js'), urls: [`http://127.0.0.1:${port}/tree/`] },
      { name: 'hang', script: path.join(APPS, 'hang-sigterm.js'), urls: [`http://127.0.0.1:${port}/`], kill_timeout: '800ms' }
    ]
  })
  run = start(['-c', config], { env: env() })
  await run.waitFor((r) => r.event === 'ready', { count: 2 })
  const pidOf = async (kind) => Number((await run.waitFor((r) => typeof r.msg === 'string' && r.msg.startsWith(kind + ' '))).msg.split(' ')[1])
  const tree = [await pidOf('child'), await pidOf('grandchild'), await pidOf('detached')]
  expect((await get(port, '/tree/')).status).toBe(200)
  const all = [...run.pids(), ...tree]
  expect(all.every(alive)).toBe(true)

  const started = Date.now()
  const stop = await cli(['stop', 'all', '-c', config], { env: env() })
  expect(stop.code).toBe(0)
  expect(stop.stdout).toMatch(/^stopped the supervisor of .*httpsys\.config\.js \(pid \d+\)\n$/)
  expect(await run.exited).toEqual({ code: 0, signal: null })
  const took = Date.now() - started
  expect(took).toBeLessThan(5000)
  if (process.env.HTTPSYS_TEST_REPORT) console.log(`stop all: ${took} ms; ladder: ${JSON.stringify(run.records.filter((r) => /^stop:/.test(r.event)).map((r) => [r.app, r.event, r.ms]))}`)
  expect(await waitUntil(() => all.every((pid) => !alive(pid)), 3000)).toBe(true)

  // the ladder, step by step with elapsed ms
  const steps = (app) => run.records.filter((r) => r.app === app && /^stop:/.test(r.event)).map((r) => r.event)
  expect(steps('hang')).toEqual(expect.arrayContaining(['stop:shutdown', 'stop:kill', 'stop:done']))
  const kill = run.records.find((r) => r.event === 'stop:kill')
  expect(kill).toMatchObject({ app: 'hang', level: 40 })
  expect(kill.ms).toBeGreaterThanOrEqual(750)
  expect(steps('tree')).not.toContain('stop:kill')
  const done = run.records.find((r) => r.event === 'stop:done' && r.app === 'tree')
  // the detached child escaped the group kill; the supervisor found it and killed it
  expect(done.survivors).toContain(tree[2])
  expect(run.records.find((r) => r.app === 'hang' && r.msg === 'SIGTERM: cleaning up, for ever')).toBeTruthy()
})

test('SIGHUP (the terminal closed) stops gracefully and removes the control files', async () => {
  const port = await freePort()
  run = start([path.join(APPS, 'pid-server.js'), '-n', 'hup', '-u', `http://127.0.0.1:${port}/`], { env: env() })
  const { pid } = await run.waitFor((r) => r.event === 'ready')
  run.signal('SIGHUP')
  expect(await run.exited).toEqual({ code: 0, signal: null })
  expect(run.records.find((r) => r.event === 'signal')).toMatchObject({ signal: 'SIGHUP' })
  expect(await waitUntil(() => !alive(pid), 2000)).toBe(true)
  // the control socket and state file are gone with it; the last-run record stays, for
  // `httpsys logs` after the stop
  expect(fs.readdirSync(path.join(dir, 'run'))).toEqual([expect.stringMatching(/^[0-9a-f]{12}\.last-run\.json$/)])
})
