'use strict'

// A stand-in for native/ (the addon, httpsys_native.node) that records every call, so
// the JS side of the HTTP.SYS backend runs on Linux. It mirrors the addon's surface:
//   platform(), errors(), events, new Queue(options) with start/respond/sendBody/
//   readBody/cancel/stopReceiving/close/ref/unref/addUrl/removeUrl/setProperty/info.
// Property calls (options.properties, setProperty) are taken as HTTP.SYS takes their
// bytes (fake-properties.js): queue.kernel is what HTTP.SYS then holds for the queue
// (shared by every process that opens a named queue), and addon.violations lists every
// call whose structure differs from Microsoft's documentation.
// Sends never complete by themselves: a test delivers [EVENT.SENT, id, code] when it
// wants the kernel to have finished one.
// Tests drive it with queue.emit([type, id, arg, ...]) exactly as the addon's batches
// arrive, and make constructor calls fail with fail({ open, create, urls }).
// Access tokens (native/src/token.h): queue.issueToken({ user, groups }) stands for
// the one HTTP.SYS hands an authenticated request (its number goes in the request's
// auth.token); tokenUser/tokenGroups/closeToken answer as the addon's, and
// addon.openTokens() counts the ones not closed yet.

const crypto = require('node:crypto')

const { newQueueState, applyProperty } = require('./fake-properties')

const EVENT = { REQUEST: 1, BODY: 2, BODY_END: 3, SENT: 4, ABORT: 5, DETACHED: 6, CLOSED: 7, FATAL: 8 }

// where a certificate's private key lives (CERT_KEY_PROV_INFO_PROP_ID): cng is a key
// storage provider (provider type 0), else a CryptoAPI one
const CNG_PROVIDER = Object.freeze({ name: 'Microsoft Software Key Storage Provider', cng: true })
const LEGACY_PROVIDER = Object.freeze({ name: 'Microsoft Enhanced RSA and AES Cryptographic Provider', cng: false })

const NAMES = {
  2: 'ERROR_FILE_NOT_FOUND',
  5: 'ERROR_ACCESS_DENIED',
  32: 'ERROR_SHARING_VIOLATION',
  50: 'ERROR_NOT_SUPPORTED',
  87: 'ERROR_INVALID_PARAMETER',
  1332: 'ERROR_NONE_MAPPED',
  120: 'ERROR_CALL_NOT_IMPLEMENTED',
  183: 'ERROR_ALREADY_EXISTS',
  1229: 'ERROR_CONNECTION_INVALID',
  1236: 'ERROR_CONNECTION_ABORTED',
  86: 'ERROR_INVALID_PASSWORD',
  1060: 'ERROR_SERVICE_DOES_NOT_EXIST',
  1312: 'ERROR_NO_SUCH_LOGON_SESSION',
  0x80090010: 'NTE_PERM',
  0x80090015: 'NTE_BAD_PUBLIC_KEY',
  0x80090016: 'NTE_BAD_KEYSET'
}

// The service control manager (native/src/service-host.cc): services by name, and the
// one service this process may host. A test plays the SCM's part with
// addon.scm.host.emit(type, value) ('start', 'control', 'exit') and reads what the
// process reported in addon.scm.host.statuses.
function createFakeScm (machine) {
  const services = new Map()
  const host = { name: null, onEvent: null, statuses: [], emit (type, value = 0) { host.onEvent(type, value) } }
  const scm = {
    services,
    host,
    calls: [],
    // ChangeServiceConfig2W levels this SCM answers with ERROR_INVALID_LEVEL (124), as Wine does
    unsupported: new Set(),
    // services whose ControlService(STOP) leaves them stop_pending for this many queries
    slowStop: new Map()
  }
  const denied = () => machine.denied || !machine.elevated
  const fail = (code, syscall) => ({ code, syscall })
  scm.api = {
    serviceCreate (spec) {
      scm.calls.push(['serviceCreate', { ...spec, password: spec.password ? '<secret>' : spec.password }])
      if (denied()) return fail(5, 'OpenSCManagerW')
      if (services.has(spec.name.toLowerCase())) return fail(1073, 'CreateServiceW')
      services.set(spec.name.toLowerCase(), {
        name: spec.name,
        displayName: spec.displayName || spec.name,
        binPath: spec.binPath,
        startType: spec.startType,
        account: spec.account || 'LocalSystem',
        dependencies: spec.dependencies || [],
        state: 'stopped',
        pid: 0,
        win32ExitCode: 1077,
        serviceExitCode: 0,
        description: '',
        failureActions: null,
        failureActionsOnNonCrashFailures: false,
        delayedAutoStart: false,
        preshutdownTimeout: 180000,
        sidType: 'none'
      })
      return { code: 0 }
    },
    serviceConfigure (name, options) {
      scm.calls.push(['serviceConfigure', name, options])
      const s = services.get(name.toLowerCase())
      if (!s) return fail(1060, 'OpenServiceW')
      if (denied()) return fail(5, 'OpenSCManagerW')
      for (const [key, value] of Object.entries(options)) {
        if (scm.unsupported.has(key)) return { code: 124, syscall: 'ChangeServiceConfig2W', level: key }
        s[key] = key === 'failureActions' ? { resetPeriod: value.resetPeriod, actions: value.actions.map((a) => ({ ...a })) } : value
      }
      return { code: 0 }
    },
    serviceDelete (name) {
      scm.calls.push(['serviceDelete', name])
      if (!services.has(name.toLowerCase())) return fail(1060, 'OpenServiceW')
      if (denied()) return fail(5, 'OpenSCManagerW')
      services.delete(name.toLowerCase())
      return { code: 0 }
    },
    serviceControl (name, action) {
      scm.calls.push(['serviceControl', name, action])
      const s = services.get(name.toLowerCase())
      if (!s) return fail(1060, 'OpenServiceW')
      if (denied()) return fail(5, 'OpenSCManagerW')
      if (action === 'start') {
        if (s.state !== 'stopped') return fail(1056, 'StartServiceW')
        Object.assign(s, { state: 'running', pid: 4242, win32ExitCode: 0, serviceExitCode: 0 })
      } else {
        if (s.state === 'stopped') return fail(1062, 'ControlService')
        s.state = 'stop_pending'
        if (!scm.slowStop.has(s.name)) Object.assign(s, { state: 'stopped', pid: 0 })
      }
      return { code: 0, state: s.state }
    },
    serviceQuery (name) {
      const s = services.get(name.toLowerCase())
      if (!s) return fail(1060, 'OpenServiceW')
      if (s.state === 'stop_pending') {
        const left = scm.slowStop.get(s.name) || 0
        if (left <= 0) Object.assign(s, { state: 'stopped', pid: 0 })
        else scm.slowStop.set(s.name, left - 1)
      }
      const { sidType, ...visible } = s
      return { code: 0, ...visible }
    },
    serviceHostStart (name, onEvent) {
      if (host.onEvent !== null) return 183
      host.name = name
      host.onEvent = onEvent
      return 0
    },
    serviceHostStatus (state, options = {}) {
      host.statuses.push([state, { ...options }])
      return host.name === null ? 6 : 0
    }
  }
  return scm
}

function win32Error (code, syscall, prefix) {
  const err = new Error(`${syscall} failed: ${NAMES[code] || 'Win32 error'} (${code})`)
  err.win32 = code
  err.win32Name = NAMES[code]
  err.syscall = syscall
  if (prefix) err.prefix = prefix
  return err
}

/**
 * @param {object} [options]
 * @param {string|null} [options.wine=null] pretend to run under this Wine version
 * @param {boolean} [options.streaming] HttpSendResponseEntityBody usable (default: not Wine)
 * @param {boolean} [options.cancel] HttpCancelHttpRequest usable (default: not Wine)
 * @param {object} [options.kernel] a simulated kernel (fake-kernel.js) that answers the
 *   queue's calls as HTTP.SYS would; without it nothing happens unless a test emits it
 */
function createFakeAddon ({ wine = null, streaming = wine === null, cancel = wine === null, kernel = null } = {}) {
  const queues = []
  const failures = { open: null, create: null, start: null, urls: new Map() }
  const states = new Map() // queue name -> HTTP.SYS's state of that named queue
  const violations = []

  // Wine answers 120 to every property but the binding (docs/wine.md 2.10)
  function kernelSet (call, state) {
    if (wine !== null && call.name !== 'HttpServerBindingProperty') return 120
    return applyProperty(call, state, violations)
  }

  class Queue {
    constructor (options) {
      this.options = options
      this.calls = []
      this.onEvents = null
      this.started = false
      this.closed = false
      this.refed = true
      const mode = options.mode
      if (mode === 'open' && failures.open) throw win32Error(failures.open, 'HttpCreateRequestQueue')
      if (mode !== 'open' && failures.create) throw win32Error(failures.create, 'HttpCreateRequestQueue')
      this.kernel = mode === 'open' && states.has(options.name) ? states.get(options.name) : newQueueState()
      if (mode !== 'open' && options.name) states.set(options.name, this.kernel)
      const calls = options.properties || []
      this.groupCalls = calls.filter((c) => c.call === 'HttpSetUrlGroupProperty')
      this.grouped = false
      for (const call of calls.filter((c) => c.call !== 'HttpSetUrlGroupProperty')) {
        const code = kernelSet(call, this.kernel)
        if (code !== 0) throw Object.assign(win32Error(code, 'HttpSetRequestQueueProperty'), { property: call.name })
      }
      this.urls = []
      for (const url of options.urls || []) this.addUrl(url)
      this.tokens = new Map() // number -> { user: sid, groups: [{ sid, attributes }] }
      queues.push(this)
    }

    /**
     * A token for a request (its auth.token): user and groups as names of the machine's
     * accounts (addAccount) or SIDs; groups: [name | { name, attributes }], attributes
     * SE_GROUP_ENABLED (4) unless given.
     */
    issueToken ({ user, groups = [] }) {
      const sidOf = (n) => /^S-1-/i.test(n) ? n : accounts.get(n)
      const id = ++lastToken
      this.tokens.set(id, {
        user: sidOf(user),
        groups: groups.map((g) => typeof g === 'string' ? { sid: sidOf(g), attributes: 4 } : { sid: sidOf(g.name), attributes: g.attributes === undefined ? 4 : g.attributes })
      })
      return id
    }

    tokenUser (token) {
      this.calls.push(['tokenUser', token])
      const t = this.tokens.get(token)
      return t ? { code: 0, sid: t.user } : { code: 6 }
    }

    tokenGroups (token) {
      this.calls.push(['tokenGroups', token])
      const t = this.tokens.get(token)
      return t ? { code: 0, groups: t.groups.map((g) => ({ ...g })) } : { code: 6 }
    }

    closeToken (token) {
      this.calls.push(['closeToken', token])
      return this.tokens.delete(token)
    }

    start (onEvents) {
      if (failures.start) throw win32Error(failures.start, 'CreateThread')
      this.started = true
      this.onEvents = onEvents
      if (kernel !== null) kernel.started(this)
    }

    addUrl (url) {
      // the addon's URL groups get the group calls, the binding last (queue.cc NewUrlGroup)
      if (!this.groupCalls.some((c) => c.name === 'HttpServerBindingProperty')) {
        throw Object.assign(new TypeError('options.properties must hold the HttpServerBindingProperty call'), { code: 'ERR_INVALID_ARG_TYPE' })
      }
      if (!this.grouped) {
        for (const call of this.groupCalls) {
          const code = kernelSet(call, this.kernel)
          if (code !== 0) throw Object.assign(win32Error(code, 'HttpSetUrlGroupProperty', url), { property: call.name })
        }
        this.grouped = true
      }
      const code = failures.urls.get(url)
      if (code) throw win32Error(code, 'HttpAddUrlToUrlGroup', url)
      this.urls.push(url)
    }

    removeUrl (url) {
      const i = this.urls.indexOf(url)
      if (i === -1) return 2
      this.urls.splice(i, 1)
      return 0
    }

    // one property call on this queue (or its URL groups), as HTTP.SYS takes its bytes
    setProperty (call) {
      this.calls.push(['setProperty', call])
      return kernelSet(call, this.kernel)
    }

    // HttpFlushResponseCache under `prefixes` (default: the ones this handle registered;
    // none: nothing is flushed). HTTP.SYS removes only what the calling process cached,
    // so this empties cached() of this handle alone. Wine has nothing to flush (120).
    flushCache (prefixes) {
      this.record('flushCache', prefixes === undefined ? [] : [prefixes])
      return wine !== null ? 120 : 0
    }

    /**
     * The ids of the responses HTTP.SYS holds in its cache from this handle (its
     * process): a whole 200 sent with a time to live, not flushed since.
     */
    cached () {
      let ids = []
      for (const c of this.calls) {
        // ['respond', id, status, reason, headers, body, flags, cacheTtl]: flags 1 is MORE
        if (c[0] === 'respond' && c[2] === 200 && (c[6] & 1) === 0 && c[7] > 0) ids.push(c[1])
        const under = c[0] === 'flushCache' ? (c[1] && c[1].length > 0 ? c[1] : this.urls) : []
        if (under.length > 0 && wine === null) ids = []
      }
      return ids
    }

    respond (...args) { return this.record('respond', args) }
    sendBody (...args) { return this.record('sendBody', args) }
    readBody (...args) { return this.record('readBody', args) }
    cancel (...args) {
      this.record('cancel', args)
      return cancel ? 0 : 50
    }

    stopReceiving () { this.record('stopReceiving', []) }
    close () {
      if (this.closed) return
      this.closed = true
      this.record('close', [])
    }

    ref () { this.refed = true }
    unref () { this.refed = false }

    info () {
      return {
        mode: this.options.mode,
        name: this.options.name || '',
        urls: [...this.urls],
        receives: this.options.receives || 8,
        skipCompletionPortOnSuccess: true,
        inFlight: 0
      }
    }

    record (name, args) {
      this.calls.push([name, ...args])
      if (kernel !== null) return kernel.call(this, name, args)
      return 0
    }

    /** The calls named `name`, without the name. */
    callsOf (name) {
      return this.calls.filter((c) => c[0] === name).map((c) => c.slice(1))
    }

    /** Delivers one batch, as the addon's thread-safe function does. */
    emit (events) {
      this.onEvents(events)
    }
  }

  // Service configuration: an in-memory store of reservations and bindings.
  const acl = new Map()
  const certs = []
  const accounts = new Map([['BUILD\\ci', 'S-1-5-21-1-2-3-1001'], ['Everyone', 'S-1-1-0'], ['WEB01\\svcuser', 'S-1-5-21-9-9-9-1002']])
  let lastToken = 0
  const keyOf = (spec) => spec.host ? `${spec.host}:${spec.port}` : `${spec.ip}:${spec.port}`
  const config = {
    configCalls: [],
    /** lookupSid calls (LookupAccountSid: a round trip to a domain controller on a miss) */
    lookups: 0,
    /** HttpUpdateServiceConfiguration present (Windows 10+) */
    canUpdate: true,
    urlAclSet (prefix, sddl) {
      config.configCalls.push(['urlAclSet', prefix, sddl])
      if (machine.denied) return 5
      if (machine.codes.urlAclSet) return machine.codes.urlAclSet
      if (acl.has(prefix)) return 183
      acl.set(prefix, sddl)
      return 0
    },
    urlAclDelete (prefix) {
      config.configCalls.push(['urlAclDelete', prefix])
      if (machine.denied) return 5
      return acl.delete(prefix) ? 0 : 2
    },
    urlAclList (prefix) {
      const records = [...acl].filter(([p]) => !prefix || p === prefix).map(([p, sddl]) => ({ prefix: p, sddl }))
      return { code: records.length ? 0 : 2, records }
    },
    sslCertSet (spec, update) {
      config.configCalls.push(['sslCertSet', spec, update])
      if (machine.denied) return 5
      const i = certs.findIndex((c) => keyOf(c) === keyOf(spec))
      if (update && !config.canUpdate) return 50
      if (update && i === -1) return 2
      if (!update && i !== -1) return 183
      // a code the set answers instead: a number, or (spec, update) => code (0: goes through)
      const refused = typeof machine.codes.sslCertSet === 'function' ? machine.codes.sslCertSet(spec, update) : machine.codes.sslCertSet
      if (refused) return refused
      const record = { ip: spec.ip, port: spec.port, host: spec.host, hash: spec.hash.toString('hex'), appId: spec.appId, store: spec.store, flags: spec.flags || 0, checkMode: spec.checkMode || 0 }
      // the other HTTP_SERVICE_CONFIG_SSL_PARAM fields, where the caller gave them (netsh and IIS set them)
      for (const k of ['revocationFreshnessTime', 'urlRetrievalTimeout', 'ctlIdentifier', 'ctlStoreName']) if (spec[k] !== undefined) record[k] = spec[k]
      if (i === -1) certs.push(record)
      else certs[i] = record
      return 0
    },
    sslCertDelete (spec) {
      config.configCalls.push(['sslCertDelete', spec])
      if (machine.denied) return 5
      const i = certs.findIndex((c) => keyOf(c) === keyOf(spec))
      if (i === -1) return 2
      certs.splice(i, 1)
      return 0
    },
    sslCertList (sni) {
      const records = certs.filter((c) => Boolean(c.host) === Boolean(sni))
      return { code: records.length ? 0 : 2, records }
    },
    lookupAccount (name) {
      const sid = accounts.get(name)
      return sid ? { code: 0, sid, domain: name.includes('\\') ? name.split('\\')[0] : '', name: name.split('\\').pop(), type: 'user' } : { code: 1332 }
    },
    lookupSid (sid) {
      config.lookups++
      for (const [name, s] of accounts) {
        if (s === sid) return { code: 0, domain: name.includes('\\') ? name.split('\\')[0] : '', name: name.split('\\').pop(), type: 'user' }
      }
      return { code: 1332 }
    },
    // the LocalMachine certificate store: thumbprint (hex) -> certificate
    certImport (source) {
      config.configCalls.push(['certImport', Object.keys(source).sort()])
      if (machine.denied) return { code: 5 }
      if (source.pfx && source.passphrase === 'wrong') return { code: 86 }
      const thumbprint = (source.pfx ? 'a1' : 'b2').repeat(20)
      // PFXImportCertStore puts an RSA key in a CryptoAPI provider unless asked for CNG
      const keyProvider = source.pfx && source.cng !== true ? LEGACY_PROVIDER : CNG_PROVIDER
      store.set(thumbprint, { subject: 'CN=imported', issuer: 'CN=imported', notBefore: Date.now() - 86400000, notAfter: Date.now() + 86400000 * 90, hasPrivateKey: true, privateKeyCode: 0, keyProvider, dnsNames: ['imported.test'] })
      // a PFX's certificates without a key (its chain): machine.pfxChain, DER Buffers
      return { code: 0, thumbprint, keyProvider, chain: source.pfx ? machine.pfxChain.slice() : [] }
    },
    // a certificate without a key into LocalMachine\<store> (the intermediates of a chain into CA)
    certAdd ({ der, store: name }) {
      const thumbprint = crypto.createHash('sha1').update(der).digest('hex')
      config.configCalls.push(['certAdd', name, thumbprint])
      if (machine.denied) return { code: 5 }
      const x509 = new crypto.X509Certificate(der)
      storeOf(name).set(thumbprint, { subject: x509.subject.replace(/\n/g, ', '), issuer: x509.issuer.replace(/\n/g, ', '), notBefore: Date.parse(x509.validFrom), notAfter: Date.parse(x509.validTo), hasPrivateKey: false, privateKeyCode: null, keyProvider: null, dnsNames: [] })
      return { code: 0, thumbprint }
    },
    certFind ({ thumbprint, store: name }) {
      const cert = storeOf(name).get(thumbprint.toLowerCase())
      return cert ? { code: 0, found: true, ...cert } : { code: 0, found: false }
    },
    isElevated () { return machine.elevated },
    serviceStatus (name) {
      return machine.services[name] ? { code: 0, ...machine.services[name] } : { code: 1060 }
    },
    tcpListeners () { return { code: 0, list: machine.listeners.slice() } },
    processName (pid) { return machine.processes[pid] || null },
    // HttpServiceConfigTimeout: null where none is set (native/src/diagnostics.cc)
    machineTimeouts () { return { code: 0, headerWait: null, idleConnection: null, ...machine.timeouts } }
  }
  const scm = createFakeScm({ get denied () { return machine.denied }, get elevated () { return machine.elevated } })
  Object.assign(config, scm.api)
  // what doctor and the setup commands ask the machine; tests change it
  const store = new Map() // LocalMachine\My
  const stores = new Map([['my', store]]) // by lower-case name: 'ca', ...
  const storeOf = (name = 'My') => {
    const key = String(name).toLowerCase()
    if (!stores.has(key)) stores.set(key, new Map())
    return stores.get(key)
  }
  const machine = {
    denied: false,
    elevated: true,
    services: { HTTP: { state: 'running', startType: 'demand' } },
    listeners: [],
    processes: { 4: 'System' },
    timeouts: {}, // HTTP.SYS's machine-wide timers: { headerWait, idleConnection } (seconds)
    codes: {}, // a Win32 code a call answers instead: { urlAclSet: 87 }
    pfxChain: [] // the certificates without a key an imported PFX holds (DER)
  }

  return {
    ...config,
    get configCalls () { return config.configCalls },
    get canUpdate () { return config.canUpdate },
    set canUpdate (v) { config.canUpdate = v },
    queues,
    get lookups () { return config.lookups },
    /** an account lookupAccount/lookupSid know: name ('DOMAIN\\user') and SID */
    addAccount (name, sid) { accounts.set(name, sid) },
    /** access tokens handed out and not closed yet, every queue together */
    openTokens () { return queues.reduce((n, q) => n + q.tokens.size, 0) },
    /** property calls whose bytes differ from Microsoft's documentation (fake-properties.js) */
    violations,
    scm,
    EVENT,
    events: { ...EVENT },
    machine,
    /** puts a certificate into the fake LocalMachine store (My, or cert.store) */
    addCertificate (thumbprint, { store: name, ...cert } = {}) {
      const c = { subject: 'CN=test', issuer: 'CN=test', notBefore: Date.now() - 86400000, notAfter: Date.now() + 86400000 * 30, hasPrivateKey: true, dnsNames: [], ...cert }
      // the key's provider and whether it opened for this account: only where there is one
      storeOf(name).set(thumbprint.toLowerCase(), { privateKeyCode: c.hasPrivateKey ? 0 : null, keyProvider: c.hasPrivateKey ? CNG_PROVIDER : null, ...c })
    },
    /** the certificates of LocalMachine\<name>, by thumbprint */
    certificates (name) {
      return storeOf(name)
    },
    /** Make the next constructions (or start()) fail: { open: 2 } / { create: 5 } / { start: 8 } / { urls: { prefix: 183 } } */
    fail ({ open = null, create = null, start = null, urls = {} } = {}) {
      failures.open = open
      failures.create = create
      failures.start = start
      failures.urls = new Map(Object.entries(urls))
    },
    platform () {
      return { wine, features: { streaming, cancel, disconnect: !wine, queueProperties: !wine } }
    },
    errors () {
      return { ...NAMES }
    },
    // the supervisor's job object (native/src/job.cc): counted, so a test sees it made
    job: { calls: 0, code: 0 },
    jobKillOnClose () {
      this.job.calls++
      return this.job.code === 0 ? { code: 0 } : { code: this.job.code, syscall: 'AssignProcessToJobObject' }
    },
    Queue
  }
}

/** A QueueRequest as the addon builds it. */
function fakeRequest (id, overrides = {}) {
  return {
    id,
    method: 'GET',
    url: '/',
    httpVersionMajor: 1,
    httpVersionMinor: 1,
    rawHeaders: ['Host', 'localhost'],
    remoteAddress: '127.0.0.1',
    remotePort: 50000,
    remoteFamily: 'IPv4',
    localAddress: '127.0.0.1',
    localPort: 8080,
    encrypted: false,
    tls: null,
    hasBody: false,
    expect: null,
    connectionId: 7,
    keepAlive: true,
    ...overrides
  }
}

module.exports = { createFakeAddon, fakeRequest, EVENT, createFakeScm }
