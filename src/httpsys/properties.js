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
  HttpServerAuthenticationProperty: 0,
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
// HTTP_AUTH_ENABLE_* and HTTP_AUTH_EX_FLAG_ENABLE_KERBEROS_CREDENTIAL_CACHING (http.h;
// win32/http/http-auth-enable--constants): the config's scheme names -> AuthSchemes bits
const AUTH_ENABLE = Object.freeze({ basic: 0x1, digest: 0x2, ntlm: 0x4, negotiate: 0x8, kerberos: 0x10 })
const AUTH_EX_KERBEROS_CREDENTIAL_CACHING = 0x1

// Field types and their sizes. HANDLE, PVOID and PWSTR are written by the addon: its
// queue handle, the address of its copy of `pointee`, the address of its copy of a
// string (encode()'s `pointers`).
const TYPES = {
  ULONG: 4,
  USHORT: 2,
  BOOLEAN: 1,
  UCHAR: 1,
  HANDLE: 8,
  PVOID: 8,
  PWSTR: 8
}

/**
 * Every property call, by what it is for. `fields`: [name, offset, type] (a field of an
 * embedded structure is named Outer.Inner, as offsetof names it); `pointee`: the
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
  },
  // HTTP_SERVER_AUTHENTICATION_INFO embeds HTTP_SERVER_AUTHENTICATION_DIGEST_PARAMS
  // (8-aligned: at 16) and _BASIC_PARAMS; their strings are UTF-16 with lengths in bytes
  authentication: {
    call: GROUP,
    property: 'HttpServerAuthenticationProperty',
    struct: 'HTTP_SERVER_AUTHENTICATION_INFO',
    size: 64,
    fields: [
      ['Flags', 0, 'ULONG'],
      ['AuthSchemes', 4, 'ULONG'],
      ['ReceiveMutualAuth', 8, 'BOOLEAN'],
      ['ReceiveContextHandle', 9, 'BOOLEAN'],
      ['DisableNTLMCredentialCaching', 10, 'BOOLEAN'],
      ['ExFlags', 11, 'UCHAR'],
      ['DigestParams.DomainNameLength', 16, 'USHORT'],
      ['DigestParams.DomainName', 24, 'PWSTR'],
      ['DigestParams.RealmLength', 32, 'USHORT'],
      ['DigestParams.Realm', 40, 'PWSTR'],
      ['BasicParams.RealmLength', 48, 'USHORT'],
      ['BasicParams.Realm', 56, 'PWSTR']
    ],
    doc: `${DOCS}ns-http-http_server_authentication_info`
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
 * data, handleAt, pointerAt, pointee, pointers }. handleAt: where the addon writes its
 * queue handle; pointerAt: where it writes the address of its copy of `pointee` (-1:
 * none); pointers: [{ at, data }], where it writes the address of its copy of each
 * `data` (a PWSTR field given a string: UTF-16LE with its terminating NUL; the string's
 * ...Length field, in bytes without the NUL, is the caller's to give).
 * @param {string} what a key of CALLS
 * @param {object} values field name -> number, or string for a PWSTR (absent: 0, NULL)
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
    pointee: null,
    pointers: []
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
    if (type === 'PWSTR' && values[name] !== undefined && values[name] !== null) {
      out.pointers.push({ at: offset, data: Buffer.from(`${values[name]}\0`, 'utf16le') })
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
    else if (type === 'BOOLEAN' || type === 'UCHAR') data.writeUInt8(value, offset)
  }
  return data
}

/**
 * HttpServerAuthenticationProperty of a URL group: HTTP.SYS authenticates the schemes it
 * enables (docs/http-sys.md 8). Set on every group before its binding, so no request
 * reaches the queue unauthenticated by mistake ("the application enables the
 * authentication property before the first request arrives").
 * @param {object|null} auth the config's (src/config/auth-keys.js): schemes, realm, domain,
 *   kerberosCredentialCaching (or kerberos_credential_caching); null turns it off (Flags
 *   without PRESENT: a config edit that drops auth)
 */
function authentication (auth) {
  if (auth === null) return encode('authentication', { Flags: 0 })
  const schemes = auth.schemes || []
  let bits = 0
  for (const s of schemes) {
    if (!Object.hasOwn(AUTH_ENABLE, s)) throw new codes.ERR_INVALID_ARG_VALUE({ name: 'options.auth.schemes', value: s, reason: `must be ${Object.keys(AUTH_ENABLE).join(', ')}` })
    bits |= AUTH_ENABLE[s]
  }
  if (bits === 0) throw new codes.ERR_INVALID_ARG_VALUE({ name: 'options.auth.schemes', value: schemes, reason: 'must name at least one scheme' })
  const caching = auth.kerberosCredentialCaching === true || auth.kerberos_credential_caching === true
  const values = { Flags: PRESENT, AuthSchemes: bits, ExFlags: caching ? AUTH_EX_KERBEROS_CREDENTIAL_CACHING : 0 }
  const string = (field, text) => {
    if (typeof text !== 'string' || text === '') return
    values[field] = text
    values[`${field}Length`] = Buffer.byteLength(text, 'utf16le')
  }
  if (schemes.includes('basic')) string('BasicParams.Realm', auth.realm)
  if (schemes.includes('digest')) {
    string('DigestParams.Realm', auth.realm)
    string('DigestParams.DomainName', auth.domain)
  }
  return encode('authentication', values)
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
 * @param {object|null} [tuning.auth] Windows authentication on every URL group
 *   (authentication()); not where HTTP.SYS takes no group property (Wine)
 * @returns {object[]} the addon's `properties` option
 * @throws ERR_INVALID_ARG_TYPE, ERR_OUT_OF_RANGE naming the option
 */
function queueSetup ({ mode, queueProperties = true, queueLength, verbosity, timeouts, maxConnections, auth } = {}) {
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
  if (queueProperties && present(auth)) out.push(authentication(auth))
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

module.exports = { CALLS, PROPERTY, TYPES, ENABLED_STATE, VERBOSITY, AUTH_ENABLE, TIMER_MAX_S, encode, queueState, queueSetup, authentication }
