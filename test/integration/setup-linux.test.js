'use strict'

// The Windows setup commands on Linux, as a user running them there meets them: each
// says what it is for and that the hub needs none of it (exit 0); doctor runs the hub's
// own checks instead and exits 1 when one fails (a configured port another program
// holds), so scripts can rely on its exit code.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { cli, APPS } = require('../fixtures/apps/harness')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-setup-linux-'))
const env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

test.each([
  [['cert', 'list'], /certificate binding is HTTP\.SYS configuration, which exists on Windows only.*httpsys's native router.*nothing to do/s],
  [['cert', 'add', '--port', '443', '--thumbprint', 'aa'.repeat(20)], /exists on Windows only.*nothing to do/s],
  [['urlacl', 'list'], /exists on Windows only.*needs no URL reservation/s],
  [['urlacl', 'delete', 'http://+:8080/'], /exists on Windows only.*needs no URL reservation/s]
])('httpsys %j on Linux: what it is for, exit 0', async (args, text) => {
  const r = await cli(args, { env, cwd: dir })
  expect(r.code).toBe(0)
  expect(r.stdout + r.stderr).toMatch(text)
})

test('doctor on Linux: the hub\'s checks (runtime directory, the config\'s ports); exit 0, or 1 when a port is taken', async () => {
  const blocker = net.createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => blocker.once('listening', resolve))
  try {
    const project = path.join(dir, 'p')
    fs.mkdirSync(project)
    const config = path.join(project, 'httpsys.config.js')
    fs.writeFileSync(config, `module.exports = { apps: [{ name: 'web', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${blocker.address().port}/'] }] }\n`)
    const bad = await cli(['doctor'], { env, cwd: project })
    expect(bad.code).toBe(1)
    expect(bad.stdout).toMatch(/router: hub/)
    expect(bad.stdout).toMatch(/ok {4}the runtime directory .* (is private|creates it private)/)
    expect(bad.stdout).toContain(`FAIL  port ${blocker.address().port} (web) is already in use by pid ${process.pid} (node)\n      fix: stop that process or choose another port`)
    blocker.close()
    await new Promise((resolve) => setTimeout(resolve, 50))
    const good = await cli(['doctor'], { env, cwd: project })
    expect(good.code).toBe(0)
    expect(good.stdout).toMatch(/no problems/)
  } finally {
    blocker.close()
  }
})
