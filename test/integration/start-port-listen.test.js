'use strict'

// A port another program holds, when the port comes from the app's listen() (no -u):
// one line per attempt, as the CLI prints the same error for -u, never node's 30-line
// stack of httpsys's own frames (issue 28 item 7). An app that listens for its server's
// 'error' still gets the error, as on node.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { start, freePort, APPS } = require('../fixtures/apps/harness')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-port-listen-'))
const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
let run = null
let holder = null
afterEach(async () => {
  if (run) await run.cleanup()
  if (holder) await new Promise((resolve) => holder.close(resolve))
  run = holder = null
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

async function hold () {
  const port = await freePort()
  holder = net.createServer()
  await new Promise((resolve) => holder.listen(port, resolve))
  return port
}

test('an app with no \'error\' listener: one line per attempt, no stack, and the cause once it gives up', async () => {
  const port = await hold()
  run = start([path.join(APPS, 'pid-server.js'), '-n', 'web'], { env: { ...env, PORT: String(port) } })
  expect(await run.exited).toEqual({ code: 1, signal: null })
  const output = run.records.filter((r) => r.stream === 'stderr').map((r) => r.msg)
  const attempts = run.records.filter((r) => r.event === 'spawn').length
  expect(attempts).toBeGreaterThanOrEqual(1)
  expect(output).toHaveLength(attempts)
  for (const line of output) {
    expect(line).toBe(`httpsys: Port ${port} is already in use by pid ${process.pid} (node). ` +
      `Stop that process or choose another port (on Linux \`ss -ltnp 'sport = :${port}'\` shows the owner). (ERR_HTTPSYS_PORT_IN_USE)`)
  }
  expect(run.records.find((r) => r.event === 'errored').cause).toBe(`its port is held by pid ${process.pid} (node): stop that program or use another port`)
}, 30000)

test('an app that listens for \'error\' gets it, with node\'s code, and decides', async () => {
  const port = await hold()
  const app = path.join(dir, 'handles.js')
  fs.writeFileSync(app, `require('node:http').createServer().on('error', (err) => {
    console.log('handled ' + err.code + ' ' + err.port)
    process.exit(3)
  }).listen(${port})\n`)
  run = start([app, '--restart', 'never'], { env })
  await run.waitFor((r) => r.event === 'exit')
  expect(run.records.filter((r) => r.stream === 'stdout').map((r) => r.msg)).toEqual([`handled EADDRINUSE ${port}`])
  expect(run.records.filter((r) => r.stream === 'stderr')).toEqual([])
}, 30000)
