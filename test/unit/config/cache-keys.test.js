'use strict'

// The config's output cache keys: an app's `cache` rules (or false), the limits
// cache_size and cache_max_response, and what the workers get of them (HTTPSYS_CACHE).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { validate } = require('../../../src/config')
const { readWorkerEnv, cacheEnv, ENV } = require('../../../src/worker-interface')
const { configLimits } = require('../../../src/supervisor/router-config')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-cachekeys-'))
fs.writeFileSync(path.join(dir, 'app.js'), '')
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const run = (raw) => validate(raw, { baseDir: dir })
const app = (extra) => ({ script: 'app.js', ...extra })

test('cache rules: ttl in whole seconds, query off unless said; none by default; false turns the cache off', () => {
  const [a, b, c] = run({
    apps: [
      app({ name: 'a', cache: [{ path: '/static/', ttl: '10s' }, { path: '/search', ttl: 90000, query: true }] }),
      app({ name: 'b' }),
      app({ name: 'c', cache: false })
    ]
  }).apps
  expect(a.cache).toEqual([{ path: '/static/', ttl: 10, query: false }, { path: '/search', ttl: 90, query: true }])
  expect(b.cache).toEqual([])
  expect(c.cache).toBe(false)
})

test.each([
  ['not an array', { path: '/x', ttl: '1s' }, 'cache', /must be an array of \{ path, ttl \} or false/],
  ['a rule without ttl', [{ path: '/x' }], 'cache[0].ttl', /is required/],
  ['a rule without path', [{ ttl: '1s' }], 'cache[0].path', /is required/],
  ['a path without its slash', [{ path: 'static/', ttl: '1s' }], 'cache[0].path', /starting with "\/"/],
  ['a path with a query', [{ path: '/x?a=1', ttl: '1s' }], 'cache[0].path', /no query/],
  ['a ttl under a second', [{ path: '/x', ttl: '500ms' }], 'cache[0].ttl', /at least 1s/],
  ['a ttl that is not a duration', [{ path: '/x', ttl: 'soon' }], 'cache[0].ttl', /must be a duration/],
  ['a misspelt key', [{ path: '/x', ttl: '1s', querys: true }], 'cache[0].querys', /Did you mean "query"/]
])('%s is a config error naming the key', (what, cache, key, words) => {
  const attempt = () => run({ apps: [app({ cache })] })
  expect(attempt).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CONFIG_INVALID', key: `apps[0].${key}` }))
  expect(attempt).toThrow(words)
})

test('limits: cache_size and cache_max_response are sizes, given to the hub', () => {
  const { limits } = run({ apps: [app()], limits: { cache_size: '8M', cache_max_response: '1M' } })
  expect(limits).toMatchObject({ cache_size: 8 * 1024 * 1024, cache_max_response: 1024 * 1024 })
  expect(configLimits(limits)).toMatchObject({ cacheSize: 8 * 1024 * 1024, cacheMaxResponse: 1024 * 1024 })
  expect(run({ apps: [app()] }).limits).toMatchObject({ cache_size: 64 * 1024 * 1024, cache_max_response: 256 * 1024 })
  expect(() => run({ apps: [app()], limits: { cache_size: 'lots' } })).toThrow(expect.objectContaining({ key: 'limits.cache_size' }))
})

test('HTTPSYS_CACHE carries the rules to the workers; off, or unset for none', () => {
  const rules = [{ path: '/static/', ttl: 10, query: false }]
  expect(readWorkerEnv({ [ENV.CACHE]: cacheEnv(rules) }).cache).toEqual(rules)
  expect(cacheEnv(false)).toBe('off')
  expect(readWorkerEnv({ [ENV.CACHE]: 'off' }).cache).toBe(null)
  expect(cacheEnv([])).toBeUndefined()
  expect(readWorkerEnv({}).cache).toEqual([])
  // a value a user typed wrong does not turn caching of everything on: no rules
  expect(readWorkerEnv({ [ENV.CACHE]: '{not json' }).cache).toEqual([])
  expect(readWorkerEnv({ [ENV.CACHE]: '[{"path":"x","ttl":5}]' }).cache).toEqual([])
})
