'use strict'

// The supervisor as the HTTP.SYS controller, over the fake addon (test/helpers/
// fake-addon.js): one named queue per app holding its prefixes before any worker
// starts, workers told where their queue is (and nothing about a hub), readiness from
// the preload's message, and HTTP.SYS failures as the coded errors a user reads.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const pino = require('pino')
const { validate } = require('../../../src/config')
const { Supervisor } = require('../../../src/supervisor/supervisor')
const { HttpsysRouter } = require('../../../src/supervisor/httpsys-router')
const { createBackend } = require('../../../src/queue/httpsys')
const { createFakeAddon } = require('../../helpers/fake-addon')
const { waitForRecords } = require('../../helpers/records')

const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')
const FIXTURES = path.join(__dirname, 'fixtures')
const PRELOAD = path.join(APPS, 'fake-preload.js')

const running = []
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.kill()))
})

const configOf = (apps, backend = 'httpsys') =>
  validate({ backend, apps: apps.map((a) => ({ script: path.join(FIXTURES, 'attach-app.js'), kill_timeout: 2000, ...a })) }, { baseDir: APPS })

function makeSupervisor (apps, { backend = 'httpsys', binding = createFakeAddon(), reread } = {}) {
  const config = configOf(apps, backend)
  const records = []
  const logger = pino({ level: 'debug', base: null }, { write (line) { records.push(JSON.parse(line)) } })
  const supervisor = new Supervisor(config, {
    logger,
    preload: PRELOAD,
    native: createBackend(() => binding),
    backendChoice: { platform: 'win32', loadNative: () => binding },
    reread
  })
  running.push(supervisor)
  return { supervisor, records, binding }
}

const waitFor = (records, predicate, timeout) => waitForRecords(records, predicate, { timeout })

const queueName = (app) => `httpsys-${process.pid}-${app}`

test('creates one controller queue per app with its prefixes, before any worker starts', async () => {
  const { supervisor, records, binding } = makeSupervisor([
    { name: 'api', urls: ['http://+:8080/api/', 'http://localhost:8080/v2/'], instances: 2 },
    { name: 'web', urls: 'http://+:8080/' }
  ])
  await supervisor.start()
  expect(binding.queues.map((q) => [q.options.mode, q.options.name, q.urls])).toEqual([
    ['controller', queueName('api'), ['http://+:8080/api/', 'http://localhost:8080/v2/']],
    ['controller', queueName('web'), ['http://+:8080/']]
  ])
  expect(records.find((r) => r.event === 'backend')).toMatchObject({ backend: 'httpsys', reason: 'backend: "httpsys" in the config' })
  // on Windows the supervisor put itself in a kill-on-close job object before it started anything
  expect(binding.job.calls).toBe(1)
  expect(records.findIndex((r) => r.event === 'job')).toBeLessThan(records.findIndex((r) => r.event === 'backend'))
  // HTTP.SYS does not say how many requests wait in its queue
  expect(await supervisor.status()).toMatchObject({ backend: 'httpsys', apps: [{ name: 'api', waiting: null }, { name: 'web' }] })
  // the queues existed before the first spawn record
  const spawns = await waitFor(records, (r) => r.event === 'spawn')
  expect(records.indexOf(spawns[0])).toBeGreaterThan(records.findIndex((r) => r.event === 'queue' && r.app === 'web'))
})

test('the config\'s limits reach HTTP.SYS: queue length, seconds for the timers, connections; the body limit goes to the workers', async () => {
  const binding = createFakeAddon()
  const config = validate({
    backend: 'httpsys',
    limits: { queue_length: 77, header_timeout: '9s', idle_timeout: '3s', body_timeout: '1m', queue_timeout: '30s', max_connections: 500, max_body_size: '1M' },
    apps: [{ name: 'api', script: path.join(FIXTURES, 'attach-app.js'), urls: ['http://+:8080/'], kill_timeout: 2000 }]
  }, { baseDir: APPS })
  const logger = pino({ level: 'silent' })
  const supervisor = new Supervisor(config, { logger, preload: PRELOAD, native: createBackend(() => binding), backendChoice: { platform: 'win32', loadNative: () => binding } })
  running.push(supervisor)
  await supervisor.start()
  expect(binding.queues[0].options.mode).toBe('controller')
  // what HTTP.SYS reads from the bytes the addon passes (test/helpers/fake-properties.js)
  expect(binding.queues[0].kernel).toMatchObject({
    active: true,
    queueLength: 77,
    verbosity: 'limited',
    maxConnections: 500,
    bound: true,
    timeouts: { HeaderWait: 9, IdleConnection: 3, EntityBody: 60, DrainEntityBody: 60, RequestQueue: 30, MinSendRate: 'default' }
  })
  expect(binding.violations).toEqual([])
  expect(supervisor.instances[0].proc.env.HTTPSYS_MAX_BODY_SIZE).toBe(String(1024 * 1024))
})

test('a timer of 65535 s is refused in the config: HTTP.SYS would turn the timer off, not wait 18 hours', () => {
  const config = (limits) => validate({ backend: 'httpsys', limits, apps: [{ name: 'api', script: path.join(FIXTURES, 'attach-app.js'), urls: ['http://+:8080/'] }] }, { baseDir: APPS })
  for (const key of ['header_timeout', 'idle_timeout', 'body_timeout', 'queue_timeout']) {
    expect(() => config({ [key]: '65535s' })).toThrow(new RegExp(`limits\\.${key}: must be between 1s and 65534s .*65535 would turn it off`))
    expect(config({ [key]: '65534s' }).limits[key]).toBe(65534000)
  }
})

test('under Wine (queue names ignored there) no controller queue is made: each worker registers the prefixes itself', async () => {
  const { supervisor, records, binding } = makeSupervisor([{ name: 'api', urls: ['http://+:8080/api/'] }], { binding: createFakeAddon({ wine: '8.0' }) })
  await supervisor.start()
  expect(binding.queues).toEqual([])
  expect(records.find((r) => r.level === 40 && r.event === 'httpsys').msg).toMatch(/shares no queue between processes/)
  expect(supervisor.instances[0].proc.env).toMatchObject({ HTTPSYS_QUEUE: queueName('api'), HTTPSYS_QUEUE_URLS: 'http://+:8080/api/' })
})

test('workers learn their queue and its prefixes, and nothing of a hub', async () => {
  const saved = { HTTPSYS_HUB: process.env.HTTPSYS_HUB, HTTPSYS_BACKEND: process.env.HTTPSYS_BACKEND }
  // inherited from the shell: must not reach the workers
  process.env.HTTPSYS_HUB = '/tmp/some-other-hub.sock'
  process.env.HTTPSYS_BACKEND = 'hub'
  try {
    const { supervisor } = makeSupervisor([
      { name: 'api', urls: ['http://+:8080/api/', 'http://+:8080/v2/'], instances: 2, env: { HTTPSYS_QUEUE: 'mine' } }
    ])
    await supervisor.start()
    const envs = supervisor.instances.map((i) => i.proc.env)
    expect(envs).toHaveLength(2)
    for (const [inst, env] of envs.entries()) {
      expect(env).toMatchObject({
        HTTPSYS_BACKEND: 'httpsys',
        HTTPSYS_QUEUE: queueName('api'),
        HTTPSYS_QUEUE_URLS: 'http://+:8080/api/,http://+:8080/v2/',
        HTTPSYS_APP: 'api',
        HTTPSYS_INSTANCE: String(inst),
        HTTPSYS_SUPERVISOR_PID: String(process.pid),
        PORT: '8080',
        // how long a stopping worker may let the kernel finish its responses
        HTTPSYS_KILL_TIMEOUT: '2000'
      })
      expect(env).not.toHaveProperty('HTTPSYS_HUB')
    }
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
  }
})

test('a worker with that environment opens the queue and registers nothing again', async () => {
  const { supervisor, binding } = makeSupervisor([{ name: 'api', urls: ['http://+:8080/'] }])
  await supervisor.start()
  const env = supervisor.instances[0].proc.env
  const saved = process.env.HTTPSYS_QUEUE_URLS
  process.env.HTTPSYS_QUEUE_URLS = env.HTTPSYS_QUEUE_URLS
  try {
    // what the preload does for listen(process.env.PORT) in that worker
    const worker = createBackend(() => binding)
    const attachment = await worker.attach({ queue: env.HTTPSYS_QUEUE, urls: [`http://+:${env.PORT}/`], handlers: { onRequest () {} } })
    const opened = binding.queues[binding.queues.length - 1]
    expect(opened.options).toMatchObject({ mode: 'open', name: queueName('api'), urls: [] })
    attachment.close()
  } finally {
    if (saved === undefined) delete process.env.HTTPSYS_QUEUE_URLS
    else process.env.HTTPSYS_QUEUE_URLS = saved
  }
})

test('readiness comes from the preload\'s message; wait_ready apps still wait for their own', async () => {
  const { supervisor, records } = makeSupervisor([
    { name: 'api', urls: ['http://+:8080/api/'] },
    { name: 'slow', urls: ['http://+:8080/slow/'], wait_ready: true, env: { APP_READY_DELAY: '300' } }
  ])
  await supervisor.start()
  const [api] = await waitFor(records, (r) => r.event === 'ready' && r.app === 'api')
  expect(api).toMatchObject({ via: 'preload', pid: supervisor.instances[0].pid })
  // attached, but not ready until the app says so
  await new Promise((resolve) => setTimeout(resolve, 150))
  expect(supervisor.list().map((w) => [w.app, w.state])).toEqual([['api', 'ready'], ['slow', 'starting']])
  const [slow] = await waitFor(records, (r) => r.event === 'ready' && r.app === 'slow')
  expect(slow).toMatchObject({ via: 'message', ms: expect.any(Number) })
  expect(slow.ms).toBeGreaterThanOrEqual(250)
})

test('stop ends the workers first, then closes every queue', async () => {
  const { supervisor, records, binding } = makeSupervisor([
    { name: 'api', urls: ['http://+:8080/api/'] },
    { name: 'web', urls: ['http://+:8080/'] }
  ])
  await supervisor.start()
  await waitFor(records, (r) => r.event === 'ready' && r.app === 'web')
  await waitFor(records, (r) => r.event === 'ready' && r.app === 'api')
  let closedEarly = false
  supervisor.on('exit', () => { if (binding.queues.some((q) => q.closed)) closedEarly = true })
  await supervisor.stop()
  expect(closedEarly).toBe(false)
  expect(binding.queues.map((q) => q.closed)).toEqual([true, true])
  // attached workers are drained first: the preload's ready set that up
  expect(records.filter((r) => r.event === 'stop:drain')).toHaveLength(2)
})

test('an app stopped by command has its queue turned off (HTTP.SYS answers 503 at once); a restart turns it back on', async () => {
  const { supervisor, records, binding } = makeSupervisor([
    { name: 'api', urls: ['http://+:8080/api/'] },
    { name: 'web', urls: ['http://+:8080/'] }
  ])
  await supervisor.start()
  await waitFor(records, (r) => r.event === 'ready' && r.app === 'api')
  await waitFor(records, (r) => r.event === 'ready' && r.app === 'web')
  const [api, web] = binding.queues
  // HTTP.SYS's state of each queue, read from the bytes the addon passed: the apps started,
  // so their queues serve (issue 24: an HTTP_STATE_INFO read as HTTP_ENABLED_STATE turned
  // every queue off at its first start)
  expect([api.kernel.active, web.kernel.active]).toEqual([true, true])
  await supervisor.stopApps('api')
  expect(api.kernel.active).toBe(false)
  expect(web.kernel.active).toBe(true) // the other app keeps serving
  await supervisor.restart('api')
  expect(api.kernel.active).toBe(true)
  expect(api.kernel.history.slice(-2)).toEqual(['inactive', 'active'])
  expect(binding.violations).toEqual([])
})

test('a queue HTTP.SYS would not turn off or on is a warning naming what clients get', async () => {
  const { supervisor, records, binding } = makeSupervisor([{ name: 'api', urls: ['http://+:8080/api/'] }])
  await supervisor.start()
  await waitFor(records, (r) => r.event === 'ready' && r.app === 'api')
  const [api] = binding.queues
  api.setProperty = () => 6 // ERROR_INVALID_HANDLE
  await supervisor.stopApps('api')
  const warning = records.find((r) => r.event === 'queue-state')
  expect(warning).toMatchObject({ level: 40, app: 'api', code: 6, available: false })
  expect(warning.msg).toMatch(/wait in the queue until queue_timeout/)
})

test('HTTP.SYS\'s response cache of an app is emptied when an instance starts or ends (a new build never gets the old one\'s responses)', async () => {
  const { supervisor, records, binding } = makeSupervisor([{ name: 'api', urls: ['http://+:8080/api/'] }])
  await supervisor.start()
  await waitFor(records, (r) => r.event === 'ready' && r.app === 'api')
  const [api] = binding.queues
  const before = api.callsOf('flushCache').length
  expect(before).toBeGreaterThanOrEqual(1)
  await supervisor.restart('api')
  await waitForRecords(records, (r) => r.event === 'ready' && r.app === 'api', { count: 2 })
  expect(api.callsOf('flushCache').length).toBeGreaterThanOrEqual(before + 2) // the old one's exit, the new one's ready
})

describe('a config certificate that asks clients for theirs (requestCert) on HTTP.SYS', () => {
  const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
  let dir
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-router-ca-'))
    fs.writeFileSync(path.join(dir, 'clients-ca.crt'), CA)
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  function start (tls) {
    const config = validate({
      backend: 'httpsys',
      tls,
      apps: [{ name: 'api', script: path.join(FIXTURES, 'attach-app.js'), urls: ['https://+:9443/'] }]
    }, { baseDir: dir })
    const binding = createFakeAddon()
    const supervisor = new Supervisor(config, {
      logger: pino({ level: 'silent' }),
      preload: PRELOAD,
      native: createBackend(() => binding),
      backendChoice: { platform: 'win32', loadNative: () => binding }
    })
    running.push(supervisor)
    return { supervisor, binding }
  }

  test('goes to the workers with its ca read (HTTPSYS_CLIENT_CERTS): they check what HTTP.SYS hands over', () => {
    const router = new HttpsysRouter({
      logger: pino({ level: 'silent' }),
      setup: false,
      tls: validate({
        tls: [{ port: 8443, thumbprint: 'a'.repeat(40) }, { port: 9443, host: 'API.example', thumbprint: 'b'.repeat(40), requestCert: true, ca: './clients-ca.crt' }],
        apps: [{ name: 'api', script: path.join(FIXTURES, 'attach-app.js'), urls: ['https://+:9443/'] }]
      }, { baseDir: dir }).tls
    })
    const env = router.workerEnv({ name: 'api', urls: ['https://+:9443/'] })
    expect(JSON.parse(env.HTTPSYS_CLIENT_CERTS)).toEqual([{ port: 9443, host: 'api.example', rejectUnauthorized: true, ca: [CA] }])
    expect(new HttpsysRouter({ logger: pino({ level: 'silent' }), setup: false }).workerEnv({ name: 'api', urls: [] }).HTTPSYS_CLIENT_CERTS).toBeUndefined()
  })

  test('a ca file that cannot be read fails the start naming it, before any queue exists', async () => {
    const { supervisor, binding } = start([{ port: 9443, thumbprint: 'b'.repeat(40), requestCert: true, ca: './missing.crt' }])
    const err = await supervisor.start().catch((e) => e)
    expect(err).toMatchObject({ code: 'ERR_HTTPSYS_TLS_CERT' })
    expect(err.message).toContain(path.join(dir, 'missing.crt'))
    expect(binding.queues).toEqual([])
  })
})

describe('HTTP.SYS failures fail the start with nothing spawned and the queues made so far closed', () => {
  test.each([
    [183, 'ERR_HTTPSYS_URL_CONFLICT', /The URL prefix http:\/\/\+:8080\/ is already registered/],
    [5, 'ERR_HTTPSYS_ACCESS_DENIED', /httpsys urlacl add http:\/\/\+:8080\/ --user/],
    [32, 'ERR_HTTPSYS_PORT_IN_USE', /Port 8080 is already in use/],
    [87, 'ERR_HTTPSYS_BAD_PREFIX', /HTTP\.SYS rejected it/]
  ])('Win32 %i on the second app\'s prefix -> %s', async (win32, code, message) => {
    const binding = createFakeAddon()
    const { supervisor, records } = makeSupervisor([
      { name: 'api', urls: ['http://+:8080/api/'] },
      { name: 'web', urls: ['http://+:8080/'] }
    ], { binding })
    binding.fail({ urls: { 'http://+:8080/': win32 } })
    const err = await supervisor.start().catch((e) => e)
    expect(err).toMatchObject({ code, win32, prefix: 'http://+:8080/', app: 'web' })
    expect(err.message).toMatch(message)
    expect(binding.queues.map((q) => [q.options.name, q.closed])).toEqual([[queueName('api'), true]])
    expect(records.filter((r) => r.event === 'spawn')).toEqual([])
    expect(supervisor.list()).toEqual([])
  })

  test('a queue name taken on this machine -> ERR_HTTPSYS_QUEUE_EXISTS', async () => {
    const binding = createFakeAddon()
    const { supervisor } = makeSupervisor([{ name: 'api', urls: ['http://+:8080/'] }], { binding })
    binding.fail({ create: 183 })
    await expect(supervisor.start()).rejects.toMatchObject({ code: 'ERR_HTTPSYS_QUEUE_EXISTS', queue: queueName('api'), app: 'api', win32: 183 })
  })
})

test('--backend httpsys with an app that has no urls: a config error naming the app and the fix, nothing created', async () => {
  const { supervisor, binding, records } = makeSupervisor([
    { name: 'api', urls: ['http://+:8080/api/'] },
    { name: 'web' }
  ])
  const err = await supervisor.start().catch((e) => e)
  expect(err).toMatchObject({ code: 'ERR_HTTPSYS_CONFIG_INVALID', key: 'apps[1].urls', app: 'web' })
  expect(err.message).toMatch(/app "web" has no URL prefix.*Add urls: \["http:\/\/\+:8080\/"\] to app "web", or use backend: "hub"/)
  expect(binding.queues).toEqual([])
  expect(records.filter((r) => r.event === 'spawn')).toEqual([])
})

test('reload applies a config edit to HTTP.SYS: prefixes added before the old go, instances and apps added and removed; a prefix it refuses leaves that app as it runs', async () => {
  let apps = [
    { name: 'api', urls: ['http://+:8080/api/'] },
    { name: 'old', urls: ['http://+:8080/old/'] }
  ]
  const { supervisor, records, binding } = makeSupervisor(apps, { reread: async () => configOf(apps) })
  await supervisor.start()
  await waitFor(records, (r) => r.event === 'all-ready')
  const queue = (app) => binding.queues.find((q) => q.options.mode === 'controller' && q.options.name === queueName(app))
  const old = queue('old')

  apps = [
    { name: 'api', urls: ['http://+:8080/v2/'], instances: 2, env: { MODE: 'b' } },
    { name: 'new', urls: ['http://+:8080/new/'] }
  ]
  const result = await supervisor.reload('all')
  expect(result.map((r) => [r.app, r.ok, r.action])).toEqual([['old', true, 'removed'], ['api', true, 'reloaded'], ['new', true, 'added']])
  expect(result[1].changes).toEqual(['urls + http://+:8080/v2/ - http://+:8080/api/', 'instances 1 -> 2', 'env (MODE)'])
  expect(queue('api').urls).toEqual(['http://+:8080/v2/'])
  expect(queue('new').urls).toEqual(['http://+:8080/new/'])
  // the removed app's prefixes went before its workers stopped, then its queue
  expect(old.urls).toEqual([])
  expect(old.closed).toBe(true)
  expect(supervisor.list().map((i) => `${i.app}#${i.inst} ${i.state}`)).toEqual(['api#0 ready', 'api#1 ready', 'new#0 ready'])
  // every process of api is new and started with the edit
  for (const i of supervisor.instances.filter((i) => i.app.name === 'api')) {
    expect(i.proc.env).toMatchObject({ HTTPSYS_QUEUE_URLS: 'http://+:8080/v2/', MODE: 'b' })
  }

  // a prefix another program holds: the app is left as it runs (old prefixes, old count)
  binding.fail({ urls: { 'http://+:8080/taken/': 183 } })
  apps = [{ name: 'api', urls: ['http://+:8080/taken/'], instances: 3 }, { name: 'new', urls: ['http://+:8080/new/'] }]
  const refused = await supervisor.reload('all')
  expect(refused[0]).toMatchObject({ app: 'api', ok: false, reason: expect.stringMatching(/^its new settings were not applied \(it runs as before\): /) })
  expect(refused[1]).toMatchObject({ app: 'new', ok: true, action: 'reloaded' })
  expect(queue('api').urls).toEqual(['http://+:8080/v2/'])
  expect(supervisor.findGroup('api').instances).toHaveLength(2)
  expect(supervisor.config.apps.find((a) => a.name === 'api').urls).toEqual(['http://+:8080/v2/'])
})

test('a config that fails its checks changes nothing: reload rejects with the reason, every app runs as before', async () => {
  let apps = [{ name: 'api', urls: ['http://+:8080/api/'] }]
  const { supervisor, records } = makeSupervisor(apps, { reread: async () => configOf(apps) })
  await supervisor.start()
  await waitFor(records, (r) => r.event === 'all-ready')
  const before = supervisor.list()
  apps = [{ name: 'api', urls: ['http://+:8080/api/'], instances: 2, restart: 'sometimes' }, { name: 'more', urls: ['http://+:8080/more/'] }]
  await expect(supervisor.reload('all')).rejects.toMatchObject({
    code: 'ERR_HTTPSYS_CONFIG_INVALID',
    message: expect.stringMatching(/^the config was not applied, nothing changed \(every app runs as before\): Invalid config at apps\[0\]\.restart/)
  })
  expect(supervisor.list()).toEqual(before)
  expect(before).toEqual([{ app: 'api', inst: 0, pid: expect.any(Number), state: 'ready' }])
  expect(records.some((r) => r.event === 'reload:start' || r.event === 'config')).toBe(false)
})
