'use strict'

// Supervisor with a stand-in hub and preload: the order users rely on (every queue
// exists before any app starts; a port in use fails the start with nothing running),
// readiness from the hub's attach, and stop (workers first, then the hub, once).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { EventEmitter } = require('node:events')
const pino = require('pino')
const { validate } = require('../../../src/config')
const { codes } = require('../../../src/errors')
const { Supervisor, workerSocketPath } = require('../../../src/supervisor/supervisor')
const { workerAttachEnv, configLimits } = require('../../../src/supervisor/router-config')
const { routerBin } = require('../../helpers/native-router')
const { waitForRecords } = require('../../helpers/records')

const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')
const ATTACH_APP = path.join(__dirname, 'fixtures', 'attach-app.js')
const PRELOAD = path.join(APPS, 'fake-preload.js')

let calls
// a router as the supervisor injects one (options.Router, constructed as NativeRouter is)
class FakeRouter extends EventEmitter {
  constructor (options) {
    super()
    this.options = options
    this.socketPath = options.socketPath
    this.tokens = new Map()
    this.queueUrls = new Map()
    calls.push(['new', options.socketPath])
    FakeRouter.last = this
  }

  get backend () { return 'hub' }

  get tracksWorkers () { return true }

  async start () { calls.push(['start']) }

  async createQueue (name, { urls }) {
    if (FakeRouter.fail && FakeRouter.fail.name === name) throw FakeRouter.fail.error
    if (FakeRouter.dies && FakeRouter.dies.name === name) this.emit('error', FakeRouter.dies.error)
    calls.push(['createQueue', name, urls])
    this.tokens.set(name, 'token')
    this.queueUrls.set(name, urls.slice())
    return { name, urls: urls.slice(), ports: [] }
  }

  unroute () {}
  setAvailable () {}
  async deleteQueue () {}
  stats () { return null }
  connections () { return null }
  workerEnv (app) { return workerAttachEnv(this, app) }

  async close () { calls.push(['close']) }
}

const running = []
beforeEach(() => {
  calls = []
  FakeRouter.fail = null
  FakeRouter.dies = null
})
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.kill()))
})

function makeSupervisor (apps, { backendChoice, untilStopped } = {}) {
  const config = validate({ apps }, { baseDir: APPS })
  const records = []
  const logger = pino({ level: 'info', base: null }, { write (line) { records.push(JSON.parse(line)) } })
  const supervisor = new Supervisor(config, { logger, Router: FakeRouter, preload: PRELOAD, socketPath: '/tmp/httpsys-test.sock', backendChoice, untilStopped })
  running.push(supervisor)
  return { supervisor, records }
}

const waitFor = (records, predicate, timeout) => waitForRecords(records, predicate, { timeout })

test('creates every queue before it spawns any worker, instances per app', async () => {
  const { supervisor, records } = makeSupervisor([
    { name: 'api', script: 'graceful.js', urls: ['http://+:8080/api/'], instances: 2 },
    { name: 'web', script: 'graceful.js' }
  ])
  await supervisor.start()
  expect(calls).toEqual([
    ['new', '/tmp/httpsys-test.sock'],
    ['start'],
    ['createQueue', 'api', ['http://+:8080/api/']],
    ['createQueue', 'web', []]
  ])
  const spawns = await waitFor(records, (r) => r.event === 'spawn')
  expect(spawns.map((r) => `${r.app}#${r.inst}`)).toEqual(['api#0', 'api#1', 'web#0'])
  expect(supervisor.list().map((w) => w.state)).toEqual(['starting', 'starting', 'starting'])
})

test('a queue that cannot be created fails the start; nothing is spawned and the hub is closed', async () => {
  FakeRouter.fail = { name: 'web', error: new codes.ERR_HTTPSYS_PORT_IN_USE({ port: 8080 }) }
  const { supervisor, records } = makeSupervisor([
    { name: 'api', script: 'graceful.js' },
    { name: 'web', script: 'graceful.js' }
  ])
  await expect(supervisor.start()).rejects.toMatchObject({ code: 'ERR_HTTPSYS_PORT_IN_USE', port: 8080 })
  expect(calls[calls.length - 1]).toEqual(['close'])
  expect(records.filter((r) => r.event === 'spawn')).toEqual([])
  expect(supervisor.list()).toEqual([])
})

test('a router that fails while the apps start: start() rejects with why, and stops what it started (no unhandled error)', async () => {
  FakeRouter.dies = { name: 'web', error: new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: 'the router process exited (code 2)' }) }
  const { supervisor, records } = makeSupervisor([
    { name: 'api', script: 'graceful.js' },
    { name: 'web', script: 'graceful.js' }
  ])
  await expect(supervisor.start()).rejects.toMatchObject({ code: 'ERR_HTTPSYS_ROUTER_FAILED' })
  expect(records.find((r) => r.level === 60)).toMatchObject({ msg: expect.stringMatching(/^the router failed: /) })
  expect(records.some((r) => r.event === 'stopped')).toBe(true)
  expect(calls[calls.length - 1]).toEqual(['close'])
  for (const w of supervisor.list()) expect(['stopped', 'exited', 'errored']).toContain(w.state)
})

test('the hub reporting an attach makes that worker ready, with the time it took', async () => {
  const { supervisor, records } = makeSupervisor([{ name: 'api', script: 'graceful.js', instances: 2 }])
  await supervisor.start()
  const ready = new Promise((resolve) => supervisor.once('ready', resolve))
  const [, second] = supervisor.list()
  FakeRouter.last.emit('attach', { queue: 'api', pid: second.pid, workerId: 7 })
  FakeRouter.last.emit('attach', { queue: 'api', pid: 999999999, workerId: 8 }) // not ours: ignored
  expect(await ready).toEqual({ app: 'api', inst: 1, pid: second.pid })
  const [record] = records.filter((r) => r.event === 'ready')
  expect(record).toMatchObject({ app: 'api', inst: 1, pid: second.pid, ms: expect.any(Number) })
  expect(supervisor.list().map((w) => w.state)).toEqual(['starting', 'ready'])
})

test('the start log names the router and why; workers are sent to the hub whatever the shell says', async () => {
  const saved = process.env.HTTPSYS_BACKEND
  process.env.HTTPSYS_BACKEND = 'httpsys'
  try {
    const { supervisor, records } = makeSupervisor([{ name: 'api', script: 'graceful.js' }])
    await supervisor.start()
    const [backend] = records.filter((r) => r.event === 'backend')
    if (process.platform !== 'win32') {
      expect(backend).toMatchObject({ level: 30, backend: 'hub', reason: 'not Windows', msg: 'router: the native router (not Windows)' })
    } else {
      expect(backend).toMatchObject({ backend: expect.stringMatching(/^(hub|httpsys)$/), reason: expect.any(String) })
    }
    expect(records.indexOf(backend)).toBeLessThan(records.findIndex((r) => r.event === 'app'))
    expect(supervisor.instances[0].proc.env).toMatchObject({ HTTPSYS_BACKEND: 'hub', HTTPSYS_HUB: '/tmp/httpsys-test.sock', HTTPSYS_QUEUE: 'api' })
  } finally {
    if (saved === undefined) delete process.env.HTTPSYS_BACKEND
    else process.env.HTTPSYS_BACKEND = saved
  }
})

test('the config\'s limits reach the router (as the router\'s options, the same keys HTTP.SYS gets) (the same keys HTTP.SYS gets)', async () => {
  const config = validate({
    apps: [{ name: 'api', script: 'graceful.js' }],
    limits: { queue_length: 50, max_body_size: 0, header_timeout: '7s', idle_timeout: '2s', body_timeout: '30s', queue_timeout: '10s', max_connections: 100 }
  }, { baseDir: APPS })
  const supervisor = new Supervisor(config, { logger: pino({ level: 'silent' }), Router: FakeRouter, preload: PRELOAD, socketPath: '/tmp/httpsys-test.sock' })
  running.push(supervisor)
  await supervisor.start()
  expect(configLimits(FakeRouter.last.options.limits)).toMatchObject({
    queueLength: 50,
    maxBodySize: Infinity,
    headersTimeout: 7000,
    keepAliveTimeout: 2000,
    bodyTimeout: 30000,
    drainTimeout: 30000,
    queueTimeout: 10000,
    maxConnections: 100
  })
})

test('Windows falling back to the hub is a warning with the reason and the fix, never silent', async () => {
  const loadNative = () => { throw new Error('C:\\app\\prebuilds\\win32-x64\\httpsys_native.node: not found') }
  const { supervisor, records } = makeSupervisor([{ name: 'api', script: 'graceful.js', urls: ['http://+:8080/'] }], { backendChoice: { platform: 'win32', loadNative } })
  await supervisor.start()
  const [backend] = records.filter((r) => r.event === 'backend')
  expect(backend).toMatchObject({ level: 40, backend: 'hub', reason: 'the HTTP.SYS addon did not load', detail: expect.stringContaining('not found') })
  expect(backend.msg).toMatch(/^router: the native router \(the HTTP.SYS addon did not load\); to run on HTTP.SYS: reinstall httpsys-cli/)
})

test('the preload\'s ready message makes a worker ready when the hub reports nothing; both together are one ready', async () => {
  const { supervisor, records } = makeSupervisor([{ name: 'api', script: ATTACH_APP, instances: 2, env: { ATTACH_DELAY: '100' } }])
  const readyEvents = []
  supervisor.on('ready', (e) => readyEvents.push(e))
  await supervisor.start()
  const [first, second] = supervisor.list()
  // the hub sees #1 attach before its preload says so: still one ready
  FakeRouter.last.emit('attach', { queue: 'api', pid: second.pid, workerId: 1 })
  await waitFor(records, (r) => r.event === 'ready' && r.inst === 0)
  await new Promise((resolve) => setTimeout(resolve, 150))
  const ready = records.filter((r) => r.event === 'ready')
  expect(ready.map((r) => [r.inst, r.pid, r.via])).toEqual([[1, second.pid, 'attach'], [0, first.pid, 'preload']])
  expect(readyEvents).toHaveLength(2)
  expect(supervisor.list().map((w) => w.state)).toEqual(['ready', 'ready'])
})

test('stop ends every worker, then closes the hub; stopping twice is one stop', async () => {
  const { supervisor, records } = makeSupervisor([
    { name: 'api', script: 'graceful.js', instances: 2 },
    { name: 'web', script: 'graceful.js' }
  ])
  await supervisor.start()
  await waitFor(records, (r) => r.event === 'spawn')
  const stopped = jest.fn()
  supervisor.on('stopped', stopped)
  const first = supervisor.stop()
  expect(supervisor.stop()).toBe(first)
  await first
  const exits = records.filter((r) => r.event === 'exit')
  expect(exits).toHaveLength(3)
  expect(exits.every((r) => r.code === 0)).toBe(true)
  expect(calls.filter((c) => c[0] === 'close')).toHaveLength(1)
  // the hub closes only after the last worker is gone
  expect(records.findIndex((r) => r.event === 'stopped')).toBeGreaterThan(records.findLastIndex((r) => r.event === 'exit'))
  expect(stopped).toHaveBeenCalledTimes(1)
  await supervisor.stop()
  expect(records.filter((r) => r.event === 'restart')).toEqual([])
})

test('a crash-looping app ends errored while the other keeps running; all errored settles with code 1', async () => {
  const { supervisor, records } = makeSupervisor([
    { name: 'good', script: 'ready-app.js', wait_ready: true },
    { name: 'bad', script: 'crash-start.js', max_restarts: 2, backoff: { initial: 20, jitter: 0 } }
  ])
  const settled = jest.fn()
  supervisor.on('settled', settled)
  await supervisor.start()
  await waitFor(records, (r) => r.event === 'errored' && r.app === 'bad')
  await waitFor(records, (r) => r.event === 'ready' && r.app === 'good')
  const status = await supervisor.status()
  expect(status.apps.map((a) => [a.name, a.state])).toEqual([['good', 'ready'], ['bad', 'errored']])
  expect(status.apps[0].instances[0]).toMatchObject({ app: 'good', inst: 0, state: 'ready', pid: expect.any(Number), restarts: 0 })
  expect(status.apps[0].instances[0].memory).toBeGreaterThan(0)
  expect(status.apps[1].instances[0]).toMatchObject({ state: 'errored', pid: null, restarts: 1, lastExit: { code: 1, signal: null } })
  expect(settled).not.toHaveBeenCalled()

  const only = makeSupervisor([{ name: 'bad', script: 'crash-start.js', max_restarts: 2, backoff: { initial: 20, jitter: 0 } }])
  const code = new Promise((resolve) => only.supervisor.once('settled', resolve))
  await only.supervisor.start()
  expect(await code).toEqual({ code: 1 })
  expect(await waitFor(only.records, (r) => r.event === 'settled')).toMatchObject([{ level: 50, errored: ['bad'] }])
})

test('in the background or as a service (untilStopped) an errored app leaves the supervisor up; in the foreground it says httpsys exits', async () => {
  const crashing = [{ name: 'bad', script: 'crash-start.js', max_restarts: 2, backoff: { initial: 20, jitter: 0 } }]
  const bg = makeSupervisor(crashing, { untilStopped: true })
  const settled = jest.fn()
  bg.supervisor.on('settled', settled)
  await bg.supervisor.start()
  const [errored] = await waitFor(bg.records, (r) => r.event === 'errored')
  expect(errored.msg).toMatch(/; not restarting, fix it, then `httpsys restart bad`$/)
  const [idle] = await waitFor(bg.records, (r) => r.event === 'idle')
  expect(idle).toMatchObject({ level: 40, errored: ['bad'], msg: expect.stringMatching(/httpsys stays up/) })
  expect(bg.records.find((r) => r.event === 'unavailable').msg).toMatch(/its requests get 503/)
  expect(settled).not.toHaveBeenCalled()
  expect((await bg.supervisor.status()).apps.map((a) => [a.name, a.state])).toEqual([['bad', 'errored']])

  const fg = makeSupervisor(crashing)
  const code = new Promise((resolve) => fg.supervisor.once('settled', resolve))
  await fg.supervisor.start()
  expect(await code).toEqual({ code: 1 })
  const [last] = await waitFor(fg.records, (r) => r.event === 'errored')
  expect(last.msg).toMatch(/; not restarting, nothing else runs here, so httpsys exits \(code 1\): fix it, then start httpsys again$/)
  // the port closes with it: no promise of 503 answers
  expect(fg.records.some((r) => r.event === 'unavailable')).toBe(false)
})

test('reload is rolling, and reloads asked for during one become a single follow-up', async () => {
  const { supervisor, records } = makeSupervisor([{ name: 'api', script: 'ready-app.js', wait_ready: true, instances: 2, env: { READY_DELAY: '50' } }])
  await supervisor.start()
  // both serving: a reload replaces a process that is not ready yet without waiting
  await waitFor(records, (r) => r.event === 'ready' && r.inst === 0)
  await waitFor(records, (r) => r.event === 'ready' && r.inst === 1)
  const first = supervisor.reload('api')
  const second = supervisor.reload('api')
  const third = supervisor.reload('all')
  const results = await Promise.all([first, second, third])
  expect(results[0]).toEqual([{ app: 'api', ok: true, action: 'reloaded', changes: [], ms: expect.any(Number), pids: [expect.any(Number), expect.any(Number)] }])
  expect(results[1]).toEqual(results[2])
  expect(records.filter((r) => r.event === 'reload:start')).toHaveLength(2)
  expect(records.filter((r) => r.event === 'reload:done')).toHaveLength(2)
  expect(records.filter((r) => r.event === 'reload:queued')).toHaveLength(1)
  // one instance at a time: #1's replacement starts only after #0's old process is gone
  const order = records.filter((r) => ['spawn', 'exit'].includes(r.event)).map((r) => `${r.event}#${r.inst}`)
  expect(order.slice(2, 6)).toEqual(['spawn#0', 'exit#0', 'spawn#1', 'exit#1'])
  await expect(supervisor.reload('nope')).rejects.toMatchObject({ code: 'ERR_HTTPSYS_APP_NOT_FOUND' })
})

test('stopping one app keeps the others; restart brings it back with fresh counters', async () => {
  const { supervisor, records } = makeSupervisor([
    { name: 'api', script: 'graceful.js' },
    { name: 'web', script: 'graceful.js' }
  ])
  await supervisor.start()
  await waitFor(records, (r) => r.event === 'spawn' && r.app === 'web')
  expect(await supervisor.stopApps('api')).toEqual([{ app: 'api', ok: true, state: 'stopped' }])
  expect(supervisor.list().map((w) => w.state)).toEqual(['stopped', 'starting'])
  await supervisor.restart('api')
  expect(supervisor.list()[0]).toMatchObject({ state: 'starting', pid: expect.any(Number) })
  expect(records.filter((r) => r.event === 'spawn' && r.app === 'api')).toHaveLength(2)
})

test('the router\'s worker socket is per run, in the user\'s private runtime directory; the socket is 0600', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-hubsock-'))
  try {
    const runtime = path.join(dir, 'run')
    const p = workerSocketPath(4242, runtime)
    if (process.platform === 'win32') {
      expect(p).toMatch(/^\\\\\.\\pipe\\httpsys-.+-4242$/)
      return
    }
    expect(p).toBe(path.join(runtime, 'hub-4242.sock'))
    expect(fs.statSync(runtime).mode & 0o777).toBe(0o700)
    const { NativeRouter } = require('../../../src/supervisor/native-router')
    const router = new NativeRouter({ socketPath: p, logger: pino({ level: 'silent' }), binary: routerBin() })
    await router.start()
    try {
      expect(fs.statSync(p).mode & 0o777).toBe(0o600)
    } finally {
      await router.close()
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
