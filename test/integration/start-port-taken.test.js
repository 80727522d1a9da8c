'use strict'

// A port another httpsys supervisor holds: two projects whose configs want the same
// port. The second start must say what to do (one config: several apps share a port by
// URL prefix), whether the port comes from its config's urls or from its app's listen().

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, freePort, APPS } = require('../fixtures/apps/harness')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-port-taken-'))
const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
const runs = []
afterEach(async () => {
  for (const r of runs.splice(0)) await r.cleanup()
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

function project (name, apps) {
  const folder = path.join(dir, name)
  fs.mkdirSync(folder, { recursive: true })
  fs.writeFileSync(path.join(folder, 'httpsys.config.js'), `module.exports = ${JSON.stringify({ apps }, null, 2)}\n`)
  return folder
}

test('urls that another supervisor serves: the error names it and says to use one config', async () => {
  const port = await freePort()
  const script = path.join(APPS, 'pid-server.js')
  const a = project('a', [{ name: 'web', script, urls: [`http://+:${port}/`] }])
  const b = project('b', [{ name: 'api', script, urls: [`http://+:${port}/api/`] }])
  const first = start(['-c', path.join(a, 'httpsys.config.js')], { cwd: a, env })
  runs.push(first)
  await first.waitFor((r) => r.event === 'ready')
  const second = start(['-c', path.join(b, 'httpsys.config.js')], { cwd: b, env })
  runs.push(second)
  const { code } = await second.exited
  expect(code).not.toBe(0)
  const text = second.records.map((r) => r.msg || r.raw || '').join('\n') + second.stderr
  expect(text).toMatch(new RegExp(`Port ${port} is already in use by pid ${first.child.pid} \\(httpsys supervisor in ${a.replace(/[/\\\\.]/g, '\\$&')}\\)`))
  expect(text).toMatch(/put both apps in one httpsys\.config\.js/)
})

test('an app whose listen() asks for a port another supervisor serves: its first start fails with that cause in one line', async () => {
  const port = await freePort()
  const a = project('c', [{ name: 'web', script: path.join(APPS, 'pid-server.js'), urls: [`http://+:${port}/`] }])
  const first = start(['-c', path.join(a, 'httpsys.config.js')], { cwd: a, env })
  runs.push(first)
  await first.waitFor((r) => r.event === 'ready')
  const b = path.join(dir, 'd')
  fs.mkdirSync(b, { recursive: true })
  const second = start([path.join(APPS, 'address-sync.js')], { cwd: b, env: { ...env, PORT_TO_LISTEN: String(port) } })
  runs.push(second)
  const failed = await second.waitFor((r) => /another httpsys supervisor/.test(r.msg || ''), { timeout: 20000 })
  expect(failed.msg).toMatch(/put both apps in one config, or use another port/)
})
