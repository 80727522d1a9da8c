'use strict'

// A standalone listen() that cannot bind is the same 'error' whoever bound: node (its
// system error) or the router where node cannot hand a socket over (Windows, and
// HTTPSYS_STANDALONE_BIND=router: its coded answer). src/preload/standalone-own.js bindError.

const { codes } = require('../../src/errors')
const { bindError } = require('../../src/preload/standalone-own')

const system = (code, message) => Object.assign(new Error(message), { code, errno: code, syscall: 'listen' })

describe('standalone bindError', () => {
  test.each([
    ['EADDRINUSE', 'ERR_HTTPSYS_PORT_IN_USE'],
    ['EACCES', 'ERR_HTTPSYS_ACCESS_DENIED'],
    ['EADDRNOTAVAIL', 'ERR_HTTPSYS_ADDRESS_UNAVAILABLE']
  ])('a port refused with %s by node or by the router is %s with node\'s error as its cause', (sys, coded) => {
    const byNode = bindError(system(sys, `listen ${sys}: 127.0.0.1:1`), 1, '127.0.0.1')
    const byRouter = bindError(new codes[coded]({ port: 1 }), 1, '127.0.0.1')
    for (const err of [byNode, byRouter]) {
      expect(err.code).toBe(coded)
      expect(err.port).toBe(1)
      expect(err.host).toBe('127.0.0.1')
      expect(err.cause.code).toBe(sys)
      expect(err.cause.syscall).toBe('listen')
    }
    expect(byRouter.cause.message).toMatch(new RegExp(`^listen ${sys}: .* 127\\.0\\.0\\.1:1$`))
  })

  test('a socket path in use is ERR_HTTPSYS_PORT_IN_USE naming the path; refused, node\'s own error', () => {
    const inUse = bindError(new codes.ERR_HTTPSYS_PORT_IN_USE({ port: '/tmp/a.sock' }), '/tmp/a.sock')
    expect(inUse.code).toBe('ERR_HTTPSYS_PORT_IN_USE')
    expect(inUse.port).toBe('/tmp/a.sock')
    expect(inUse.cause).toMatchObject({ code: 'EADDRINUSE', address: '/tmp/a.sock', port: -1 })
    const refused = bindError(new codes.ERR_HTTPSYS_ACCESS_DENIED({ port: '/tmp/a.sock' }), '/tmp/a.sock')
    expect(refused).toMatchObject({ code: 'EACCES', syscall: 'listen', address: '/tmp/a.sock' })
    const nodes = system('EACCES', 'listen EACCES: permission denied /tmp/a.sock')
    expect(bindError(nodes, '/tmp/a.sock')).toBe(nodes)
  })

  test('any other error is itself', () => {
    const other = system('EMFILE', 'too many open files')
    expect(bindError(other, 1, undefined)).toBe(other)
  })
})
