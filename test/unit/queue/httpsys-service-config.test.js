'use strict'

const { createServiceConfig, thumbprint } = require('../../../src/queue/httpsys/service-config')
const { createFakeAddon } = require('../../helpers/fake-addon')

const HASH = 'ab:cd ef 01 23 45 67 89 ab cd ef 01 23 45 67 89 ab cd ef 01'

function setup () {
  const binding = createFakeAddon()
  return { binding, config: createServiceConfig(() => binding) }
}

describe('httpsys service config: URL reservations', () => {
  test('a user is reserved by SID, not by name (names are localised)', () => {
    const { binding, config } = setup()
    expect(config.urlAclAdd('http://+:80/', { user: 'BUILD\\ci' })).toEqual({ prefix: 'http://+:80/', sddl: 'D:(A;;GX;;;S-1-5-21-1-2-3-1001)' })
    expect(binding.configCalls).toEqual([['urlAclSet', 'http://+:80/', 'D:(A;;GX;;;S-1-5-21-1-2-3-1001)']])
    expect(config.urlAclList()).toEqual([{ prefix: 'http://+:80/', sddl: 'D:(A;;GX;;;S-1-5-21-1-2-3-1001)' }])
    expect(config.urlAclList('http://+:81/')).toEqual([])
  })

  test('without a user the current one (USERDOMAIN\\USERNAME) is reserved', () => {
    const saved = { ...process.env }
    process.env.USERDOMAIN = 'BUILD'
    process.env.USERNAME = 'ci'
    try {
      const { config } = setup()
      expect(config.urlAclAdd('http://+:8080/').sddl).toBe('D:(A;;GX;;;S-1-5-21-1-2-3-1001)')
    } finally {
      process.env = saved
    }
  })

  test('an existing reservation is a coded error unless replaced', () => {
    const { config } = setup()
    config.urlAclAdd('http://+:80/', { sddl: 'D:(A;;GX;;;S-1-1-0)' })
    expect(() => config.urlAclAdd('http://+:80/', { sddl: 'D:(A;;GX;;;S-1-1-0)' })).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_NATIVE_CALL', syscall: 'HttpSetServiceConfiguration', win32: 183, win32Name: 'ERROR_ALREADY_EXISTS', prefix: 'http://+:80/'
    }))
    expect(config.urlAclAdd('http://+:80/', { user: 'Everyone', replace: true }).sddl).toBe('D:(A;;GX;;;S-1-1-0)')
  })

  test('an unknown account is ERROR_NONE_MAPPED from LookupAccountNameW', () => {
    const { config } = setup()
    expect(() => config.urlAclAdd('http://+:80/', { user: 'NOPE\\nobody' })).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_NATIVE_CALL', syscall: 'LookupAccountNameW', win32: 1332, account: 'NOPE\\nobody'
    }))
  })

  test('deleting a missing reservation reports ERROR_FILE_NOT_FOUND', () => {
    const { config } = setup()
    expect(() => config.urlAclDelete('http://+:80/')).toThrow(expect.objectContaining({ win32: 2 }))
  })
})

describe('httpsys service config: certificate bindings', () => {
  test('ip:port and SNI host:port bindings, listed apart', () => {
    const { config } = setup()
    config.sslCertAdd({ port: 443, hash: HASH })
    config.sslCertAdd({ port: 443, host: 'example.com', hash: HASH })
    expect(config.sslCertList()).toEqual([expect.objectContaining({ ip: '0.0.0.0', port: 443, hash: 'abcdef0123456789abcdef0123456789abcdef01', store: 'MY' })])
    expect(config.sslCertList({ sni: true })).toEqual([expect.objectContaining({ host: 'example.com', port: 443 })])
    config.sslCertDelete({ port: 443, host: 'example.com' })
    expect(config.sslCertList({ sni: true })).toEqual([])
  })

  test('update swaps in place, or deletes and sets where the OS cannot update', () => {
    const { binding, config } = setup()
    config.sslCertAdd({ port: 443, hash: HASH })
    const other = '11'.repeat(20)
    config.sslCertAdd({ port: 443, hash: other }, { update: true })
    expect(config.sslCertList()[0].hash).toBe(other)
    binding.canUpdate = false
    config.sslCertAdd({ port: 443, hash: HASH }, { update: true })
    expect(config.sslCertList()[0].hash).toBe('abcdef0123456789abcdef0123456789abcdef01')
    expect(binding.configCalls.map((c) => c[0])).toEqual(['sslCertSet', 'sslCertSet', 'sslCertSet', 'sslCertDelete', 'sslCertSet'])
  })

  test('a binding that exists is a coded error naming it', () => {
    const { config } = setup()
    config.sslCertAdd({ ip: '10.0.0.1', port: 8443, hash: HASH })
    expect(() => config.sslCertAdd({ ip: '10.0.0.1', port: 8443, hash: HASH })).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_NATIVE_CALL', win32: 183, binding: '10.0.0.1:8443'
    }))
  })

  test('a thumbprint must be 40 hex digits', () => {
    expect(thumbprint(HASH)).toHaveLength(20)
    expect(() => thumbprint('abc')).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }))
  })
})
