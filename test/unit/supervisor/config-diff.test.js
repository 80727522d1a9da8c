'use strict'

// What `httpsys reload` reads as a change, and how it says it: apps added, removed or
// changed (a type change replaces the app), the changed keys in a user's words (env by
// variable name only: values may be secrets), and the run's own settings that wait for
// the next start.

const path = require('node:path')
const { validate } = require('../../../src/config')
const { diffConfig, describeChange } = require('../../../src/supervisor/config-diff')

const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')
const config = (raw) => validate(raw, { baseDir: APPS })
const api = { name: 'api', script: 'graceful.js', urls: ['http://+:8080/api/'], instances: 2, env: { TOKEN: 'secret-1', MODE: 'a' } }

test('apps added, removed and changed; an app in both with no change has no keys', () => {
  const running = config({ apps: [api, { name: 'old', script: 'graceful.js' }, { name: 'same', script: 'graceful.js' }] })
  const next = config({
    apps: [
      { ...api, urls: ['http://+:8080/api/', 'http://+:9090/'], instances: 3, env: { TOKEN: 'secret-2', MODE: 'a', NEW: '1' } },
      { name: 'same', script: 'graceful.js' },
      { name: 'new', script: 'graceful.js' }
    ]
  })
  const diff = diffConfig(running, next)
  expect(diff.added.map((a) => a.name)).toEqual(['new'])
  expect(diff.removed).toEqual(['old'])
  expect(diff.changed.map((c) => [c.name, c.keys, c.replace])).toEqual([['api', ['urls', 'instances', 'env'], false], ['same', [], false]])
  expect(describeChange(diff.changed[0])).toEqual(['urls + http://+:9090/', 'instances 2 -> 3', 'env (TOKEN, NEW)'])
  expect(JSON.stringify(describeChange(diff.changed[0]))).not.toMatch(/secret/)
  expect(diff.notLive).toEqual([])
})

test('one app: the others are left as they run; a type change replaces the app; cache on/off waits for a start', () => {
  const running = config({ apps: [api, { name: 'job', script: 'graceful.js' }] })
  const next = config({ apps: [{ ...api, cache: false, kill_timeout: '3s' }, { name: 'job', script: 'graceful.js', type: 'worker' }, { name: 'other', script: 'graceful.js' }] })
  const one = diffConfig(running, next, { only: 'api' })
  expect(one.added).toEqual([])
  expect(one.changed.map((c) => [c.name, c.keys, c.notLive])).toEqual([['api', ['kill_timeout', 'restart_window', 'cache'], ['cache']]])
  // restart_window 'auto' follows kill_timeout: not named on its own
  expect(describeChange(one.changed[0])).toEqual(['kill_timeout', 'cache'])
  const all = diffConfig(running, next)
  expect(all.changed.find((c) => c.name === 'job')).toMatchObject({ keys: ['type'], replace: true })
})

test('the run\'s own settings (backend, limits, tls, metrics) are named, never applied', () => {
  const running = config({ apps: [api] })
  const next = config({ apps: [api], backend: 'hub', metrics: { listen: '127.0.0.1:9464' }, limits: { queue_length: 10 } })
  expect(diffConfig(running, next).notLive).toEqual(['backend', 'limits', 'metrics'])
  // a command for one app leaves them to `reload all`
  expect(diffConfig(running, next, { only: 'api' }).notLive).toEqual([])
})
