'use strict'

// Readiness without the router's word: HTTP.SYS never says when a worker opens its
// queue, so the real preload (src/register.js) tells the supervisor itself. Here the
// real hub runs with its 'attach' event suppressed, which is what the supervisor sees
// on HTTP.SYS: an app is ready only through the preload's message, and a wait_ready app
// still waits for its own process.send('ready'). Both routers: the JS hub and the native one.

const pino = require('pino')
const { validate } = require('../../src/config')
const { Supervisor } = require('../../src/supervisor')
const { NativeRouter } = require('../../src/supervisor/native-router')
const { freePort, get, APPS } = require('../fixtures/apps/harness')
const { waitForRecord } = require('../helpers/records')

class SilentRouter extends NativeRouter {
  emit (event, ...args) {
    if (event === 'attach') return false
    return super.emit(event, ...args)
  }
}

let supervisor
afterEach(async () => {
  if (supervisor) await supervisor.kill()
  supervisor = null
})

const waitFor = (records, predicate, timeout = 10000) => waitForRecord(records, predicate, { timeout })

test.each([
  ['the native router', { Router: SilentRouter }]
])('%s: the preload reports its first attach; wait_ready apps still wait for their own ready', async (_, routerOption) => {
  const [port, slowPort] = [await freePort(), await freePort()]
  const config = validate({
    apps: [
      { name: 'api', script: 'pid-server.js', urls: [`http://127.0.0.1:${port}/`], kill_timeout: '3s' },
      { name: 'slow', script: 'ready-app.js', urls: [`http://127.0.0.1:${slowPort}/`], wait_ready: true, env: { READY_DELAY: '1000' }, kill_timeout: '3s' }
    ]
  }, { baseDir: APPS })
  const records = []
  const logger = pino({ level: 'info', base: null }, { write (line) { records.push(JSON.parse(line)) } })
  supervisor = new Supervisor(config, { logger, ...routerOption })
  await supervisor.start()

  const api = await waitFor(records, (r) => r.event === 'ready' && r.app === 'api')
  expect(api).toMatchObject({ via: 'preload', pid: supervisor.findGroup('api').instances[0].pid })
  const res = await get(port, '/')
  expect(JSON.parse(res.body)).toMatchObject({ pid: api.pid, app: 'api' })

  // slow is attached and answering well before it says it is ready
  expect((await get(slowPort, '/')).status).toBe(200)
  expect(supervisor.findGroup('slow').instances[0].state).toBe('starting')
  const slow = await waitFor(records, (r) => r.event === 'ready' && r.app === 'slow')
  expect(slow).toMatchObject({ via: 'message' })
  expect(slow.ms).toBeGreaterThanOrEqual(1000)
  expect(records.filter((r) => r.event === 'ready')).toHaveLength(2)
})
