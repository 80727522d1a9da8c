'use strict'

// urlacl, cert, doctor and start --setup as a Windows user meets them, run in-process
// against the fake addon (the real calls are checked under Wine and, for what Wine
// stubs, by the manual checks in test/windows/README.md): arguments, idempotence,
// conflict messages, list formatting, --json, exit codes.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createProgram, report } = require('../../../src/cli')
const { createServiceConfig } = require('../../../src/httpsys/service-config')
const { createFakeAddon } = require('../../helpers/fake-addon')
const { validate } = require('../../../src/config')
const { setup } = require('../../../src/cli/start')
const { setupDeps } = require('../../../src/cli/setup-deps')

const A = 'aa'.repeat(20)
const B = 'bb'.repeat(20)

let dir
const env = { ...process.env }
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-setup-'))
  process.env.USERDOMAIN = 'BUILD'
  process.env.USERNAME = 'ci'
})
afterEach(() => {
  process.env = { ...env }
  process.exitCode = undefined
  fs.rmSync(dir, { recursive: true, force: true })
})

function windows (addon = createFakeAddon()) {
  let text = ''
  const deps = { platform: 'win32', serviceConfig: createServiceConfig(() => addon), loadAddon: () => addon, out: (t) => { text += t } }
  return {
    addon,
    deps,
    async run (...args) {
      text = ''
      process.exitCode = undefined
      let code = 0
      const errors = []
      const spy = jest.spyOn(console, 'error').mockImplementation((m) => errors.push(m))
      try {
        await createProgram(deps).parseAsync(['node', 'httpsys', ...args])
        code = process.exitCode || 0
      } catch (err) {
        code = report(err)
      } finally {
        spy.mockRestore()
      }
      process.exitCode = undefined
      return { code, out: text, err: errors.join('\n') }
    }
  }
}

describe('httpsys urlacl', () => {
  test('add, add again, list, --json, delete twice', async () => {
    const w = windows()
    expect(await w.run('urlacl', 'add', 'http://+:8080/api')).toEqual({ code: 0, out: 'reserved http://+:8080/api/ for BUILD\\ci (listen)\n', err: '' })
    expect((await w.run('urlacl', 'add', 'http://+:8080/api/')).out).toBe('http://+:8080/api/ is already reserved for BUILD\\ci (listen): nothing changed\n')
    await w.run('urlacl', 'add', 'http://+:9000/', '--sddl', 'D:(A;;GA;;;WD)')
    expect((await w.run('urlacl', 'list')).out).toBe([
      'prefix              accounts (rights)',
      'http://+:8080/api/  BUILD\\ci (listen)',
      'http://+:9000/      Everyone (listen, delegate)',
      ''
    ].join('\n'))
    const json = JSON.parse((await w.run('urlacl', 'list', '--json')).out)
    expect(json[1]).toEqual({ prefix: 'http://+:9000/', sddl: 'D:(A;;GA;;;WD)', users: [{ sid: 'S-1-1-0', account: 'Everyone', rights: ['listen', 'delegate'] }] })
    expect((await w.run('urlacl', 'delete', 'http://+:9000/')).out).toBe('deleted the reservation of http://+:9000/\n')
    expect(await w.run('urlacl', 'delete', 'http://+:9000/')).toEqual({ code: 0, out: 'http://+:9000/ is not reserved: nothing to delete\n', err: '' })
  })

  test('a conflict, an unknown user and a missing elevation exit 1 with the fix', async () => {
    const w = windows()
    await w.run('urlacl', 'add', 'http://+:80/', '--user', 'Everyone')
    const conflict = await w.run('urlacl', 'add', 'http://+:80/')
    expect(conflict.code).toBe(1)
    expect(conflict.err).toMatch(/^httpsys: The URL prefix http:\/\/\+:80\/ is already reserved for Everyone .*`httpsys urlacl delete http:\/\/\+:80\/`.*\(ERR_HTTPSYS_URLACL_CONFLICT\)$/)
    expect((await w.run('urlacl', 'add', 'http://+:81/', '--user', 'Nobody')).err).toMatch(/ERR_HTTPSYS_ACCOUNT_UNKNOWN/)
    w.addon.machine.denied = true
    const denied = await w.run('urlacl', 'add', 'http://+:82/')
    expect(denied.code).toBe(1)
    expect(denied.err).toMatch(/elevated prompt .*`httpsys urlacl add http:\/\/\+:82\/`.*\(ERR_HTTPSYS_NOT_ELEVATED\)/)
  })

  test('a missing argument is a usage error (exit 2)', async () => {
    const w = windows()
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation(() => true)
    try {
      expect((await w.run('urlacl', 'add')).code).toBe(2)
    } finally {
      spy.mockRestore()
    }
  })

  test('on Linux it says what it is for and that the hub needs none, exit 0', async () => {
    let text = ''
    await createProgram({ platform: 'linux', out: (t) => { text += t } }).parseAsync(['node', 'httpsys', 'urlacl', 'add', 'http://+:8080/'])
    expect(text).toMatch(/exists on Windows only.*httpsys's native router.*needs no URL reservation/)
  })
})

describe('httpsys cert', () => {
  test('add by thumbprint, again, list with shadowing notes, delete', async () => {
    const w = windows()
    w.addon.addCertificate(A, { subject: 'CN=example.com', notAfter: Date.parse('2099-01-01') })
    expect((await w.run('cert', 'add', '--port', '443', '--thumbprint', A)).out).toBe(`0.0.0.0:443 now serves ${A}\n`)
    expect((await w.run('cert', 'add', '--port', '443', '--thumbprint', A)).out).toBe(`0.0.0.0:443 already serves ${A}: nothing changed\n`)
    await w.run('cert', 'add', '--port', '443', '--ip', '10.1.1.1', '--thumbprint', A)
    const list = (await w.run('cert', 'list')).out
    expect(list).toContain(`0.0.0.0:443   ${A}  CN=example.com  ok until 2099-01-01  no           httpsys`)
    expect(list).toContain('0.0.0.0:443: shadowed by 10.1.1.1:443 for connections to 10.1.1.1')
    expect(JSON.parse((await w.run('cert', 'list', '--json')).out)).toHaveLength(2)
    expect((await w.run('cert', 'delete', '--port', '443', '--ip', '10.1.1.1')).out).toBe('deleted the binding of 10.1.1.1:443\n')
  })

  test('--client-cert: the binding asks clients for a certificate, and list says so', async () => {
    const w = windows()
    w.addon.addCertificate(A, { subject: 'CN=example.com', notAfter: Date.parse('2099-01-01') })
    expect((await w.run('cert', 'add', '--port', '443', '--thumbprint', A, '--client-cert')).out)
      .toBe(`0.0.0.0:443 now serves ${A}, asking clients for a certificate\n`)
    expect((await w.run('cert', 'add', '--port', '443', '--thumbprint', A, '--client-cert', '--no-revocation-check')).out)
      .toBe(`0.0.0.0:443 now serves ${A}, asking clients for a certificate\n`)
    expect((await w.run('cert', 'list')).out).toContain('ok until 2099-01-01  asked, no revocation check  httpsys')
    const r = await w.run('cert', 'add', '--port', '443', '--thumbprint', A, '--no-revocation-check')
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/--no-revocation-check.*goes with --client-cert/)
  })

  test('a certificate not in the store is refused before binding (exit 1, with the fix)', async () => {
    const w = windows()
    const r = await w.run('cert', 'add', '--port', '443', '--thumbprint', A)
    expect(r.code).toBe(1)
    expect(r.err).toMatch(/is not in LocalMachine\\My\. Import it with its private key \(`httpsys cert add --port 443 --pfx site\.pfx`\).*ERR_HTTPSYS_CERT_UNUSABLE/)
  })

  test('--pfx imports first; the passphrase may come from HTTPSYS_PFX_PASSPHRASE', async () => {
    const w = windows()
    const pfx = path.join(dir, 'site.pfx')
    fs.writeFileSync(pfx, 'fake')
    process.env.HTTPSYS_PFX_PASSPHRASE = 'wrong'
    expect((await w.run('cert', 'add', '--port', '443', '--pfx', pfx)).err).toMatch(/the passphrase is wrong.*ERR_HTTPSYS_CERT_FILE/)
    process.env.HTTPSYS_PFX_PASSPHRASE = 'right'
    expect((await w.run('cert', 'add', '--port', '443', '--pfx', pfx)).out).toBe(`0.0.0.0:443 now serves ${'a1'.repeat(20)}\n`)
  })
})

describe('httpsys doctor (Windows)', () => {
  function configFile (apps, extra = '') {
    fs.writeFileSync(path.join(dir, 'app.js'), '')
    const file = path.join(dir, 'httpsys.config.js')
    fs.writeFileSync(file, `module.exports = { apps: ${JSON.stringify(apps)}${extra} }`)
    return file
  }

  test('every check passes: exit 0, with what was checked', async () => {
    const w = windows()
    w.addon.machine.elevated = false
    w.addon.addCertificate(A, { subject: 'CN=site' })
    await w.run('urlacl', 'add', 'http://+:8080/')
    await w.run('urlacl', 'add', 'https://+:8443/')
    await w.run('cert', 'add', '--port', '8443', '--thumbprint', A)
    const file = configFile([{ script: 'app.js', urls: ['http://+:8080/api/', 'https://+:8443/'] }])
    const r = await w.run('doctor', '-c', file)
    expect(r.code).toBe(0)
    expect(r.out).toMatch(/^ok {4}the HTTP service \(HTTP\.SYS\) is running$/m)
    expect(r.out).toMatch(/^ok {4}port 8080 is free for HTTP\.SYS/m)
    expect(r.out).toMatch(/^ok {4}http:\/\/\+:8080\/api\/ \(app\) is covered by the reservation http:\/\/\+:8080\/ for BUILD\\ci$/m)
    expect(r.out).toMatch(/^ok {4}the binding 0\.0\.0\.0:8443 serves CN=site until /m)
    expect(r.out).toMatch(/^no problems/m)
  })

  test('problems: a port held by another program, a missing reservation, an https prefix without a certificate, the HTTP service stopped', async () => {
    const w = windows()
    w.addon.machine.elevated = false
    w.addon.machine.services.HTTP = { state: 'stopped', startType: 'demand' }
    w.addon.machine.listeners.push({ address: '0.0.0.0', port: 8080, pid: 4242, family: 4 }, { address: '0.0.0.0', port: 8443, pid: 4, family: 4 })
    w.addon.machine.processes[4242] = 'nginx.exe'
    const file = configFile([{ script: 'app.js', urls: ['http://+:8080/', 'https://shop.example:8443/'] }])
    const r = await w.run('doctor', '-c', file)
    expect(r.code).toBe(1)
    expect(r.out).toContain('FAIL  the HTTP service (HTTP.SYS) is stopped\n      fix: run elevated: `net start http`')
    expect(r.out).toContain('FAIL  port 8080 is held by nginx.exe (pid 4242), not by HTTP.SYS')
    expect(r.out).toContain('ok    port 8443 is free for HTTP.SYS')
    expect(r.out).toContain('FAIL  no URL reservation covers http://+:8080/ (app)')
    expect(r.out).toContain('fix: run once, elevated: `httpsys urlacl add http://+:8080/ --user BUILD\\ci`')
    expect(r.out).toContain('FAIL  https://shop.example:8443/ (app) has no certificate binding')
    expect(r.out).toContain('`httpsys cert add --port 8443 --host shop.example --pfx site.pfx`')
    const json = JSON.parse((await w.run('doctor', '-c', file, '--json')).out)
    expect(json.ok).toBe(false)
    expect(json.findings.filter((f) => f.level === 'error').map((f) => f.area)).toEqual(['service', 'ports', 'urlacl', 'urlacl', 'cert'])
  })

  test('a reservation for another account, and an expired certificate', async () => {
    const w = windows()
    w.addon.machine.elevated = false
    w.addon.addCertificate(A, { notAfter: Date.parse('2022-02-02') })
    w.addon.sslCertSet({ ip: '0.0.0.0', port: 443, hash: Buffer.from(A, 'hex'), appId: '{x}', store: 'MY' }, false)
    w.addon.urlAclSet('https://+:443/', 'D:(A;;GX;;;S-1-5-20)')
    const file = configFile([{ script: 'app.js', urls: ['https://+:443/'] }])
    const r = await w.run('doctor', '-c', file)
    expect(r.code).toBe(1)
    expect(r.out).toContain('FAIL  https://+:443/ (app) is covered by the reservation https://+:443/, but for S-1-5-20, not for BUILD\\ci')
    expect(r.out).toContain(`FAIL  the binding 0.0.0.0:443 uses the certificate ${A}, but it expired on 2022-02-02`)
  })

  test('the addon not loading is the one finding, with the fix', async () => {
    const w = windows()
    w.deps.loadAddon = () => { throw new Error('not built') }
    const r = await w.run('doctor')
    expect(r.code).toBe(1)
    expect(r.out).toMatch(/FAIL {2}the HTTP.SYS addon does not load: not built\n {6}fix: reinstall httpsys-cli/)
  })
})

describe('httpsys start --setup (Windows)', () => {
  function config (raw) {
    fs.writeFileSync(path.join(dir, 'app.js'), '')
    return validate(raw, { baseDir: dir })
  }

  test('not elevated: prints the exact commands and starts nothing', () => {
    const addon = createFakeAddon()
    addon.machine.elevated = false
    let text = ''
    const d = setupDeps({ platform: 'win32', serviceConfig: createServiceConfig(() => addon), out: (t) => { text += t } })
    const c = config({ apps: [{ script: 'app.js', urls: ['http://+:8080/', 'https://+:8443/'] }], tls: [{ port: 8443, thumbprint: A }] })
    expect(() => setup(d, c)).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_SETUP_REQUIRED', count: 3 }))
    expect(text).toBe([
      '--setup: run these once from an elevated prompt (or `httpsys start --setup` there):',
      '  httpsys urlacl add http://+:8080/ --user BUILD\\ci',
      '  httpsys urlacl add https://+:8443/ --user BUILD\\ci',
      `  httpsys cert add --port 8443 --thumbprint ${A}`,
      ''
    ].join('\n'))
    expect(addon.configCalls).toEqual([])
  })

  test('elevated: makes them, then a second run finds nothing to do', () => {
    const addon = createFakeAddon()
    addon.addCertificate(A)
    let text = ''
    const d = setupDeps({ platform: 'win32', serviceConfig: createServiceConfig(() => addon), out: (t) => { text += t } })
    const c = config({ apps: [{ script: 'app.js', urls: ['http://+:8080/', 'http://localhost:9000/'] }], tls: [{ port: 8443, thumbprint: A }] })
    setup(d, c)
    expect(text).toBe([
      '--setup: reserve http://+:8080/ for BUILD\\ci: done',
      `--setup: bind the certificate ${A} to 0.0.0.0:8443: done`,
      ''
    ].join('\n'))
    text = ''
    setup(d, c)
    expect(text).toBe('--setup: every URL reservation and certificate binding the config needs is in place\n')
  })

  test('a tls entry with requestCert: the binding is made asking clients for a certificate, and one that does not ask is changed', () => {
    const addon = createFakeAddon()
    addon.addCertificate(A)
    addon.addCertificate(B)
    addon.sslCertSet({ ip: '0.0.0.0', port: 9443, hash: Buffer.from(B, 'hex'), appId: '{x}', store: 'MY' }, false)
    let text = ''
    const d = setupDeps({ platform: 'win32', serviceConfig: createServiceConfig(() => addon), out: (t) => { text += t } })
    const c = config({ apps: [{ script: 'app.js', urls: ['http://localhost:9000/'] }], tls: [{ port: 8443, thumbprint: A, requestCert: true }, { port: 9443, thumbprint: B, requestCert: true }] })
    addon.machine.elevated = false
    expect(() => setup(d, c)).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_SETUP_REQUIRED', count: 2 }))
    expect(text).toContain(`  httpsys cert add --port 8443 --thumbprint ${A} --client-cert\n`)
    expect(text).toContain(`  httpsys cert add --port 9443 --thumbprint ${B} --client-cert\n`)
    addon.machine.elevated = true
    text = ''
    setup(d, c)
    expect(addon.sslCertList(false).records.map((r) => [r.port, r.hash, r.flags])).toEqual([[9443, B, 0x2], [8443, A, 0x2]])
    text = ''
    setup(d, c)
    expect(text).toBe('--setup: every URL reservation and certificate binding the config needs is in place\n')
  })
})
