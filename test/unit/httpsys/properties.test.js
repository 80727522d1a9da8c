'use strict'

// The property calls the addon makes, as bytes (src/httpsys/properties.js), held
// against what Microsoft documents HTTP.SYS reads (test/helpers/fake-properties.js): every
// entry of the table, every call the backend builds, and the values HTTP.SYS gives a
// meaning other than a length (65535 s turns a timer off).

const { CALLS, encode, queueSetup, queueState, TIMER_MAX_S } = require('../../../src/httpsys/properties')
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
    // every field lies inside the structure
    for (const [, offset, type] of entry.fields) expect(offset + { ULONG: 4, USHORT: 2, HANDLE: 8, PVOID: 8 }[type]).toBeLessThanOrEqual(entry.size)
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
    bound: true
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
