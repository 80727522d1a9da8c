'use strict'

// `httpsys stop all` waits for the supervisor's pid to be gone. A `start -d` daemon's
// parent is init, and in a container init may reap an exited process only every second
// or two: until then it is a zombie, which kill(pid, 0) still finds, so `stop all` took
// 1.2-2.6 s after a 14 ms stop (issue 28). An exited process is gone.

const { spawn } = require('node:child_process')
const { waitForExit } = require('../../../src/supervisor/control-client')

const linux = process.platform === 'linux'

;(linux ? test : test.skip)('a process that exited but is not reaped yet counts as exited', async () => {
  // bash starts a short sleep, then becomes a long one that never waits for it: the
  // short one stays a zombie for as long as the long one lives
  const parent = spawn('bash', ['-c', 'sleep 0.2 & echo $!; exec sleep 10'], { stdio: ['ignore', 'pipe', 'ignore'] })
  try {
    const pid = await new Promise((resolve) => parent.stdout.once('data', (d) => resolve(Number(String(d).trim()))))
    const started = Date.now()
    expect(await waitForExit(pid, 5000)).toBe(true)
    expect(Date.now() - started).toBeLessThan(1500)
    // it is a zombie, not reaped: what kill(pid, 0) alone would have waited on
    expect(() => process.kill(pid, 0)).not.toThrow()
  } finally {
    parent.kill('SIGKILL')
  }
})

test('a live process is still running when the wait ends', async () => {
  expect(await waitForExit(process.pid, 100)).toBe(false)
})
