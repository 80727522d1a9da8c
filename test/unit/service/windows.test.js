'use strict'

// Windows: the service `httpsys service install` creates, against the fake addon's
// service control manager (test/helpers/fake-addon.js): the command line the SCM runs,
// the account and its URL reservations, the recovery actions, what is refused and
// what is undone; uninstall and status. Under Wine the real calls run
// (test/windows/service-tests.js).

const service = require('../../../src/service')
const windows = require('../../../src/service/windows')
const { createScm } = require('../../../src/service/scm')
const { createServiceConfig } = require('../../../src/httpsys/service-config')
const { createFakeAddon } = require('../../helpers/fake-addon')
const { project } = require('./helpers')

const NODE = 'C:\\Program Files\\nodejs\\node.exe'
const BIN = 'C:\\tools\\httpsys\\node_modules\\httpsys-cli\\bin\\httpsys'

let p
afterEach(() => p && p.cleanup())

function win (addon = createFakeAddon(), extra = {}) {
  return {
    platform: 'win32',
    env: { USERPROFILE: 'C:\\Users\\alice', ProgramData: 'C:\\ProgramData', USERDOMAIN: 'BUILD', USERNAME: 'ci' },
    execPath: NODE,
    bin: BIN,
    loadAddon: () => addon,
    serviceConfig: createServiceConfig(() => addon),
    password: async () => 's3cret',
    sleep: async () => {},
    ...extra
  }
}

describe('pure parts', () => {
  test('the command line the SCM runs', () => {
    expect(windows.binPath({ execPath: NODE, bin: BIN, name: 'shop', configFile: 'D:\\sites\\shop\\httpsys.config.js' }))
      .toBe(`"${NODE}" "${BIN}" service run --name shop -c "D:\\sites\\shop\\httpsys.config.js"`)
  })

  test('from the single executable: the exe alone is the program (no node, no script)', () => {
    const exe = 'C:\\Tools\\httpsys.exe'
    const line = windows.binPath({ execPath: exe, bin: null, name: 'shop', configFile: 'D:\\sites\\shop\\httpsys.config.js' })
    expect(line).toBe(`"${exe}" service run --name shop -c "D:\\sites\\shop\\httpsys.config.js"`)
    expect(windows.isOurs({ binPath: line }, 'shop')).toBe(true)
  })

  test('a service SID is sc.exe showsid\'s', () => {
    expect(windows.serviceSid('TrustedInstaller')).toBe('S-1-5-80-956008885-3418522649-1831038044-1853292631-2271478464')
    expect(windows.serviceSid('trustedinstaller')).toBe(windows.serviceSid('TRUSTEDINSTALLER'))
  })

  test('accounts: the virtual one by default, built-in ones, real ones looked up', () => {
    const sc = createServiceConfig(() => createFakeAddon())
    expect(windows.resolveAccount(undefined, 'shop', sc)).toMatchObject({ kind: 'virtual', account: 'NT SERVICE\\shop', sid: windows.serviceSid('shop'), needsPassword: false })
    expect(windows.resolveAccount('nt service\\SHOP', 'shop', sc)).toMatchObject({ kind: 'virtual' })
    expect(() => windows.resolveAccount('NT SERVICE\\other', 'shop', sc)).toThrow(/virtual account of another service/)
    expect(windows.resolveAccount('LocalSystem', 'shop', sc)).toMatchObject({ account: null, admin: true })
    expect(windows.resolveAccount('networkservice', 'shop', sc)).toMatchObject({ account: 'NT AUTHORITY\\NetworkService', sid: 'S-1-5-20' })
    expect(windows.resolveAccount('BUILD\\ci', 'shop', sc)).toMatchObject({ kind: 'account', account: 'BUILD\\ci', sid: 'S-1-5-21-1-2-3-1001', needsPassword: true })
    expect(() => windows.resolveAccount('BUILD\\nobody', 'shop', sc)).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_ACCOUNT_UNKNOWN' }))
  })

  test('an addon built before `httpsys service` fails with the fix, when first used', () => {
    const addon = createFakeAddon()
    delete addon.serviceHostStatus
    const scm = createScm(() => addon)
    expect(() => scm.query('x')).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_NATIVE_UNAVAILABLE', message: expect.stringMatching(/no serviceHostStatus.*rebuild/) }))
  })
})

describe('install', () => {
  test('creates an auto-start service as NT SERVICE\\<name>, with its reservations, recovery actions and stop time', async () => {
    p = project({ api: { urls: ['http://+:8080/api/'], kill_timeout: '20s' }, web: { urls: ['http://+:8080/', 'http://localhost:9000/'] } })
    const addon = createFakeAddon()
    const r = await service.install({ config: p.config, name: 'shop' }, win(addon))
    const sid = windows.serviceSid('shop')
    expect(r.binPath).toBe(`"${NODE}" "${BIN}" service run --name shop -c "${p.config}"`)
    expect(r.account).toBe('NT SERVICE\\shop')
    // localhost above 1024 needs no reservation; the others are made for the service's SID
    expect(r.done).toEqual(['reserve http://+:8080/api/ for NT SERVICE\\shop', 'reserve http://+:8080/ for NT SERVICE\\shop'])
    expect(addon.urlAclList().records).toEqual([
      { prefix: 'http://+:8080/api/', sddl: `D:(A;;GX;;;${sid})` },
      { prefix: 'http://+:8080/', sddl: `D:(A;;GX;;;${sid})` }
    ])
    const s = addon.scm.services.get('shop')
    expect(s).toMatchObject({
      binPath: r.binPath,
      startType: 'auto',
      account: 'NT SERVICE\\shop',
      dependencies: ['HTTP'],
      failureActions: { resetPeriod: 86400, actions: [{ type: 'restart', delay: 5000 }, { type: 'restart', delay: 10000 }, { type: 'restart', delay: 30000 }] },
      failureActionsOnNonCrashFailures: true,
      preshutdownTimeout: 32000,
      sidType: 'unrestricted'
    })
    expect(s.description).toContain(p.config)
    expect(r.commands).toEqual(['sc.exe start shop'])
    expect(r.stopTimeoutMs).toBe(32000)
    expect(r.notes.join('\n')).toMatch(/httpsys ls` from this prompt does not reach it/)
    expect(r.notes.join('\n')).toContain('C:\\ProgramData\\httpsys\\shop\\service.log')
    // the reservation is the same again: nothing to do on a second look
    expect(windows.setupSteps({ apps: [{ urls: ['http://+:8080/api/'] }], tls: [] }, createServiceConfig(() => addon), windows.resolveAccount(undefined, 'shop'))).toEqual([])
  })

  test('folders in a user profile get the icacls line the account needs', async () => {
    p = project()
    const r = await service.install({ config: p.config, name: 'shop' }, win(createFakeAddon(), {
      execPath: 'C:\\Users\\alice\\AppData\\Local\\fnm\\node.exe',
      bin: 'C:\\Users\\alice\\AppData\\Roaming\\npm\\node_modules\\httpsys-cli\\bin\\httpsys'
    }))
    const notes = r.notes.join('\n')
    expect(notes).toContain('icacls "C:\\Users\\alice\\AppData\\Local\\fnm" /grant "NT SERVICE\\shop:(OI)(CI)RX"')
    expect(notes).toContain('icacls "C:\\Users\\alice\\AppData\\Roaming\\npm\\node_modules\\httpsys-cli" /grant "NT SERVICE\\shop:(OI)(CI)RX"')
  })

  test('LocalSystem needs no reservation; a real account gets its password; hub configs depend on nothing', async () => {
    p = project({ web: { urls: ['http://+:8080/'] } }, { backend: 'hub' })
    const addon = createFakeAddon()
    const r = await service.install({ config: p.config, name: 'a', user: 'LocalSystem' }, win(addon))
    expect(r.done).toEqual([])
    expect(addon.scm.services.get('a')).toMatchObject({ account: 'LocalSystem', dependencies: [] })
    expect(r.notes.join('\n')).toMatch(/LocalSystem is an administrator/)
    const asked = []
    await service.install({ config: p.config, name: 'b', user: 'BUILD\\ci' }, win(addon, { password: async (account) => { asked.push(account.shown); return 'pw' } }))
    expect(asked).toEqual(['BUILD\\ci'])
    expect(addon.scm.calls.find((c) => c[0] === 'serviceCreate' && c[1].name === 'b')[1]).toMatchObject({ account: 'BUILD\\ci', password: '<secret>' })
  })

  test('not elevated, an existing service, a refused setting: coded errors, nothing half-made', async () => {
    p = project({ web: { urls: ['http://+:8080/'] } })
    const addon = createFakeAddon()
    addon.machine.elevated = false
    await expect(service.install({ config: p.config, name: 'shop' }, win(addon))).rejects.toMatchObject({
      code: 'ERR_HTTPSYS_NOT_ELEVATED',
      message: expect.stringMatching(/^Installing the Windows service shop needs Administrator rights: the service control manager answered OpenSCManagerW .*`httpsys service install -c .* --name shop`/)
    })
    expect(addon.scm.calls).toEqual([])
    addon.machine.elevated = true
    await service.install({ config: p.config, name: 'shop' }, win(addon))
    await expect(service.install({ config: p.config, name: 'shop' }, win(addon))).rejects.toMatchObject({ code: 'ERR_HTTPSYS_SERVICE_EXISTS', message: expect.stringContaining('httpsys service uninstall --name shop') })
    addon.scm.api.serviceCreate({ name: 'foreign', binPath: 'C:\\x.exe', startType: 'auto' })
    await expect(service.install({ config: p.config, name: 'foreign' }, win(addon))).rejects.toMatchObject({ code: 'ERR_HTTPSYS_SERVICE_EXISTS', message: expect.stringContaining('httpsys did not write it') })
    // a setting the SCM refuses with something else than "unknown level": the service goes again
    const broken = createFakeAddon()
    const configure = broken.serviceConfigure
    broken.serviceConfigure = (name, options) => options.failureActions ? { code: 87, syscall: 'ChangeServiceConfig2W', level: 'failureActions' } : configure(name, options)
    await expect(service.install({ config: p.config, name: 'shop' }, win(broken))).rejects.toMatchObject({
      code: 'ERR_HTTPSYS_SERVICE_CALL', message: expect.stringMatching(/ChangeServiceConfig2W for the service "shop": ERROR_INVALID_PARAMETER \(87\), setting failureActions/)
    })
    expect(broken.scm.services.has('shop')).toBe(false)
  })

  test('settings this Windows does not know (Wine: ERROR_INVALID_LEVEL) are reported, not fatal', async () => {
    p = project()
    const addon = createFakeAddon()
    addon.scm.unsupported.add('failureActionsOnNonCrashFailures').add('sidType')
    const r = await service.install({ config: p.config, name: 'shop' }, win(addon))
    expect(r.unsupported).toEqual(['recovery after a stop with an error code', 'the service SID type'])
    expect(r.notes.join('\n')).toContain('did not take recovery after a stop with an error code, the service SID type (ERROR_INVALID_LEVEL)')
  })

  test('--system is not a Windows option', async () => {
    p = project()
    await expect(service.install({ config: p.config, system: true }, win())).rejects.toBeInstanceOf(service.UsageError)
  })
})

describe('uninstall and status', () => {
  test('status: what the SCM has; uninstall: stop (waiting for it), delete, name the reservations left', async () => {
    p = project({ web: { urls: ['http://+:8080/'] } })
    const addon = createFakeAddon()
    const deps = win(addon)
    expect(await service.status({ name: 'shop' }, deps)).toMatchObject({ installed: false })
    await service.install({ config: p.config, name: 'shop' }, deps)
    addon.scm.api.serviceControl('shop', 'start')
    const s = await service.status({ name: 'shop' }, deps)
    expect(s).toMatchObject({
      installed: true,
      ours: true,
      state: 'running',
      pid: 4242,
      startType: 'auto',
      account: 'NT SERVICE\\shop',
      configFile: p.config,
      log: 'C:\\ProgramData\\httpsys\\shop\\service.log'
    })
    addon.scm.slowStop.set('shop', 3)
    const u = await service.uninstall({ name: 'shop' }, deps)
    expect(u).toEqual({ platform: 'win32', kind: 'Windows service', name: 'shop', removed: true, stopped: true, reservations: ['http://+:8080/'] })
    expect(addon.scm.calls.filter((c) => c[0] !== 'serviceConfigure').map((c) => c[0])).toEqual(['serviceCreate', 'serviceControl', 'serviceControl', 'serviceDelete'])
    expect(await service.uninstall({ name: 'shop' }, deps)).toMatchObject({ removed: false })
  })

  test('a service that does not run httpsys is not ours to delete; a stop that never ends is reported', async () => {
    const addon = createFakeAddon()
    addon.scm.api.serviceCreate({ name: 'W3SVC', binPath: 'C:\\Windows\\system32\\svchost.exe -k iissvcs', startType: 'auto' })
    await expect(service.uninstall({ name: 'W3SVC' }, win(addon))).rejects.toMatchObject({ code: 'ERR_HTTPSYS_SERVICE_DENIED', message: expect.stringContaining('sc.exe delete W3SVC') })
    p = project()
    await service.install({ config: p.config, name: 'shop' }, win(addon))
    addon.scm.api.serviceControl('shop', 'start')
    addon.scm.slowStop.set('shop', Infinity)
    await expect(service.uninstall({ name: 'shop' }, win(addon, { waitMs: 0 }))).rejects.toMatchObject({ code: 'ERR_HTTPSYS_SERVICE_CALL', message: expect.stringContaining('still stop_pending') })
  })
})
