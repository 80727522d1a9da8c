'use strict'

// The thin layer over the addon's service configuration: Win32 codes become the coded
// errors a user can act on; "not there" and "already there" are answers, not errors.

const { createServiceConfig, thumbprint } = require('../../../src/httpsys/service-config')
const { createFakeAddon } = require('../../helpers/fake-addon')

const HASH = 'ab:cd ef 01 23 45 67 89 ab cd ef 01 23 45 67 89 ab cd ef 01'

function setup () {
  const addon = createFakeAddon()
  return { addon, config: createServiceConfig(() => addon) }
}

describe('httpsys service config: what each Win32 code becomes', () => {
  test('5 (not elevated) is ERR_HTTPSYS_NOT_ELEVATED with the command to run elevated', () => {
    const { addon, config } = setup()
    addon.machine.denied = true
    expect(() => config.urlAclSet('http://+:80/', 'D:(A;;GX;;;S-1-1-0)', { what: 'Reserving http://+:80/', command: 'httpsys urlacl add http://+:80/' }))
      .toThrow(expect.objectContaining({
        code: 'ERR_HTTPSYS_NOT_ELEVATED',
        win32: 5,
        message: expect.stringMatching(/Administrator rights.*elevated prompt.*`httpsys urlacl add http:\/\/\+:80\/`/)
      }))
  })

  test('1332 (unknown account) is ERR_HTTPSYS_ACCOUNT_UNKNOWN naming the account and the SID way out', () => {
    const { config } = setup()
    expect(() => config.lookupAccount('Jeder')).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_ACCOUNT_UNKNOWN', account: 'Jeder', message: expect.stringContaining('S-1-1-0')
    }))
  })

  test('.\\user (a local account, as sc.exe writes it) is looked up on this computer: LookupAccountNameW knows no "."', () => {
    const { config } = setup()
    const saved = process.env.COMPUTERNAME
    process.env.COMPUTERNAME = 'WEB01'
    try {
      expect(config.lookupAccount('.\\svcuser')).toMatchObject({ sid: 'S-1-5-21-9-9-9-1002', domain: 'WEB01' })
      // an unknown one still names what the user typed
      expect(() => config.lookupAccount('.\\nobody')).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_ACCOUNT_UNKNOWN', account: '.\\nobody' }))
    } finally {
      if (saved === undefined) delete process.env.COMPUTERNAME
      else process.env.COMPUTERNAME = saved
    }
  })

  test('183 and 2 are answers: "exists" and false', () => {
    const { config } = setup()
    expect(config.urlAclSet('http://+:80/', 'D:(A;;GX;;;S-1-1-0)')).toBe('set')
    expect(config.urlAclSet('http://+:80/', 'D:(A;;GX;;;S-1-1-0)')).toBe('exists')
    expect(config.urlAclDelete('http://+:80/')).toBe(true)
    expect(config.urlAclDelete('http://+:80/')).toBe(false)
    expect(config.urlAclList()).toEqual([])
    expect(config.sslCertDelete({ port: 443 })).toBe(false)
  })

  test('an update where the OS has no HttpUpdateServiceConfiguration deletes and sets', () => {
    const { addon, config } = setup()
    config.sslCertSet({ port: 443, hash: HASH })
    addon.canUpdate = false
    config.sslCertSet({ port: 443, hash: '11'.repeat(20) }, { update: true })
    expect(config.sslCertList()[0].hash).toBe('11'.repeat(20))
    expect(addon.configCalls.map((c) => c[0])).toEqual(['sslCertSet', 'sslCertSet', 'sslCertDelete', 'sslCertSet'])
  })

  test('an update by delete and set whose set fails puts the old binding back, every field of it', () => {
    const { addon, config } = setup()
    config.sslCertSet({ port: 443, hash: HASH, appId: '{4dc3e181-e14b-4a21-b022-59fc669b0914}', flags: 0x1, revocationFreshnessTime: 600, ctlStoreName: 'Root' })
    const before = config.sslCertList()
    addon.canUpdate = false
    addon.machine.codes.sslCertSet = (spec) => spec.hash.toString('hex') === '11'.repeat(20) ? 1312 : 0
    expect(() => config.sslCertSet({ port: 443, hash: '11'.repeat(20) }, { update: true }, { thumbprint: '11'.repeat(20) }))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CERT_UNUSABLE', win32: 1312, restored: true }))
    expect(config.sslCertList()).toEqual(before)
    expect(before[0]).toMatchObject({ flags: 0x1, revocationFreshnessTime: 600, ctlStoreName: 'Root' })
  })

  test('a wrong PFX passphrase is ERR_HTTPSYS_CERT_FILE saying so', () => {
    const { config } = setup()
    expect(() => config.certImport({ pfx: Buffer.from('x'), passphrase: 'wrong' }, { file: 'site.pfx' }))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CERT_FILE', message: expect.stringContaining('the passphrase is wrong') }))
  })

  test('thumbprints are taken as people paste them, and refused when they are not 40 hex digits', () => {
    expect(thumbprint(HASH).toString('hex')).toBe('abcdef0123456789abcdef0123456789abcdef01')
    // certmgr's copy puts an invisible left-to-right mark in front
    expect(thumbprint('\u200eABCDEF0123456789ABCDEF0123456789ABCDEF01').toString('hex')).toBe('abcdef0123456789abcdef0123456789abcdef01')
    expect(() => thumbprint('abc')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }))
  })
})
