'use strict'

// A worker killed with SIGKILL is restarted, and requests sent while it is down wait in
// its queue: none fails.

const path = require('node:path')
const { start, freePort, get, APPS } = require('../fixtures/apps/harness')

let run
afterEach(async () => { if (run) await run.cleanup() })

test('requests sent while the only worker is dead are served by its replacement', async () => {
  const port = await freePort()
  run = start([path.join(APPS, 'pid-server.js'), '-n', 'pids', '-u', `http://127.0.0.1:${port}/`])
  const { pid: first } = await run.waitFor((r) => r.event === 'ready')
  expect(JSON.parse((await get(port, '/')).body).pid).toBe(first)

  process.kill(first, 'SIGKILL')
  const exit = await run.waitFor((r) => r.event === 'exit' && r.pid === first)
  expect(exit).toMatchObject({ app: 'pids', inst: 0, code: null, signal: 'SIGKILL' })
  // sent now: the restart delay has not even passed, no worker is attached
  const sentAt = run.records.length
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => get(port, `/?n=${i}`)))

  const failed = answers.filter((a) => a.status !== 200)
  expect(failed).toEqual([])
  const pids = new Set(answers.map((a) => JSON.parse(a.body).pid))
  expect(pids.size).toBe(1)
  const [second] = pids
  expect(second).not.toBe(first)
  // every restart says why (exit code, signal) and when
  expect(run.records.find((r) => r.event === 'backoff')).toMatchObject({ app: 'pids', inst: 0, pid: first, code: null, signal: 'SIGKILL', delay: expect.any(Number) })
  // the replacement became ready only after the requests were sent: they really waited
  // (the router may report the attach after the answers have left: wait for the record)
  await run.waitFor((r) => r.event === 'ready' && r.pid === second)
  const readyAt = run.records.findIndex((r) => r.event === 'ready' && r.pid === second)
  expect(readyAt).toBeGreaterThanOrEqual(sentAt)
})
