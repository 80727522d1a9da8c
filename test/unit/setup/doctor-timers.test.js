'use strict'

// `httpsys doctor` on Windows and HTTP.SYS's machine-wide timers: an app's header_timeout
// and idle_timeout reach its URL group, which HTTP.SYS applies only from a connection's
// second request; until then HeaderWait and IdleConnection of the whole machine hold
// (120 s unless set), so a slowloris client is bounded by those. Doctor shows them and the
// netsh line that brings them in line with the config.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { doctor } = require('../../../src/setup/doctor')
const { createCert } = require('../../../src/setup/cert')
const { createServiceConfig } = require('../../../src/httpsys/service-config')
const { validate } = require('../../../src/config')
const { createFakeAddon } = require('../../helpers/fake-addon')

let dir
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-doctor-timers-'))
  fs.writeFileSync(path.join(dir, 'app.js'), '')
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

async function timers (machineTimeouts, limits = {}) {
  const addon = createFakeAddon()
  addon.machine.timeouts = machineTimeouts
  const sc = createServiceConfig(() => addon)
  const config = validate({ limits, apps: [{ script: 'app.js', urls: ['http://localhost:8080/'] }] }, { baseDir: dir })
  const report = await doctor({ config, platform: 'win32', serviceConfig: () => sc, cert: () => createCert(sc), loadAddon: () => addon })
  return { report, found: report.findings.filter((f) => f.area === 'timers') }
}

test('HTTP.SYS\'s defaults (120 s) hold new connections longer than header_timeout and idle_timeout: a warning with the netsh line', async () => {
  const { report, found } = await timers({}, { header_timeout: '20s' })
  expect(found).toEqual([
    {
      level: 'warn',
      area: 'timers',
      message: 'a new connection has 120 s to send its first request head (HTTP.SYS\'s machine-wide headerwaittimeout, its default): header_timeout (20 s) applies on HTTP.SYS only from a connection\'s second request',
      fix: 'run once, elevated: `netsh http add timeout timeouttype=headerwaittimeout value=20` (every HTTP.SYS app on this machine gets it)'
    },
    expect.objectContaining({ level: 'warn', fix: expect.stringContaining('`netsh http add timeout timeouttype=idleconnectiontimeout value=5`') })
  ])
  expect(report.ok).toBe(true) // a warning: the app works
})

test('machine-wide timers within the config\'s are ok', async () => {
  const { found } = await timers({ headerWait: 20, idleConnection: 5 }, { header_timeout: '20s' })
  expect(found.map((f) => f.level)).toEqual(['ok', 'ok'])
  expect(found[0].message).toMatch(/has 20 s to send its first request head .*within header_timeout \(20 s\)/)
})
