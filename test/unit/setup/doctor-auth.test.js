'use strict'

// `httpsys doctor` on Windows authentication (src/setup/auth-checks.js): the schemes of
// each app; on HTTP.SYS the SPN a Negotiate app's host names need (a warning with the
// setspn line, never an error: nothing at start depends on it); on the hub whether the
// app can start at all.

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
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-doctor-auth-'))
  fs.writeFileSync(path.join(dir, 'app.js'), '')
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const config = (app) => validate({ apps: [{ name: 'intranet', script: 'app.js', ...app }] }, { baseDir: dir })
const auth = (report) => report.findings.filter((f) => f.area === 'auth')

async function onWindows (app, machine = { env: { COMPUTERNAME: 'WEB01', USERDNSDOMAIN: 'CONTOSO.COM' }, hostname: 'web01' }) {
  const addon = createFakeAddon()
  addon.urlAclSet('http://+:80/', 'D:(A;;GX;;;S-1-1-0)')
  const sc = createServiceConfig(() => addon)
  return doctor({ config: config(app), platform: 'win32', serviceConfig: () => sc, cert: () => createCert(sc), loadAddon: () => addon, machine })
}

test('HTTP.SYS: the schemes, and the SPN each host name other than the computer\'s own needs for Kerberos', async () => {
  const report = await onWindows({
    urls: ['http://intranet.contoso.com:80/', 'http://web01.contoso.com:80/other/', 'http://web01:80/x/', 'http://+:80/y/'],
    auth: { schemes: ['negotiate', 'ntlm'], anonymous: false }
  })
  expect(auth(report)).toEqual([
    { level: 'info', area: 'auth', message: 'intranet: HTTP.SYS authenticates Negotiate, NTLM; a request without credentials gets 401 with the challenges' },
    {
      level: 'warn',
      area: 'auth',
      message: 'intranet: Kerberos for intranet.contoso.com needs the service principal name HTTP/intranet.contoso.com on this computer\'s account; without it clients use NTLM, or fail where NTLM is off',
      fix: 'once, as a domain administrator: `setspn -S HTTP/intranet.contoso.com WEB01` (`setspn -Q HTTP/intranet.contoso.com` shows whether one exists, and where)'
    }
  ])
  expect(report.findings.filter((f) => f.level === 'error')).toEqual([])
})

test('HTTP.SYS: no SPN talk for NTLM or Basic alone; a development identity is said to be ignored', async () => {
  const report = await onWindows({ urls: ['https://intranet.contoso.com:443/'], auth: { schemes: ['ntlm', 'basic'], dev_identity: 'DEV\\alice' } })
  expect(auth(report).map((f) => [f.level, f.message])).toEqual([
    ['info', 'intranet: HTTP.SYS authenticates NTLM, Basic; a request without credentials reaches the app anonymous (req.windowsIdentity null)'],
    ['info', 'intranet: its development identity (DEV\\alice) is ignored on HTTP.SYS']
  ])
})

test('the hub: an app with auth and no development identity is an error (start would fail); with one, a warning that it authenticates nobody', async () => {
  const hub = { runtimeDir: () => path.join(dir, 'run') }
  const without = await doctor({ config: config({ auth: { schemes: ['negotiate'] } }), platform: 'linux', hub, machine: { env: {} } })
  expect(auth(without)).toEqual([expect.objectContaining({ level: 'error', message: expect.stringMatching(/^intranet asks for Windows authentication \(Negotiate\), which the native router cannot do: `httpsys start` fails with ERR_HTTPSYS_AUTH_UNAVAILABLE$/), fix: expect.stringMatching(/dev_identity/) })])
  expect(without.ok).toBe(false)
  const withOne = await doctor({ config: config({ auth: { schemes: ['negotiate'] } }), platform: 'linux', hub, machine: { env: { HTTPSYS_DEV_IDENTITY: 'DEV\\alice' } } })
  expect(auth(withOne)).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringMatching(/the native router hands every request the development identity DEV\\alice \(Negotiate on HTTP\.SYS\): this authenticates nobody/) })])
  expect(withOne.ok).toBe(true)
})
