'use strict'

// The one table of the HTTP Server API property calls the addon makes, and the bytes each
// one passes. The addon knows no property structure: it copies the bytes built here into
// an aligned buffer, writes its queue handle or a pointer where an entry says, and calls
// HttpSetRequestQueueProperty / HttpSetUrlGroupProperty with exactly that many bytes
// (native/src/property-call.cc). So what HTTP.SYS reads is decided in this file alone, and
// the fake addon of the Linux tests (test/helpers/fake-properties.js) decodes the same
// bytes the way HTTP.SYS documents them: a structure of the wrong size or meaning (an
// HTTP_STATE_INFO where a request queue reads an HTTP_ENABLED_STATE: issue 24) fails a
// Linux test. The Wine suite compares the sizes and offsets below with the Windows SDK's
// (the addon's `layouts` export). docs/http-sys.md 7 lists every call beside ASP.NET
// Core's.
//
// Layouts are x64's (the only build): pointers and handles are 8 bytes, 8-aligned.

const { codes } = require('../errors')

const DOCS = 'https://learn.microsoft.com/windows/win32/api/http/'
const QUEUE = 'HttpSetRequestQueueProperty'
const GROUP = 'HttpSetUrlGroupProperty'

// HTTP_SERVER_PROPERTY (http.h)
const PROPERTY = Object.freeze({
  HttpServerQosProperty: 2,
  HttpServerTimeoutsProperty: 3,
  HttpServerQueueLengthProperty: 4,
  HttpServerStateProperty: 5,
  HttpServer503VerbosityProperty: 6,
  HttpServerBindingProperty: 7
})

// HTTP_ENABLED_STATE, HTTP_503_RESPONSE_VERBOSITY, HTTP_QOS_SETTING_TYPE (http.h)
const ENABLED_STATE = Object.freeze({ active: 0, inactive: 1 })
const VERBOSITY = Object.freeze({ basic: 0, limited: 1, full: 2 })
const QOS_CONNECTION_LIMIT = 1

// Field types: [bytes, writer]. HANDLE and PVOID are written by the addon.
const TYPES = {
  ULONG: 4,
  USHORT: 2,
  HANDLE: 8,
  PVOID: 8
}

/**
 * Every property call, by what it is for. `fields`: [name, offset, type]; `pointee`: the
 * structure a PVOID field points to.
 */
const CALLS = Object.freeze({
  queueLength: {
    call: QUEUE,
    property: 'HttpServerQueueLengthProperty',
    struct: 'ULONG',
    size: 4,
    fields: [['value', 0, 'ULONG']],
    doc: `${DOCS}nf-http-httpsetrequestqueueproperty`
  },
  verbosity: {
    call: QUEUE,
    property: 'HttpServer503VerbosityProperty',
    struct: 'HTTP_503_RESPONSE_VERBOSITY',
    size: 4,
    fields: [['value', 0, 'ULONG']],
    doc: `${DOCS}ne-http-http_503_response_verbosity`
  },
  // For a request queue the state is a bare HTTP_ENABLED_STATE; HTTP_STATE_INFO is the
  // server session's and the URL group's (HttpSetRequestQueueProperty's page).
  state: {
    call: QUEUE,
    property: 'HttpServerStateProperty',
    struct: 'HTTP_ENABLED_STATE',
    size: 4,
    fields: [['value', 0, 'ULONG']],
    doc: `${DOCS}nf-http-httpsetrequestqueueproperty`
  },
  timeouts: {
    call: GROUP,
    property: 'HttpServerTimeoutsProperty',
    struct: 'HTTP_TIMEOUT_LIMIT_INFO',
    size: 20,
    fields: [
      ['Flags', 0, 'ULONG'],
      ['EntityBody', 4, 'USHORT'],
      ['DrainEntityBody', 6, 'USHORT'],
      ['RequestQueue', 8, 'USHORT'],
      ['IdleConnection', 10, 'USHORT'],
      ['HeaderWait', 12, 'USHORT'],
      ['MinSendRate', 16, 'ULONG']
    ],
    doc: `${DOCS}ns-http-http_timeout_limit_info`
  },
  connectionLimit: {
    call: GROUP,
    property: 'HttpServerQosProperty',
    struct: 'HTTP_QOS_SETTING_INFO',
    size: 16,
    fields: [['QosType', 0, 'ULONG'], ['QosSetting', 8, 'PVOID']],
    pointee: {
      struct: 'HTTP_CONNECTION_LIMIT_INFO',
      size: 8,
      fields: [['Flags', 0, 'ULONG'], ['MaxConnections', 4, 'ULONG']]
    },
    doc: `${DOCS}ns-http-http_qos_setting_info`
  },
  binding: {
    call: GROUP,
    property: 'HttpServerBindingProperty',
    struct: 'HTTP_BINDING_INFO',
    size: 16,
    fields: [['Flags', 0, 'ULONG'], ['RequestQueueHandle', 8, 'HANDLE']],
    doc: `${DOCS}ns-http-http_binding_info`
  }
})

// HTTP_PROPERTY_FLAGS: a ULONG whose bit 0 is Present
const PRESENT = 1
// HTTP.SYS's timers are USHORT seconds; MAXUSHORT turns one off and 0 means "the
// default", and MinSendRate's MAXULONG turns it off ("Configuring the Application
// Specific Timeouts"): neither is a length, so neither is accepted as one.
const TIMER_MAX_S = 65534
const MIN_SEND_RATE_MAX = 0xfffffffe
const TIMERS = ['entityBody', 'drainEntityBody', 'requestQueue', 'idleConnection', 'headerWait']

/**
 * The bytes of one call, as the addon takes them: { call, property (its number), name,
 * data, handleAt, pointerAt, pointee }. handleAt: where the addon writes its queue handle;
 * pointerAt: where it writes the address of its copy of `pointee` (-1: none).
 * @param {string} what a key of CALLS
 * @param {object} values field name -> number (absent: 0)
 * @param {object} [pointeeValues] the pointee's fields
 */
function encode (what, values, pointeeValues) {
  const entry = CALLS[what]
  const out = {
    call: entry.call,
    property: PROPERTY[entry.property],
    name: entry.property,
    data: fill(entry, values),
    handleAt: -1,
    pointerAt: -1,
    pointee: null
  }
  for (const [name, offset, type] of entry.fields) {
    if (type === 'HANDLE') out.handleAt = offset
    if (type === 'PVOID') {
      out.pointerAt = offset
      out.pointee = fill(entry.pointee, pointeeValues || {})
    }
    if ((type === 'HANDLE' || type === 'PVOID') && values[name] !== undefined) {
      throw new Error(`${entry.struct}.${name} is written by the addon`)
    }
  }
  return out
}

function fill (layout, values) {
  const data = Buffer.alloc(layout.size)
  for (const [name, offset, type] of layout.fields) {
    const value = values[name] === undefined ? 0 : values[name]
    if (type === 'ULONG') data.writeUInt32LE(value, offset)
    else if (type === 'USHORT') data.writeUInt16LE(value, offset)
  }
  return data
}

/** HttpServerStateProperty of a request queue: HTTP.SYS answers 503 at once while it is off. */
function queueState (active) {
  return encode('state', { value: active ? ENABLED_STATE.active : ENABLED_STATE.inactive })
}

/**
 * The calls that set up a queue the addon creates or opens, in order: the queue's own
 * properties (only for a queue this process creates: "Request queue properties are set
 * only by the application that creates the request queue"), then what every URL group
 * gets, ending with the binding to the queue (bound before URLs are added, as ASP.NET
 * does, so an add reports a conflict at once).
 * @param {object} tuning
 * @param {'create'|'open'|'controller'} tuning.mode
 * @param {boolean} [tuning.queueProperties=true] whether HTTP.SYS takes queue and URL
 *   group properties (Wine answers 120: docs/wine.md 2.10); the binding goes in any case
 * @param {number} [tuning.queueLength] 1 to 2147483647 requests
 * @param {number} [tuning.verbosity=1] 0 Basic (a full queue resets the connection),
 *   1 Limited (503: the default here, as IIS), 2 Full
 * @param {object} [tuning.timeouts] { entityBody, drainEntityBody, requestQueue,
 *   idleConnection, headerWait: 0 (HTTP.SYS's default) to 65534 seconds, minSendRate:
 *   0 to 4294967294 bytes/s }
 * @param {number} [tuning.maxConnections] -1 (no limit) or 1 to 4294967294, per URL group
 * @returns {object[]} the addon's `properties` option
 * @throws ERR_INVALID_ARG_TYPE, ERR_OUT_OF_RANGE naming the option
 */
function queueSetup ({ mode, queueProperties = true, queueLength, verbosity, timeouts, maxConnections } = {}) {
  const out = []
  const own = mode !== 'open' && queueProperties
  if (own && present(queueLength)) {
    out.push(encode('queueLength', { value: integer('options.queueLength', queueLength, 1, 2147483647, 'an integer from 1 to 2147483647 (requests)') }))
  }
  // HTTP.SYS's own default (Basic) resets the connections a full queue turns away, which
  // clients report as a network error, not a 503: always set.
  if (own) {
    const v = present(verbosity) ? integer('options.verbosity', verbosity, 0, 2, '0 (Basic), 1 (Limited) or 2 (Full)') : VERBOSITY.limited
    out.push(encode('verbosity', { value: v }))
  }
  // The controller turns its queue off and on (queueState): it starts from a state it set.
  if (own && mode === 'controller') out.push(queueState(true))
  if (queueProperties && present(timeouts)) out.push(encode('timeouts', timeoutValues(timeouts)))
  if (queueProperties && present(maxConnections)) {
    const n = integer('options.maxConnections', maxConnections, -1, 4294967294, '-1 (no limit) or an integer from 1 to 4294967294')
    if (n === 0) throw new codes.ERR_OUT_OF_RANGE({ name: 'options.maxConnections', range: '-1 (no limit) or an integer from 1 to 4294967294', received: 0 })
    // HTTP_LIMIT_INFINITE is (ULONG)-1
    out.push(encode('connectionLimit', { QosType: QOS_CONNECTION_LIMIT }, { Flags: PRESENT, MaxConnections: n < 0 ? 0xffffffff : n }))
  }
  out.push(encode('binding', { Flags: PRESENT }))
  return out
}

function timeoutValues (timeouts) {
  if (typeof timeouts !== 'object') {
    throw new codes.ERR_INVALID_ARG_TYPE({ name: 'options.timeouts', expected: 'an object', actual: timeouts })
  }
  const values = { Flags: PRESENT }
  for (const key of TIMERS) {
    const v = timeouts[key]
    if (!present(v)) continue
    const field = key[0].toUpperCase() + key.slice(1)
    values[field] = integer(`options.timeouts.${key}`, v, 0, TIMER_MAX_S,
      `an integer from 0 to ${TIMER_MAX_S} (seconds; 0: HTTP.SYS's default; 65535 would turn the timer off)`)
  }
  if (present(timeouts.minSendRate)) {
    values.MinSendRate = integer('options.timeouts.minSendRate', timeouts.minSendRate, 0, MIN_SEND_RATE_MAX,
      `an integer from 0 to ${MIN_SEND_RATE_MAX} (bytes per second; 4294967295 would turn the timer off)`)
  }
  return values
}

const present = (v) => v !== undefined && v !== null

function integer (name, value, min, max, range) {
  if (typeof value !== 'number') throw new codes.ERR_INVALID_ARG_TYPE({ name, expected: range, actual: value })
  if (!Number.isInteger(value) || value < min || value > max) throw new codes.ERR_OUT_OF_RANGE({ name, range, received: value })
  return value
}

module.exports = { CALLS, PROPERTY, TYPES, ENABLED_STATE, VERBOSITY, TIMER_MAX_S, encode, queueState, queueSetup }
