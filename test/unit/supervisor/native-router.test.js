'use strict'

// The supervisor's side of the native router (src/supervisor/native-router.js,
// router-process.js) without the router: what it sends at start, and how it rebuilds
// the router's coded errors. The process itself: test/integration/start-native-router.test.js.

const path = require('node:path')
const pino = require('pino')
const { execFileSync } = require('node:child_process')
const { NativeRouter, routerLimits, wantsNativeRouter, DEFAULT_LIMITS } = require('../../../src/supervisor/native-router')
const { RouterProcess } = require('../../../src/supervisor/router-process')
const { LIMIT_DEFAULTS } = require('../../../src/config/schema')
const { routerBin } = require('../../helpers/native-router')

const quiet = pino({ level: 'silent' })

test('the config\'s limits go to the router with the hub\'s names (the output cache\'s too); no body limit is 0, not Infinity', () => {
  const l = routerLimits({ queue_length: 5, max_body_size: 0, header_timeout: 1000, idle_timeout: 2000, body_timeout: 3000, queue_timeout: 4000, max_connections: 7, cache_size: 1, cache_max_response: 1 })
  expect(l).toMatchObject({ queueLength: 5, maxBodySize: 0, headersTimeout: 1000, keepAliveTimeout: 2000, bodyTimeout: 3000, drainTimeout: 3000, queueTimeout: 4000, maxConnections: 7 })
  expect(JSON.parse(JSON.stringify(l))).toEqual(l)
  // the output cache's budget and largest response (limits.cache_size, cache_max_response)
  expect(l).toMatchObject({ cacheSize: 1, cacheMaxResponse: 1 })
  // without a config: the hub's defaults
  expect(routerLimits(null)).toMatchObject({ maxHeaderSize: 16384, maxBodySize: 104857600, queueLength: 1000, keepAliveTimeout: 5000, cacheSize: 64 * 1024 * 1024, cacheMaxResponse: 256 * 1024 })
})

test('one table of limit defaults: the router\'s own (what a start without limits uses, standalone included) are the config schema\'s, under the router\'s names', () => {
  const own = JSON.parse(execFileSync(routerBin(), ['-defaults'], { encoding: 'utf8' }))
  expect(own).toEqual(DEFAULT_LIMITS)
  // every config key is in the table, with the schema's value
  expect(DEFAULT_LIMITS).toMatchObject({
    queueLength: LIMIT_DEFAULTS.queue_length,
    maxBodySize: LIMIT_DEFAULTS.max_body_size,
    headersTimeout: LIMIT_DEFAULTS.header_timeout,
    keepAliveTimeout: LIMIT_DEFAULTS.idle_timeout,
    bodyTimeout: LIMIT_DEFAULTS.body_timeout,
    queueTimeout: LIMIT_DEFAULTS.queue_timeout,
    maxConnections: LIMIT_DEFAULTS.max_connections,
    cacheSize: LIMIT_DEFAULTS.cache_size,
    cacheMaxResponse: LIMIT_DEFAULTS.cache_max_response
  })
}, 120000)

test('the native router is the default, Windows included (issue 25); HTTPSYS_ROUTER=native is the same, hub (removed) or anything else is a clear error', () => {
  expect(wantsNativeRouter({})).toBe(true)
  expect(wantsNativeRouter({ HTTPSYS_ROUTER: '' })).toBe(true)
  expect(wantsNativeRouter({ HTTPSYS_ROUTER: 'native' })).toBe(true)
  // the JS hub was removed (issue 25): asking for it is an error that says so
  expect(() => wantsNativeRouter({ HTTPSYS_ROUTER: 'hub' })).toThrow(expect.objectContaining({
    code: 'ERR_HTTPSYS_CONFIG_INVALID', key: 'HTTPSYS_ROUTER', message: expect.stringMatching(/removed \(issue 25\)[^]*Unset HTTPSYS_ROUTER/)
  }))
  expect(() => wantsNativeRouter({ HTTPSYS_ROUTER: 'go' })).toThrow(expect.objectContaining({
    code: 'ERR_HTTPSYS_CONFIG_INVALID', key: 'HTTPSYS_ROUTER', message: expect.stringMatching(/"go" is not a router.*native/)
  }))
})

test('the config\'s certificates are checked before the router starts, as on the hub: a file that cannot be read is named, a thumbprint is refused', async () => {
  const missing = new NativeRouter({ logger: quiet, tls: [{ port: 443, cert: '/no/such/site.crt', key: '/no/such/site.key' }] })
  await expect(missing.start()).rejects.toMatchObject({ code: 'ERR_HTTPSYS_TLS_CERT', message: expect.stringContaining('/no/such/site.crt') })
  expect(missing.proc).toBe(null)
  const thumb = new NativeRouter({ logger: quiet, tls: [{ port: 443, thumbprint: 'ab'.repeat(20) }] })
  await expect(thumb.start()).rejects.toMatchObject({ code: 'ERR_HTTPSYS_CONFIG_INVALID', key: 'tls[0].thumbprint' })
  expect(thumb.proc).toBe(null)
})

test('workers attach to it as to the hub: its socket, the queue\'s token and prefixes as bound, the app\'s cache and auth', () => {
  const r = new NativeRouter({ logger: quiet, socketPath: '/run/httpsys/hub.sock' })
  r.tokens.set('api', 'token-1')
  r.queueUrls.set('api', ['http://127.0.0.1:8080/', 'http://127.0.0.1:8081/'])
  expect(r.workerEnv({ name: 'api', cache: false, auth: null, promote_server_vars: ['AUTH_USER'] })).toEqual({
    HTTPSYS_BACKEND: 'hub',
    HTTPSYS_HUB: '/run/httpsys/hub.sock',
    HTTPSYS_QUEUE: 'api',
    HTTPSYS_QUEUE_TOKEN: 'token-1',
    HTTPSYS_QUEUE_URLS: 'http://127.0.0.1:8080/,http://127.0.0.1:8081/',
    HTTPSYS_MAX_BODY_SIZE: undefined,
    HTTPSYS_CACHE: 'off',
    HTTPSYS_AUTH: JSON.stringify({ auth: null, promote: ['AUTH_USER'] })
  })
  // an app without urls: its first listen() decides
  expect(r.workerEnv({ name: 'solo' }).HTTPSYS_QUEUE_URLS).toBeUndefined()
})

test('a missing binary is ERR_HTTPSYS_ROUTER_MISSING naming the path and the build command', () => {
  const binary = path.join(__dirname, 'no-such-router')
  expect(() => new RouterProcess({ binary, logger: quiet })).toThrow(expect.objectContaining({
    code: 'ERR_HTTPSYS_ROUTER_MISSING',
    message: expect.stringMatching(/no-such-router.*npm run build:router/)
  }))
})

test('an answer with an error becomes the error of src/errors.js with that code and the router\'s details', () => {
  const p = Object.create(RouterProcess.prototype)
  p.logger = quiet
  let rejected = null
  p.pending = new Map([[3, { resolve: () => {}, reject: (e) => { rejected = e } }]])
  p.onLine(JSON.stringify({ id: 3, error: { code: 'ERR_HTTPSYS_URL_CONFLICT', message: 'x', details: { prefix: 'http://+:8080/', owner: 'api' } } }))
  expect(rejected).toMatchObject({ code: 'ERR_HTTPSYS_URL_CONFLICT', prefix: 'http://+:8080/', owner: 'api' })
  expect(rejected.message).toMatch(/^The URL prefix http:\/\/\+:8080\/ is already registered by api\./)
  let resolved = null
  p.pending.set(4, { resolve: (v) => { resolved = v }, reject: () => {} })
  p.onLine('{"id":4,"ok":true,"name":"a","urls":[],"ports":[]}')
  expect(resolved).toEqual({ name: 'a', urls: [], ports: [] })
})

test('the router\'s records go on through the supervisor\'s logger at their level', () => {
  const got = []
  const p = Object.create(RouterProcess.prototype)
  p.logger = { warn: (o, m) => got.push(['warn', o, m]), debug: (o, m) => got.push(['debug', o, m]), info: (o, m) => got.push(['info', o, m]) }
  p.onLog('{"time":1,"level":40,"msg":"careful","pid":9,"hostname":"h","component":"router","port":80}')
  p.onLog('not json')
  expect(got).toEqual([
    ['warn', { routerPid: 9, component: 'router', port: 80 }, 'careful'],
    ['warn', { component: 'router' }, 'not json']
  ])
})

test('ls never waits on a router that does not answer: its row shows the last sample', async () => {
  const r = new NativeRouter({ logger: quiet })
  let answer = true
  r.proc = { exitInfo: null, call: (cmd) => cmd === 'processStats' && answer ? Promise.resolve({ cpuMicros: 1000, rss: 5 << 20, goroutines: 3 }) : new Promise(() => {}) }
  r.usage.started(4242)
  expect(await r.processStats()).toMatchObject({ pid: 4242, memory: 5 << 20, goroutines: 3 })
  answer = false
  r.usage.now = () => Date.now() + 1000 // that sample is no longer fresh: the router is asked
  const t0 = Date.now()
  expect(await r.processStats()).toMatchObject({ pid: 4242, memory: 5 << 20 })
  expect(Date.now() - t0).toBeLessThan(1500)
})

test('a status read asks the router for its process stats once: refreshNow\'s sample serves processStats', async () => {
  const r = new NativeRouter({ logger: quiet })
  const asked = []
  r.proc = {
    exitInfo: null,
    call: async (cmd) => {
      asked.push(cmd)
      if (cmd === 'stats') return { connections: 0, queues: [] }
      if (cmd === 'tlsStats') return { handshakes: 0, failures: 0, byReason: {} }
      if (cmd === 'processStats') return { cpuMicros: 1000, rss: 5 << 20, goroutines: 3 }
      return {}
    }
  }
  r.usage.started(4242)
  await r.refreshNow()
  expect(await r.processStats()).toMatchObject({ pid: 4242, memory: 5 << 20 })
  expect(asked.filter((c) => c === 'processStats')).toHaveLength(1)
})

test('a config edit sends what was added and what was dropped, and keeps each url\'s prefix as bound', async () => {
  const r = new NativeRouter({ logger: quiet })
  const sent = []
  r.proc = {
    exitInfo: null,
    call: async (cmd, args) => {
      sent.push({ cmd, ...args })
      if (cmd === 'createQueue') return { name: args.name, urls: ['http://127.0.0.1:5001/', 'http://127.0.0.1:5002/'], ports: [5001, 5002] }
      if (cmd === 'setUrls') return { urls: ['http://127.0.0.1:5001/', 'http://127.0.0.1:6000/'], added: ['http://127.0.0.1:6000/'], redirects: [] }
      return {}
    }
  }
  await r.createQueue('api', { urls: ['http://127.0.0.1:5001/', 'http://127.0.0.1:0/'] })
  const res = await r.setUrls('api', ['http://127.0.0.1:5001/', 'http://127.0.0.1:0/x'], {})
  expect(sent.find((s) => s.cmd === 'setUrls')).toEqual({ cmd: 'setUrls', name: 'api', add: ['http://127.0.0.1:0/x'], remove: ['http://127.0.0.1:5002/'], redirectHttp: null, redirectChanged: false })
  expect(res).toEqual({ urls: ['http://127.0.0.1:5001/', 'http://127.0.0.1:6000/'] })
  expect(r.configUrls.get('api')).toEqual(new Map([['http://127.0.0.1:5001/', 'http://127.0.0.1:5001/'], ['http://127.0.0.1:0/x', 'http://127.0.0.1:6000/']]))
  // workers started from now on are told the new prefixes
  expect(r.queueUrls.get('api')).toEqual(res.urls)
})
