'use strict'

// The property calls the addon makes, as bytes (src/httpsys/properties.js), held
// against what Microsoft documents HTTP.SYS reads (test/helpers/fake-properties.js): every
// entry of the table, every call the backend builds, and the values HTTP.SYS gives a
// meaning other than a length (65535 s turns a timer off).

const { CALLS, TYPES, encode, queueSetup, queueState, authentication, TIMER_MAX_S } = require('../../../src/httpsys/properties')
const { DOCUMENTED, newQueueState, applyProperty } = require('../../helpers/fake-properties')

function apply (calls) {
  const state = newQueueState()
  const violations = []
  const codes = calls.map((c) => applyProperty(c, state, violations))
  return { state, violations, codes }
}

test('every call of the table is one Microsoft documents, with its size and where the addon writes a handle or pointer', () => {
  for (const [what, entry] of Object.entries(CALLS)) {
    const call = encode(what, {}, {})
    const doc = DOCUMENTED[`${call.call}:${call.property}`]
    expect({ what, property: doc && doc.property, struct: doc && doc.struct, size: call.data.length })
      .toEqual({ what, property: entry.property, struct: entry.struct, size: doc.size })
    expect(call.handleAt).toBe(doc.handleAt ?? -1)
    expect(call.pointerAt).toBe(doc.pointerAt ?? -1)
    if (doc.pointee) expect(call.pointee.length).toBe(doc.pointee.size)
    // every field lies inside the structure, and every string pointer where one is documented
    for (const [, offset, type] of entry.fields) expect(offset + TYPES[type]).toBeLessThanOrEqual(entry.size)
    const strings = entry.fields.filter(([, , type]) => type === 'PWSTR').map(([, offset]) => String(offset))
    expect(strings).toEqual(Object.keys(doc.pointers || {}))
  }
})

test('a controller queue: its limits, 503s for a full queue, on, and bound to its URL groups, as HTTP.SYS reads them', () => {
  const calls = queueSetup({
    mode: 'controller',
    queueLength: 77,
    timeouts: { headerWait: 9, idleConnection: 3, entityBody: 60, drainEntityBody: 60, requestQueue: 30, minSendRate: 240 },
    maxConnections: 500
  })
  expect(calls.map((c) => c.name)).toEqual([
    'HttpServerQueueLengthProperty', 'HttpServer503VerbosityProperty', 'HttpServerStateProperty',
    'HttpServerTimeoutsProperty', 'HttpServerQosProperty', 'HttpServerBindingProperty'
  ])
  const { state, violations, codes } = apply(calls)
  expect(violations).toEqual([])
  expect(codes).toEqual([0, 0, 0, 0, 0, 0])
  expect(state).toEqual({
    active: true,
    history: ['active'],
    queueLength: 77,
    verbosity: 'limited',
    timeouts: { EntityBody: 60, DrainEntityBody: 60, RequestQueue: 30, IdleConnection: 3, HeaderWait: 9, MinSendRate: 240 },
    maxConnections: 500,
    bound: true,
    auth: null
  })
  expect(apply(queueSetup({ mode: 'create', maxConnections: -1 })).state.maxConnections).toBe('unlimited')
})

test('turning a queue off and on: HTTP.SYS reads an HTTP_ENABLED_STATE (0 active, 1 inactive), 4 bytes', () => {
  const state = newQueueState()
  const violations = []
  expect(applyProperty(queueState(false), state, violations)).toBe(0)
  expect(state.active).toBe(false)
  expect(applyProperty(queueState(true), state, violations)).toBe(0)
  expect(state.active).toBe(true)
  expect(violations).toEqual([])
  expect(queueState(true).data).toEqual(Buffer.from([0, 0, 0, 0]))
  // what the addon passed before issue 24: an HTTP_STATE_INFO { Present: 1, State: Active }
  const stateInfo = { ...queueState(true), data: Buffer.from([1, 0, 0, 0, 0, 0, 0, 0]) }
  expect(applyProperty(stateInfo, state, violations)).toBe(0)
  expect(state.active).toBe(false)
  expect(violations).toEqual([expect.stringMatching(/reads HTTP_ENABLED_STATE \(4 bytes.*passes 8/)])
})

test('a queue a worker opens gets no property of the queue itself, only the binding; so does every queue under Wine', () => {
  expect(queueSetup({ mode: 'open', queueLength: 5, timeouts: { idleConnection: 5 } }).map((c) => c.name))
    .toEqual(['HttpServerTimeoutsProperty', 'HttpServerBindingProperty'])
  expect(queueSetup({ mode: 'controller', queueProperties: false, queueLength: 5, timeouts: { idleConnection: 5 }, maxConnections: 3 }).map((c) => c.name))
    .toEqual(['HttpServerBindingProperty'])
})

test('timers: 0 is HTTP.SYS\'s default and 65535 s would turn one off, so the longest is 65534 s', () => {
  expect(TIMER_MAX_S).toBe(65534)
  const timeouts = (t) => apply(queueSetup({ mode: 'create', timeouts: t })).state.timeouts
  expect(timeouts({ headerWait: 65534 }).HeaderWait).toBe(65534)
  expect(timeouts({ headerWait: 0 }).HeaderWait).toBe('default')
  for (const key of ['entityBody', 'drainEntityBody', 'requestQueue', 'idleConnection', 'headerWait']) {
    expect(() => queueSetup({ mode: 'create', timeouts: { [key]: 65535 } }))
      .toThrow(expect.objectContaining({ code: 'ERR_OUT_OF_RANGE', message: expect.stringMatching(new RegExp(`options\\.timeouts\\.${key}.*65535 would turn the timer off`)) }))
  }
  expect(() => queueSetup({ mode: 'create', timeouts: { minSendRate: 0xffffffff } }))
    .toThrow(expect.objectContaining({ code: 'ERR_OUT_OF_RANGE', message: expect.stringMatching(/minSendRate.*4294967295 would turn the timer off/) }))
})

test('values outside what HTTP.SYS\'s types hold are refused with node\'s codes, naming the option', () => {
  const refused = (tuning, code, name) => expect(() => queueSetup({ mode: 'create', ...tuning }))
    .toThrow(expect.objectContaining({ code, message: expect.stringContaining(`"${name}"`) }))
  refused({ queueLength: 0 }, 'ERR_OUT_OF_RANGE', 'options.queueLength')
  refused({ queueLength: 2 ** 31 }, 'ERR_OUT_OF_RANGE', 'options.queueLength')
  refused({ verbosity: 3 }, 'ERR_OUT_OF_RANGE', 'options.verbosity')
  refused({ verbosity: 'limited' }, 'ERR_INVALID_ARG_TYPE', 'options.verbosity')
  refused({ timeouts: { entityBody: 70000 } }, 'ERR_OUT_OF_RANGE', 'options.timeouts.entityBody')
  refused({ timeouts: { headerWait: -1 } }, 'ERR_OUT_OF_RANGE', 'options.timeouts.headerWait')
  refused({ timeouts: { idleConnection: 1.5 } }, 'ERR_OUT_OF_RANGE', 'options.timeouts.idleConnection')
  refused({ timeouts: 5 }, 'ERR_INVALID_ARG_TYPE', 'options.timeouts')
  refused({ maxConnections: 0 }, 'ERR_OUT_OF_RANGE', 'options.maxConnections')
  refused({ maxConnections: '10' }, 'ERR_INVALID_ARG_TYPE', 'options.maxConnections')
})

describe('HttpServerAuthenticationProperty (HTTP_SERVER_AUTHENTICATION_INFO, 64 bytes)', () => {
  test('each scheme is its HTTP_AUTH_ENABLE bit, with the PRESENT flag, set on the URL groups before the binding', () => {
    const calls = queueSetup({ mode: 'controller', auth: { schemes: ['negotiate', 'ntlm'] } })
    expect(calls.map((c) => c.name).slice(-2)).toEqual(['HttpServerAuthenticationProperty', 'HttpServerBindingProperty'])
    const { state, violations, codes } = apply(calls)
    expect(violations).toEqual([])
    expect(codes.every((c) => c === 0)).toBe(true)
    expect(state.auth).toEqual({
      schemes: ['ntlm', 'negotiate'],
      receiveMutualAuth: false,
      receiveContextHandle: false,
      disableNtlmCredentialCaching: false,
      kerberosCredentialCaching: false,
      captureCredential: false,
      digestDomain: null,
      digestRealm: null,
      basicRealm: null
    })
    for (const [schemes, bits] of [[['basic'], 1], [['digest'], 2], [['ntlm'], 4], [['negotiate'], 8], [['kerberos'], 16], [['basic', 'digest', 'ntlm', 'negotiate', 'kerberos'], 0x1f]]) {
      const call = authentication({ schemes })
      expect(call.data.length).toBe(64)
      expect(call.data.readUInt32LE(0)).toBe(1)
      expect(call.data.readUInt32LE(4)).toBe(bits)
    }
  })

  test('the realm and Digest domain are UTF-16 strings the addon points to, their lengths in bytes without the NUL', () => {
    const call = authentication({ schemes: ['basic', 'digest'], realm: 'Intranet Zürich', domain: '/app/' })
    expect(call.pointers.map((p) => p.at).sort((a, b) => a - b)).toEqual([24, 40, 56])
    // BasicParams.RealmLength at 48, DigestParams.RealmLength at 32, DomainNameLength at 16
    expect(call.data.readUInt16LE(48)).toBe('Intranet Zürich'.length * 2)
    expect(call.data.readUInt16LE(32)).toBe('Intranet Zürich'.length * 2)
    expect(call.data.readUInt16LE(16)).toBe('/app/'.length * 2)
    const { state, violations } = apply([call])
    expect(violations).toEqual([])
    expect(state.auth).toMatchObject({ schemes: ['basic', 'digest'], basicRealm: 'Intranet Zürich', digestRealm: 'Intranet Zürich', digestDomain: '/app/' })
    // the realm of a scheme that is not enabled stays NULL
    expect(authentication({ schemes: ['ntlm'], realm: 'x' }).pointers).toEqual([])
  })

  test('Kerberos credential caching is ExFlags bit 1, which HTTP.SYS takes only with Negotiate or Kerberos', () => {
    const { state, violations, codes } = apply([authentication({ schemes: ['negotiate'], kerberos_credential_caching: true })])
    expect(violations).toEqual([])
    expect(codes).toEqual([0])
    expect(state.auth.kerberosCredentialCaching).toBe(true)
    const ntlmOnly = encode('authentication', { Flags: 1, AuthSchemes: 4, ExFlags: 1 })
    expect(apply([ntlmOnly]).codes).toEqual([87])
  })

  test('bytes that break the documented layout are violations: a length without its string, a pointer where the structure has none', () => {
    const noString = encode('authentication', { Flags: 1, AuthSchemes: 1, 'BasicParams.RealmLength': 8 })
    expect(apply([noString]).violations).toEqual([expect.stringMatching(/length at 48 says 8 bytes and its pointer \(at 56\) is NULL/)])
    const stray = { ...authentication({ schemes: ['basic'], realm: 'x' }), pointers: [{ at: 32, data: Buffer.from('x\0', 'utf16le') }] }
    expect(apply([stray]).violations).toEqual([expect.stringMatching(/no string pointer at 32/), expect.stringMatching(/length at 48 says 2 bytes and its pointer \(at 56\) is NULL/)])
  })

  test('no scheme, or one HTTP.SYS does not know, is refused before any call', () => {
    expect(() => authentication({ schemes: [] })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }))
    expect(() => authentication({ schemes: ['bearer'] })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }))
  })

  test('where HTTP.SYS takes no URL group property (Wine) the call is left out', () => {
    expect(queueSetup({ mode: 'create', queueProperties: false, auth: { schemes: ['ntlm'] } }).map((c) => c.name)).toEqual(['HttpServerBindingProperty'])
  })
})
