'use strict'

// `httpsys start examples/hello/app.js`: an unmodified app, its port from PORT, served
// through the hub; Ctrl+C stops it and nothing is left running.

const { start, freePort, get, alive, waitUntil } = require('../fixtures/apps/harness')

let run
afterEach(async () => { if (run) await run.cleanup() })

test('serves the hello example on the port its listen() asks for, then stops on Ctrl+C', async () => {
  const port = await freePort()
  run = start(['examples/hello/app.js'], { env: { PORT: String(port) } })
  const ready = await run.waitFor((r) => r.event === 'ready')
  expect(ready).toMatchObject({ app: 'app', inst: 0, pid: expect.any(Number), ms: expect.any(Number) })
  // the app's own console.log, as a record of its own
  await run.waitFor((r) => r.app === 'app' && r.stream === 'stdout' && /^hello: listening on/.test(r.msg))

  const res = await get(port, '/')
  expect(res.status).toBe(200)
  expect(res.body).toBe('hello world\n')

  run.signal('SIGINT')
  expect(await run.exited).toEqual({ code: 0, signal: null })
  expect(run.records.find((r) => r.event === 'exit' && r.pid === ready.pid)).toBeTruthy()
  expect(await waitUntil(() => !alive(ready.pid), 2000)).toBe(true)
  await expect(get(port, '/', { timeout: 2000 })).rejects.toThrow(/ECONNREFUSED/)
})
