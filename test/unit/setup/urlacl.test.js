'use strict'

// `httpsys urlacl`: reservations by SID, idempotent adds, conflicts that name the owner,
// prefixes checked before any call.

const { createServiceConfig } = require('../../../src/httpsys/service-config')
const { createUrlAcl, covers, needsReservation } = require('../../../src/setup/urlacl')
const { createFakeAddon } = require('../../helpers/fake-addon')

function setup () {
  const addon = createFakeAddon()
  const urlacl = createUrlAcl(createServiceConfig(() => addon))
  return { addon, urlacl }
}

const env = { ...process.env }
beforeEach(() => {
  process.env.USERDOMAIN = 'BUILD'
  process.env.USERNAME = 'ci'
})
afterEach(() => { process.env = { ...env } })

describe('urlacl add', () => {
  test('the current user by default, stored as a SID; the prefix is normalised first', () => {
    const { addon, urlacl } = setup()
    const r = urlacl.add('HTTP://+:8080/api')
    expect(r).toEqual({
      prefix: 'http://+:8080/api/',
      sddl: 'D:(A;;GX;;;S-1-5-21-1-2-3-1001)',
      users: [{ sid: 'S-1-5-21-1-2-3-1001', account: 'BUILD\\ci', rights: ['listen'] }],
      result: 'added'
    })
    expect(addon.configCalls).toEqual([['urlAclSet', 'http://+:8080/api/', 'D:(A;;GX;;;S-1-5-21-1-2-3-1001)']])
  })

  test('adding the same reservation again changes nothing and is not an error', () => {
    const { addon, urlacl } = setup()
    urlacl.add('http://+:8080/', { user: 'Everyone' })
    expect(urlacl.add('http://+:8080/', { sddl: 'D:(A;;GX;;;WD)' }).result).toBe('unchanged')
    expect(addon.configCalls.filter((c) => c[0] === 'urlAclSet')).toHaveLength(1)
  })

  test('a reservation for another account is a conflict naming the current owner and the fix', () => {
    const { urlacl } = setup()
    urlacl.add('http://+:8080/', { user: 'Everyone' })
    expect(() => urlacl.add('http://+:8080/', { user: 'BUILD\\ci' })).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_URLACL_CONFLICT',
      message: expect.stringMatching(/already reserved for Everyone.*httpsys urlacl delete http:\/\/\+:8080\/.*httpsys urlacl add http:\/\/\+:8080\/ --user BUILD\\ci/)
    }))
  })

  test('a malformed prefix is refused before any call, naming the rule', () => {
    const { addon, urlacl } = setup()
    expect(() => urlacl.add('http://+/api/')).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_BAD_PREFIX', message: expect.stringContaining('a port is required') }))
    expect(() => urlacl.add('ftp://+:21/')).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_BAD_PREFIX' }))
    expect(addon.configCalls).toEqual([])
  })

  test('an unknown user, a bad --sddl, and --user with --sddl are clear errors', () => {
    const { urlacl } = setup()
    expect(() => urlacl.add('http://+:8080/', { user: 'NOPE\\nobody' })).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_ACCOUNT_UNKNOWN' }))
    expect(() => urlacl.add('http://+:8080/', { sddl: 'everyone please' })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }))
    expect(() => urlacl.add('http://+:8080/', { sddl: 'D:(A;;GX;;;WD)', user: 'Everyone' })).toThrow(/cannot be combined with --user/)
  })

  test('a SID may be given as --user', () => {
    const { urlacl } = setup()
    expect(urlacl.add('http://+:8080/', { user: 's-1-5-20' }).sddl).toBe('D:(A;;GX;;;S-1-5-20)')
  })

  test('not elevated: ERR_HTTPSYS_NOT_ELEVATED with the exact command', () => {
    const { addon, urlacl } = setup()
    addon.machine.denied = true
    expect(() => urlacl.add('http://+:80/', { user: 'Everyone' })).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_NOT_ELEVATED', message: expect.stringContaining('`httpsys urlacl add http://+:80/ --user Everyone`')
    }))
  })
})

describe('Win32 errors of urlacl add, each a coded error with its fix', () => {
  test('87 (a prefix HTTP.SYS refuses although it is valid httpsys grammar): ERR_HTTPSYS_BAD_PREFIX saying what HTTP.SYS takes', () => {
    const { addon, urlacl } = setup()
    addon.machine.codes.urlAclSet = 87
    expect(() => urlacl.add('http://+:8080/api/', { user: 'Everyone' })).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_BAD_PREFIX',
      win32: 87,
      message: expect.stringMatching(/"http:\/\/\+:8080\/api\/": HTTP.SYS rejected it \(ERROR_INVALID_PARAMETER, 87\): it takes a host that is a name, \+, \* or an IP address .*or the SDDL D:\(A;;GX;;;S-1-1-0\) is not one it accepts/)
    }))
  })

  test('1312 and 1332 (an account Windows does not know): ERR_HTTPSYS_ACCOUNT_UNKNOWN naming it', () => {
    for (const code of [1312, 1332]) {
      const { addon, urlacl } = setup()
      addon.machine.codes.urlAclSet = code
      expect(() => urlacl.add('http://+:8080/', { sddl: 'D:(A;;GX;;;S-1-5-21-9-9-9-4242)' })).toThrow(expect.objectContaining({
        code: 'ERR_HTTPSYS_ACCOUNT_UNKNOWN',
        win32: code,
        message: expect.stringContaining('S-1-5-21-9-9-9-4242')
      }))
    }
  })
})

describe('urlacl delete and list', () => {
  test('deleting is idempotent; list names the accounts and their rights', () => {
    const { urlacl } = setup()
    urlacl.add('http://+:8081/', { user: 'BUILD\\ci' })
    urlacl.add('http://+:8080/', { sddl: 'D:(A;;GA;;;WD)' })
    expect(urlacl.list()).toEqual([
      { prefix: 'http://+:8080/', sddl: 'D:(A;;GA;;;WD)', users: [{ sid: 'S-1-1-0', account: 'Everyone', rights: ['listen', 'delegate'] }] },
      { prefix: 'http://+:8081/', sddl: 'D:(A;;GX;;;S-1-5-21-1-2-3-1001)', users: [{ sid: 'S-1-5-21-1-2-3-1001', account: 'BUILD\\ci', rights: ['listen'] }] }
    ])
    expect(urlacl.delete('http://+:8081')).toEqual({ prefix: 'http://+:8081/', deleted: true })
    expect(urlacl.delete('http://+:8081/')).toEqual({ prefix: 'http://+:8081/', deleted: false })
    expect(urlacl.list().map((r) => r.prefix)).toEqual(['http://+:8080/'])
  })
})

describe('which reservation covers a prefix', () => {
  test.each([
    ['http://+:8080/', 'http://+:8080/api/', true],
    ['http://+:8080/api/', 'http://+:8080/API/v1/', true],
    ['http://+:8080/api/', 'http://+:8080/', false],
    ['http://+:8080/api/', 'http://+:8080/apis/', false],
    // host categories are separate: + does not cover an explicit host
    ['http://+:8080/', 'http://localhost:8080/', false],
    ['http://*:8080/', 'http://+:8080/', false],
    ['http://+:8080/', 'https://+:8080/', false],
    ['http://+:8080/', 'http://+:8081/', false]
  ])('%s covers %s: %s', (reserved, registered, expected) => {
    expect(covers(reserved, registered)).toBe(expected)
  })

  test('http:// and https://localhost above port 1024 need no reservation; everything else does', () => {
    expect(needsReservation('http://localhost:8080/')).toBe(false)
    // https too: the reservation is about the prefix, the certificate binding is separate
    expect(needsReservation('https://localhost:8443/')).toBe(false)
    expect(needsReservation('https://localhost:443/')).toBe(true)
    expect(needsReservation('http://localhost:80/')).toBe(true)
    expect(needsReservation('http://127.0.0.1:8080/')).toBe(true)
    expect(needsReservation('http://+:8080/')).toBe(true)
  })
})

describe('reservedFor: the one check of start --setup and service install', () => {
  const { reservedFor } = require('../../../src/setup/urlacl')
  const r = (prefix, sid) => ({ prefix, sddl: `D:(A;;GX;;;${sid})` })
  const ME = 'S-1-5-21-1-2-3-1001'

  test('a reservation covering the prefix for the account itself, or for a group every account is in', () => {
    expect(reservedFor([r('http://+:8080/', ME)], 'http://+:8080/api/', ME)).toBe(true)
    expect(reservedFor([r('http://+:8080/', 'S-1-1-0')], 'http://+:8080/', ME)).toBe(true) // Everyone
    expect(reservedFor([r('http://+:8080/', 'S-1-5-11')], 'http://+:8080/', ME, 'service')).toBe(true) // Authenticated Users
    expect(reservedFor([r('http://+:8080/', 'S-1-5-21-9-9-9-500')], 'http://+:8080/', ME)).toBe(false)
    expect(reservedFor([r('http://+:8081/', ME)], 'http://+:8080/', ME)).toBe(false)
  })

  test('INTERACTIVE counts for a person at a prompt, not for a service; SERVICE the other way', () => {
    expect(reservedFor([r('http://+:8080/', 'S-1-5-4')], 'http://+:8080/', ME, 'interactive')).toBe(true)
    expect(reservedFor([r('http://+:8080/', 'S-1-5-4')], 'http://+:8080/', ME, 'service')).toBe(false)
    expect(reservedFor([r('http://+:8080/', 'S-1-5-6')], 'http://+:8080/', ME, 'service')).toBe(true)
  })
})
