'use strict'

// `httpsys service run` against the fake addon's SCM host: what the process reports to
// the service control manager, and that the SCM's stop becomes the supervisor's
// graceful stop. The supervisor is a stand-in here (its stop ladder has tests of its
// own); under Wine the real one runs as a service (test/windows/service-tests.js).

const { EventEmitter } = require('node:events')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { runService } = require('../../../src/service/run')
const { createScm } = require('../../../src/service/scm')
const { createFakeAddon } = require('../../helpers/fake-addon')
const { cli } = require('./helpers')

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-run-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const config = { apps: [{ name: 'web', kill_timeout: 4000 }] }

class FakeSupervisor extends EventEmitter {
  constructor () {
    super()
    this.stops = 0
  }

  stop () {
    this.stops++
    setImmediate(() => this.emit('stopped'))
  }
}

function setup ({ startSupervisor, loadConfig } = {}) {
  const addon = createFakeAddon()
  const host = createScm(() => addon).host
  const supervisor = new FakeSupervisor()
  const log = path.join(dir, 'sub', 'service.log')
  const deps = {
    host,
    logFile: log,
    loadConfig: loadConfig || (async () => config),
    startSupervisor: startSupervisor || (async () => supervisor)
  }
  const states = () => addon.scm.host.statuses.map(([state]) => state)
  const records = () => fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
  return { addon, supervisor, deps, states, records, scm: addon.scm.host }
}

const tick = () => new Promise((resolve) => setImmediate(resolve))
async function until (fn) {
  for (let i = 0; i < 200 && !fn(); i++) await tick()
  expect(fn()).toBe(true)
}

test('START_PENDING, RUNNING once the supervisor runs; the SCM\'s stop is its graceful stop; STOPPED with 0', async () => {
  const t = setup()
  const done = runService({ name: 'shop', configFile: 'C:\\shop\\httpsys.config.js' }, t.deps)
  expect(t.scm.name).toBe('shop')
  t.scm.emit('start')
  await until(() => t.states().includes('running'))
  expect(t.scm.statuses[0]).toEqual(['start_pending', { waitHint: 30000 }])
  // the stop hint is the config's stop time: kill_timeout + 12 s
  expect(t.scm.statuses[1]).toEqual(['running', { accept: ['stop', 'preshutdown', 'shutdown'], stopWaitHint: 16000 }])
  t.scm.emit('control', 1)
  t.scm.emit('control', 1)
  await until(() => t.states().includes('stopped'))
  t.scm.emit('exit', 0)
  expect(await done).toBe(0)
  expect(t.supervisor.stops).toBe(1)
  expect(t.states()).toEqual(['start_pending', 'running', 'stop_pending', 'stopped'])
  expect(t.scm.statuses[3]).toEqual(['stopped', { win32ExitCode: 0 }])
  const events = t.records().map((r) => r.event)
  expect(events).toEqual(['service:start', 'service:stop', 'service:stopped'])
})

test('every app ended with a failure: STOPPED as a service-specific error, so the recovery actions restart it', async () => {
  const t = setup()
  const done = runService({ name: 'shop', configFile: 'x' }, t.deps)
  t.scm.emit('start')
  await until(() => t.states().includes('running'))
  t.supervisor.emit('settled', { code: 1 })
  await until(() => t.states().includes('stopped'))
  t.scm.emit('exit', 0)
  expect(await done).toBe(1)
  expect(t.scm.statuses.at(-1)).toEqual(['stopped', { win32ExitCode: 1066, serviceExitCode: 1 }])
})

test('a config that does not load: STOPPED with an error, the reason in the log', async () => {
  const t = setup({ loadConfig: async () => { const e = new Error('No config file at C:\\x'); e.code = 'ERR_HTTPSYS_CONFIG_NOT_FOUND'; throw e } })
  const done = runService({ name: 'shop', configFile: 'x' }, t.deps)
  t.scm.emit('start')
  await until(() => t.states().includes('stopped'))
  t.scm.emit('exit', 0)
  expect(await done).toBe(1)
  expect(t.states()).toEqual(['start_pending', 'stopped'])
  expect(t.records().find((r) => r.event === 'service:failed').msg).toMatch(/could not start: No config file at C:\\x \(ERR_HTTPSYS_CONFIG_NOT_FOUND\)/)
})

test('not started by the SCM: ERR_HTTPSYS_SERVICE_NOT_SCM before anything starts', async () => {
  const t = setup({ startSupervisor: async () => { throw new Error('must not start') } })
  const done = runService({ name: 'shop', configFile: 'x' }, t.deps)
  t.scm.emit('exit', 1063)
  await expect(done).rejects.toMatchObject({ code: 'ERR_HTTPSYS_SERVICE_NOT_SCM', message: expect.stringContaining('httpsys start -c <config>') })
  expect(t.states()).toEqual([])
})

test('the CLI: `service run` off Windows is a usage error; on "Windows" it runs to the exit code', async () => {
  expect(await cli({ platform: 'linux' }, 'service', 'run', '--name', 'shop')).toMatchObject({ code: 2, err: expect.stringContaining('systemd and launchd run `httpsys start -c <config>`') })
  const addon = createFakeAddon()
  const supervisor = new FakeSupervisor()
  const running = cli({
    platform: 'win32',
    loadAddon: () => addon,
    service: { noExit: true, cwd: dir, env: { ProgramData: dir }, run: { logFile: path.join(dir, 'cli.log'), loadConfig: async () => config, startSupervisor: async () => supervisor } }
  }, 'service', 'run', '--name', 'shop', '-c', 'C:\\shop\\httpsys.config.js')
  await until(() => addon.scm.host.onEvent !== null)
  addon.scm.host.emit('start')
  await until(() => addon.scm.host.statuses.some(([s]) => s === 'running'))
  addon.scm.host.emit('control', 5)
  await until(() => addon.scm.host.statuses.some(([s]) => s === 'stopped'))
  addon.scm.host.emit('exit', 0)
  expect((await running).code).toBe(0)
  expect(fs.readFileSync(path.join(dir, 'cli.log'), 'utf8')).toMatch(/"why":"Windows is shutting down"/)
})
