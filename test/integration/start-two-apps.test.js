'use strict'

// examples/two-apps: two apps on one port by URL prefix, the api with two instances
// that both serve.

const { start, freePort, get } = require('../fixtures/apps/harness')

let run
afterEach(async () => { if (run) await run.cleanup() })

test('both apps answer on one port; both api instances serve', async () => {
  const port = await freePort()
  run = start(['-c', 'examples/two-apps/httpsys.config.js'], {
    env: { HTTPSYS_EXAMPLE_PORT: String(port), HTTPSYS_EXAMPLE_HOST: '127.0.0.1' }
  })
  const ready = await run.waitFor((r) => r.event === 'ready', { count: 3 })
  expect(ready.map((r) => `${r.app}#${r.inst}`).sort()).toEqual(['api#0', 'api#1', 'web#0'])

  const api = await get(port, '/api/hello')
  expect(api.status).toBe(200)
  expect(api.headers['content-type']).toBe('application/json')
  expect(JSON.parse(api.body)).toMatchObject({ app: 'api', message: 'hello from the api' })

  const web = await get(port, '/')
  expect(web.status).toBe(200)
  expect(web.headers['content-type']).toBe('text/html; charset=utf-8')
  expect(web.body).toContain('<h1>Two apps, one port</h1>')

  // the whole /api/ subtree is the api's, even paths it does not know
  const unknown = await get(port, '/api/nope')
  expect(unknown.status).toBe(404)
  expect(JSON.parse(unknown.body)).toMatchObject({ app: 'api', error: 'not found' })
  expect((await get(port, '/elsewhere')).body).toContain('Not found')

  const apiPids = ready.filter((r) => r.app === 'api').map((r) => r.pid).sort()
  const seen = new Map()
  for (let batch = 0; batch < 25 && seen.size < 2; batch++) {
    const answers = await Promise.all(Array.from({ length: 8 }, () => get(port, '/api/hello')))
    for (const a of answers) {
      expect(a.status).toBe(200)
      const body = JSON.parse(a.body)
      seen.set(body.pid, body.instance)
    }
  }
  expect([...seen.keys()].sort()).toEqual(apiPids)
  expect([...seen.values()].sort()).toEqual(['0', '1'])

  run.signal('SIGINT')
  expect((await run.exited).code).toBe(0)
})
