'use strict'

// What HTTP.SYS makes of the bytes of a property call, for the fake addon: the layouts
// below are copied from Microsoft's pages (linked), not from src/httpsys/properties.js,
// so that file's table is checked against the documentation by every test that creates a
// queue or turns one off. HTTP.SYS reads what the documented structure says from the bytes
// it is given (a buffer too short is 87); a length other than the documented size is a
// violation here even where HTTP.SYS would accept it, since it then reads a different
// structure than the caller meant (issue 24: an 8-byte HTTP_STATE_INFO whose first ULONG,
// Present = 1, reads as HttpEnabledStateInactive).
//
//   const state = newQueueState()
//   const code = applyProperty(call, state, violations)   // a Win32 code, state changed

const DOCS = 'https://learn.microsoft.com/windows/win32/api/http/'
const ERROR_INVALID_PARAMETER = 87
const u32 = (b, at) => b.readUInt32LE(at)
const u16 = (b, at) => b.readUInt16LE(at)
// HTTP_AUTH_ENABLE_* (http.h, win32/http/http-auth-enable--constants)
const AUTH_BITS = { 0x1: 'basic', 0x2: 'digest', 0x4: 'ntlm', 0x8: 'negotiate', 0x10: 'kerberos' }

// key: `${call}:${HTTP_SERVER_PROPERTY}` (http.h: Authentication 0, Qos 2, Timeouts 3,
// QueueLength 4, State 5, 503Verbosity 6, Binding 7)
const DOCUMENTED = {
  // HttpSetRequestQueueProperty: "pPropertyInformation points to one of the following":
  // HttpServerStateProperty -> HTTP_ENABLED_STATE, HttpServerQueueLengthProperty -> ULONG,
  // HttpServer503VerbosityProperty -> HTTP_503_RESPONSE_VERBOSITY
  'HttpSetRequestQueueProperty:4': {
    property: 'HttpServerQueueLengthProperty',
    struct: 'ULONG',
    size: 4,
    doc: `${DOCS}nf-http-httpsetrequestqueueproperty`,
    // HTTP_MIN_SERVER_QUEUE_LENGTH 1 .. HTTP_MAX_SERVER_QUEUE_LENGTH 0x7FFFFFFF (http.h)
    apply (b, s) {
      const n = u32(b, 0)
      if (n < 1 || n > 0x7fffffff) return ERROR_INVALID_PARAMETER
      s.queueLength = n
      return 0
    }
  },
  'HttpSetRequestQueueProperty:5': {
    property: 'HttpServerStateProperty',
    struct: 'HTTP_ENABLED_STATE',
    size: 4,
    doc: `${DOCS}nf-http-httpsetrequestqueueproperty`,
    // HttpEnabledStateActive 0, HttpEnabledStateInactive 1
    apply (b, s) {
      const v = u32(b, 0)
      if (v > 1) return ERROR_INVALID_PARAMETER
      s.active = v === 0
      s.history.push(s.active ? 'active' : 'inactive')
      return 0
    }
  },
  'HttpSetRequestQueueProperty:6': {
    property: 'HttpServer503VerbosityProperty',
    struct: 'HTTP_503_RESPONSE_VERBOSITY',
    size: 4,
    doc: `${DOCS}ne-http-http_503_response_verbosity`,
    // Basic 0 (the connection is reset), Limited 1, Full 2
    apply (b, s) {
      const v = u32(b, 0)
      if (v > 2) return ERROR_INVALID_PARAMETER
      s.verbosity = ['basic', 'limited', 'full'][v]
      return 0
    }
  },
  // HTTP_TIMEOUT_LIMIT_INFO { HTTP_PROPERTY_FLAGS Flags; USHORT EntityBody, DrainEntityBody,
  // RequestQueue, IdleConnection, HeaderWait; ULONG MinSendRate }: 0 is "the default",
  // MAXUSHORT (MAXULONG for MinSendRate) turns a timer off
  'HttpSetUrlGroupProperty:3': {
    property: 'HttpServerTimeoutsProperty',
    struct: 'HTTP_TIMEOUT_LIMIT_INFO',
    size: 20,
    doc: `${DOCS}ns-http-http_timeout_limit_info`,
    apply (b, s) {
      if ((u32(b, 0) & 1) === 0) {
        s.timeouts = null
        return 0
      }
      const timer = (v) => v === 0 ? 'default' : v === 0xffff ? 'off' : v
      s.timeouts = {
        EntityBody: timer(u16(b, 4)),
        DrainEntityBody: timer(u16(b, 6)),
        RequestQueue: timer(u16(b, 8)),
        IdleConnection: timer(u16(b, 10)),
        HeaderWait: timer(u16(b, 12)),
        MinSendRate: u32(b, 16) === 0 ? 'default' : u32(b, 16) === 0xffffffff ? 'off' : u32(b, 16)
      }
      return 0
    }
  },
  // HTTP_QOS_SETTING_INFO { HTTP_QOS_SETTING_TYPE QosType; PVOID QosSetting } (QosSetting
  // at 8 on x64), ConnectionLimit (1) pointing to HTTP_CONNECTION_LIMIT_INFO
  // { HTTP_PROPERTY_FLAGS Flags; ULONG MaxConnections } (HTTP_LIMIT_INFINITE: MAXULONG)
  'HttpSetUrlGroupProperty:2': {
    property: 'HttpServerQosProperty',
    struct: 'HTTP_QOS_SETTING_INFO',
    size: 16,
    pointerAt: 8,
    pointee: { struct: 'HTTP_CONNECTION_LIMIT_INFO', size: 8 },
    doc: `${DOCS}ns-http-http_qos_setting_info`,
    apply (b, s, pointee) {
      if (u32(b, 0) !== 1) return ERROR_INVALID_PARAMETER
      if ((u32(pointee, 0) & 1) === 0) {
        s.maxConnections = null
        return 0
      }
      const n = u32(pointee, 4)
      s.maxConnections = n === 0xffffffff ? 'unlimited' : n
      return 0
    }
  },
  // HTTP_BINDING_INFO { HTTP_PROPERTY_FLAGS Flags; HANDLE RequestQueueHandle } (the
  // handle at 8 on x64)
  'HttpSetUrlGroupProperty:7': {
    property: 'HttpServerBindingProperty',
    struct: 'HTTP_BINDING_INFO',
    size: 16,
    handleAt: 8,
    doc: `${DOCS}ns-http-http_binding_info`,
    apply (b, s) {
      s.bound = (u32(b, 0) & 1) === 1
      return 0
    }
  },
  // HTTP_SERVER_AUTHENTICATION_INFO { HTTP_PROPERTY_FLAGS Flags; ULONG AuthSchemes;
  // BOOLEAN ReceiveMutualAuth, ReceiveContextHandle, DisableNTLMCredentialCaching; UCHAR
  // ExFlags; HTTP_SERVER_AUTHENTICATION_DIGEST_PARAMS DigestParams { USHORT
  // DomainNameLength; PWSTR DomainName; USHORT RealmLength; PWSTR Realm } (at 16 on x64:
  // its pointers align it); HTTP_SERVER_AUTHENTICATION_BASIC_PARAMS BasicParams { USHORT
  // RealmLength; PWSTR Realm } (at 48) }: 64 bytes. The lengths are in bytes
  // (ns-http-http_server_authentication_basic_params); AuthSchemes takes the
  // HTTP_AUTH_ENABLE_* bits, ExFlags HTTP_AUTH_EX_FLAG_ENABLE_KERBEROS_CREDENTIAL_CACHING
  // (1) and _CAPTURE_CREDENTIAL (2), and Kerberos credential caching needs Kerberos or
  // Negotiate enabled
  'HttpSetUrlGroupProperty:0': {
    property: 'HttpServerAuthenticationProperty',
    struct: 'HTTP_SERVER_AUTHENTICATION_INFO',
    size: 64,
    pointers: { 24: 16, 40: 32, 56: 48 }, // a string's pointer -> its length field
    doc: `${DOCS}ns-http-http_server_authentication_info`,
    apply (b, s, pointee, strings, violations, what) {
      if ((u32(b, 0) & 1) === 0) {
        s.auth = null
        return 0
      }
      const bits = u32(b, 4)
      if (bits === 0 || (bits & ~0x1f) !== 0) return ERROR_INVALID_PARAMETER
      for (const at of [8, 9, 10]) if (b[at] > 1) violations.push(`${what}: the BOOLEAN at ${at} is ${b[at]}`)
      const ex = b[11]
      if ((ex & ~3) !== 0) return ERROR_INVALID_PARAMETER
      if ((ex & 1) !== 0 && (bits & 0x18) === 0) return ERROR_INVALID_PARAMETER
      const text = (at) => strings.has(at) ? strings.get(at) : null
      s.auth = {
        schemes: Object.entries(AUTH_BITS).filter(([bit]) => (bits & Number(bit)) !== 0).map(([, name]) => name),
        receiveMutualAuth: b[8] === 1,
        receiveContextHandle: b[9] === 1,
        disableNtlmCredentialCaching: b[10] === 1,
        kerberosCredentialCaching: (ex & 1) !== 0,
        captureCredential: (ex & 2) !== 0,
        digestDomain: text(24),
        digestRealm: text(40),
        basicRealm: text(56)
      }
      return 0
    }
  }
}

/** A queue as HTTP.SYS keeps it before any property is set: its documented defaults. */
function newQueueState () {
  return { active: true, history: [], queueLength: 1000, verbosity: 'basic', timeouts: null, maxConnections: null, bound: false, auth: null }
}

/**
 * One call of the addon's `properties` option or setProperty(), as HTTP.SYS takes it.
 * @param {object} call { call, property, name, data, handleAt, pointerAt, pointee, pointers }
 * @param {object} state newQueueState()'s
 * @param {string[]} violations where a mismatch with the documentation is written
 * @returns {number} the Win32 code
 */
function applyProperty (call, state, violations) {
  const doc = DOCUMENTED[`${call.call}:${call.property}`]
  const what = `${call.call}(${call.name || call.property})`
  if (doc === undefined) {
    violations.push(`${what}: not a property call the addon is known to make (test/helpers/fake-properties.js)`)
    return ERROR_INVALID_PARAMETER
  }
  if (call.name !== undefined && call.name !== doc.property) {
    violations.push(`${what}: property ${call.property} is ${doc.property}`)
  }
  const data = call.data
  if (!Buffer.isBuffer(data)) {
    violations.push(`${what}: no bytes`)
    return ERROR_INVALID_PARAMETER
  }
  if (data.length !== doc.size) {
    violations.push(`${what}: HTTP.SYS reads ${doc.struct} (${doc.size} bytes, ${doc.doc}); the call passes ${data.length}`)
  }
  if ((doc.handleAt ?? -1) !== (call.handleAt ?? -1)) {
    violations.push(`${what}: the queue handle belongs at ${doc.handleAt ?? 'no offset'}; the call puts it at ${call.handleAt}`)
  }
  if ((doc.pointerAt ?? -1) !== (call.pointerAt ?? -1)) {
    violations.push(`${what}: the pointer belongs at ${doc.pointerAt ?? 'no offset'}; the call puts it at ${call.pointerAt}`)
  }
  if (doc.pointee && (!Buffer.isBuffer(call.pointee) || call.pointee.length !== doc.pointee.size)) {
    violations.push(`${what}: it points to ${doc.pointee.struct} (${doc.pointee.size} bytes); the call's is ${call.pointee ? call.pointee.length : 'missing'}`)
  }
  if (data.length < doc.size || (doc.pointee && (!Buffer.isBuffer(call.pointee) || call.pointee.length < doc.pointee.size))) {
    return ERROR_INVALID_PARAMETER
  }
  const strings = readStrings(call, doc, data, violations, what)
  return doc.apply(data, state, call.pointee, strings, violations, what)
}

/**
 * The strings a call points to (its `pointers`), as HTTP.SYS reads them: a PWSTR of
 * Length bytes (UTF-16LE) where the structure has a string; anything else is a violation.
 * A pointer whose length field says 0, or a length without a pointer (NULL), is too.
 * @returns {Map<number, string>} pointer offset -> text
 */
function readStrings (call, doc, data, violations, what) {
  const out = new Map()
  const documented = doc.pointers || {}
  for (const p of call.pointers || []) {
    if (!Object.hasOwn(documented, p.at)) {
      violations.push(`${what}: ${doc.struct} has no string pointer at ${p.at}`)
      continue
    }
    const length = u16(data, documented[p.at])
    if (!Buffer.isBuffer(p.data) || length === 0 || length % 2 !== 0 || length > p.data.length) {
      violations.push(`${what}: the string at ${p.at} says ${length} bytes (at ${documented[p.at]}); ${Buffer.isBuffer(p.data) ? p.data.length : 'no'} bytes are given`)
      continue
    }
    out.set(p.at, p.data.subarray(0, length).toString('utf16le'))
  }
  for (const [at, lengthAt] of Object.entries(documented)) {
    if (!out.has(Number(at)) && u16(data, lengthAt) !== 0 && !(call.pointers || []).some((p) => p.at === Number(at))) {
      violations.push(`${what}: the length at ${lengthAt} says ${u16(data, lengthAt)} bytes and its pointer (at ${at}) is NULL`)
    }
  }
  return out
}

module.exports = { DOCUMENTED, newQueueState, applyProperty }
