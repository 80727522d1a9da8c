'use strict'

// `httpsys start` with a config it cannot run: it says which key and how to fix it,
// exits 1, and starts nothing.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { start, freePort, writeConfig, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-config-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('a misspelt key is named, with the key it meant, and nothing starts', async () => {
  run = start(['-c', writeConfig(dir, { apps: [{ name: 'api', script: path.join(APPS, 'pid-server.js'), instance: 2 }] })])
  expect(await run.exited).toEqual({ code: 1, signal: null })
  expect(run.stderr).toBe('httpsys: Invalid config at apps[0].instance: is not a known key. Did you mean "instances"? (ERR_HTTPSYS_CONFIG_INVALID)\n')
  expect(run.pids()).toEqual([])
})

test('a wrong value names the key path and the fix', async () => {
  run = start(['-c', writeConfig(dir, {
    apps: [{ name: 'a', script: path.join(APPS, 'pid-server.js') }, { name: 'b', script: path.join(APPS, 'pid-server.js'), instances: 0 }]
  })])
  expect((await run.exited).code).toBe(1)
  expect(run.stderr).toMatch(/^httpsys: Invalid config at apps\[1\]\.instances: must be an integer >= 1 or "max", got number 0\. For example instances: 2/)
})

test('a config file that throws shows the user\'s own error and where it is', async () => {
  const file = path.join(dir, 'broken.config.js')
  fs.writeFileSync(file, 'module.exports = { apps: [\n  { script: "x.js" ]\n}\n')
  run = start([file])
  expect((await run.exited).code).toBe(1)
  expect(run.stderr).toContain(`httpsys: Cannot load the config file ${file}: `)
  expect(run.stderr).toContain('(ERR_HTTPSYS_CONFIG_LOAD)')
  expect(run.stderr).toContain(`${file}:2`)
})

test('a port already in use fails the start before any app is spawned', async () => {
  const port = await freePort()
  const blocker = net.createServer()
  await new Promise((resolve) => blocker.listen(port, '127.0.0.1', resolve))
  try {
    run = start([path.join(APPS, 'pid-server.js'), '-u', `http://127.0.0.1:${port}/`])
    expect(await run.exited).toEqual({ code: 1, signal: null })
    expect(run.stderr).toMatch(new RegExp(`^httpsys: Port ${port}.* is already in use.*\\(ERR_HTTPSYS_PORT_IN_USE\\)\\n$`))
    expect(run.pids()).toEqual([])
  } finally {
    blocker.close()
  }
})
