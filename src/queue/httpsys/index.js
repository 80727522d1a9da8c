'use strict'

// The queue backend for Windows: HTTP.SYS through the native addon (native/). All
// policy is in JavaScript; the addon only wraps the OS calls and reports Win32 codes.
//
//   attachment.js        a worker's attachment (the transport under attachment-base.js)
//   wine-attachment.js   the same, with the workarounds Wine's HTTP.SYS needs
//   token-identities.js  each authenticated request's access token as its identity
//   controller.js        the supervisor's queues (create + register URLs)
//   errors.js            Win32 codes -> the coded errors of src/errors.js
//   service-config.js    URL reservations and certificate bindings (setup commands)
//   app-cert.js          an https app's own certificate bound under `httpsys start --setup`
//   client-certs.js      client certificates: the binding asks, the worker checks
//   loader.js            finds and loads the .node file

const net = require('node:net')
const os = require('node:os')
const { codes } = require('../../errors')
const urlprefix = require('../../urlprefix')
const { readWorkerEnv } = require('../../worker-interface')
const { HttpSysAttachment } = require('./attachment')
const { WineAttachment } = require('./wine-attachment')
const { queueSetup, TIMER_MAX_S } = require('../../httpsys/properties')
const { portOf } = require('../../httpsys/errors')
const { createAddonLayer } = require('../../httpsys')
const { createServiceConfig } = require('../../httpsys/service-config')
const { unboundTargets, setupAppCertificate } = require('../../httpsys/app-cert')
const { policyLookup, bindingsWithoutNegotiation, negotiateCommand } = require('../../httpsys/client-certs')
const { httpSysGate } = require('../auth-gate')

/**
 * The backend over an addon (the real one, or a fake one in tests).
 * @param {() => object} getAddon loads the addon; throws ERR_HTTPSYS_NATIVE_UNAVAILABLE
 * @param {object} [options]
 * @param {(level: string, fields: object, message: string) => void} [options.log] the
 *   worker's httpsys records (default: the process logger)
 * @param {(fields: object, message: string) => void} [options.warn] its warnings (default: log)
 * @param {() => Date} [options.now] the clock certificates are checked against
 */
function createBackend (getAddon, { log = defaultLog, warn = (fields, message) => log('warn', fields, message), now = () => new Date() } = {}) {
  // the addon, its platform facts and its error mapper, each made once (src/httpsys)
  const layer = createAddonLayer(getAddon)

  /**
   * Worker side: open a named queue (Attach mode: the worker registers nothing), or
   * (standalone, or a named queue that does not exist) create one for `urls`.
   * @param {object} options see src/wire/contract.js; extra tuning: receives, bufferSize,
   *   bodyChunk, bufferData (kernel response buffering), queueLength, verbosity, timeouts,
   *   maxBodySize (default: HTTPSYS_MAX_BODY_SIZE, else no limit)
   * @returns {Promise<HttpSysAttachment>}
   */
  // `tls` (an https server's key material) is the hub's: HTTP.SYS serves the certificate
  // bound to the port (`httpsys cert add`), never one an app hands over. When no binding
  // covers an https port, the app's key and cert are the obvious ones to bind (an unbound
  // port fails every handshake, silently for the app): see certificates() below.
  // `settings` (src/http routerSettings) are what a router that serves this server alone
  // follows: a queue the worker creates for its own prefixes (standalone) is one.
  async function attach ({ queue, urls, handlers, tls, settings, queueLength, verbosity, timeouts, maxConnections, ...tuning } = {}) {
    if (!handlers || typeof handlers.onRequest !== 'function') {
      throw new codes.ERR_INVALID_ARG_TYPE({ name: 'handlers.onRequest', expected: 'a function', actual: handlers && handlers.onRequest })
    }
    const b = layer.addon()
    const platform = layer.platform()
    const errors = layer.errors()
    const prefixes = await withFreePorts(urls || [])
    if (tuning.receives === undefined) tuning.receives = defaultReceives(platform)
    // the property calls (properties.js): the queue's own only where this process creates it
    if (!queue && timeouts === undefined) timeouts = standaloneTimeouts(settings) || undefined
    const queueProperties = platform.features.queueProperties !== false
    // Windows authentication (auth-gate.js): on the URL groups this process makes, and
    // what every request carries
    const auth = httpSysGate()
    const properties = (mode) => queueSetup({ mode, queueProperties, queueLength, verbosity, timeouts, maxConnections, auth: auth && auth.auth })
    const worker = readWorkerEnv()
    // client certificates (client-certs.js): checked here, never let through unasked
    const clientCerts = clientCertPolicies(tls, worker, queue ? worker.queueUrls : prefixes)
    const maxBodySize = tuning.maxBodySize !== undefined ? tuning.maxBodySize : worker.maxBodySize
    delete tuning.maxBodySize
    let native = null
    let registered = []
    if (queue && platform.wine && worker.queueUrls.length > 0) {
      // Wine ignores queue names (an "opened" queue is a new empty one): the worker
      // registers the controller's prefixes itself (supervisor/httpsys-router.js).
      try {
        native = new b.Queue({ ...tuning, mode: 'create', name: queue, urls: worker.queueUrls, properties: properties('create') })
      } catch (err) {
        throw errors.toError(err, { queue })
      }
    } else if (queue) {
      // Under the supervisor the controller registered the app's prefixes; a worker
      // adds none (an app on http://+:8080/api/ calling listen(8080) must not take the
      // port's root), whatever its listen() asked for.
      try {
        native = new b.Queue({ ...tuning, mode: 'open', name: queue, urls: [], properties: properties('open') })
        registered = worker.queueUrls
      } catch (err) {
        if (!errors.is(err, 'ERROR_FILE_NOT_FOUND') || err.syscall !== 'HttpCreateRequestQueue') throw errors.toError(err, { queue })
        if (prefixes.length === 0) throw new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue, win32: err.win32 })
      }
    }
    if (native === null) {
      try {
        native = new b.Queue({ ...tuning, mode: 'create', name: queue || '', urls: prefixes, properties: properties('create') })
      } catch (err) {
        throw errors.toError(err, { queue })
      }
    }
    const own = native.info().urls
    const bound = own.length > 0 ? own : registered.length > 0 ? registered : prefixes
    const info = { queue: queue || null, urls: bound, ports: portsOf(bound) }
    const Attachment = platform.wine ? WineAttachment : HttpSysAttachment
    if (auth !== null && auth.auth !== null && !queueProperties) {
      warn({ event: 'auth-unavailable', app: worker.app, schemes: auth.auth.schemes },
        'Wine\'s HTTP.SYS takes no authentication property (docs/wine.md 2.10): no request is authenticated here, ' +
        (auth.auth.anonymous === false ? 'so every request is answered 401' : 'so every request reaches the app anonymous'))
    }
    const sc = createServiceConfig(getAddon)
    const lookupSid = (sid) => {
      const r = typeof b.lookupSid === 'function' ? sc.lookupSid(sid) : null
      return r === null ? null : r.account
    }
    const attachment = new Attachment(native, platform, handlers, info, errors.attachmentErrors(queue), { maxBodySize, clientCerts, killTimeout: worker.killTimeout, auth, lookupSid })
    try {
      native.start((events) => attachment.onEvents(events))
    } catch (err) {
      // The queue (and the prefixes it registered) must not outlive the failed attach.
      native.close()
      throw errors.toError(err, { queue })
    }
    if (tls) certificates(bound, tls, worker)
    return attachment
  }

  /**
   * What the worker checks of client certificates, by request (client-certs.js
   * policyLookup), or null when neither the app's https options nor the config's tls
   * entries ask for them. A binding that would serve one of those prefixes without
   * asking clients for a certificate fails the attach: clients would reach the app
   * unasked. A port with no binding at all is no such risk (no handshake succeeds there).
   * @throws ERR_HTTPSYS_CLIENT_CERT_BINDING; ERR_HTTPSYS_TLS_CERT for a `ca` that is no certificate
   */
  function clientCertPolicies (tls, worker, urls) {
    let lookup
    try {
      lookup = policyLookup(tls, worker.clientCerts)
    } catch (err) {
      throw new codes.ERR_HTTPSYS_TLS_CERT({ file: 'ca (the certificates the app trusts for clients)', reason: `it holds something that is not a certificate (${err.message})`, fromApp: true })
    }
    if (lookup === null) return null
    const own = tls && tls.requestCert === true
    const secure = urls.filter((u) => /^https:/i.test(u))
    const asking = own ? secure : secure.filter((u) => worker.clientCerts.some((e) => e.port === portOf(u)))
    const where = own ? 'https.createServer({ requestCert: true })' : `the config's tls entry for port ${portOf(asking[0] || '')}`
    let bad
    try {
      bad = bindingsWithoutNegotiation(createServiceConfig(getAddon), asking)
    } catch (err) {
      throw new codes.ERR_HTTPSYS_CLIENT_CERT_BINDING({ where, reason: err.message })
    }
    if (bad.length > 0) {
      throw new codes.ERR_HTTPSYS_CLIENT_CERT_BINDING({ where, bindings: bad.map((x) => x.binding), commands: bad.map(negotiateCommand) })
    }
    return lookup
  }

  /**
   * An https server whose prefixes some port or host has no certificate binding for:
   * under `httpsys start --setup` the app's own key and certificate are bound there
   * (app-cert.js: one record, `tls-bound` or `tls-bind-failed`; the app runs on either
   * way); otherwise a `tls-unbound` warning says how. Under Wine, which stores no binding
   * (every query finds none), only the warning.
   */
  function certificates (urls, tls, worker) {
    if (!urls.some((u) => /^https:/i.test(u))) return
    let sc
    let targets
    try {
      sc = createServiceConfig(getAddon)
      targets = unboundTargets(sc, urls)
    } catch {
      return // the configuration was not answered: nothing to say
    }
    if (targets.length === 0) return
    if (worker.setup && !layer.platform().wine) {
      setupAppCertificate(sc, tls, targets, { log, now: now() })
      return
    }
    warnUnbound(targets, worker.setup)
  }

  function warnUnbound (targets, setup) {
    for (const port of portsOf(targets.flatMap((t) => t.prefixes))) {
      const here = targets.filter((t) => t.port === port)
      const prefixes = here.flatMap((t) => t.prefixes)
      const what = here.map((t) => t.host !== undefined ? t.binding : `port ${port}`).join(' or ')
      warn({ event: 'tls-unbound', port, prefixes },
        `${prefixes.join(' ')}: no certificate is bound to ${what}, so HTTP.SYS refuses every TLS handshake there. ` +
        (setup ? 'Under Wine, which stores no certificate binding, `httpsys start --setup` cannot bind one. ' : '') +
        'The app passed a key and certificate to https.createServer(): `httpsys start --setup`, run once from an ' +
        'elevated prompt, imports and binds them for you when the app starts; or bind certificate files with ' +
        `\`httpsys cert add --port ${port} --cert <its certificate file> --key <its key file>\` ` +
        `(or add tls: [{ port: ${port}, cert, key }] to httpsys.config.js and run \`httpsys start --setup\`).`)
    }
  }

  return {
    attach,
    createQueue: layer.createQueue,
    platform: layer.platform,
    toError: layer.toError
  }
}

// Receives kept outstanding: ASP.NET keeps 5 per CPU; at least 16 so a burst of new
// connections is taken at once. Wine's http.sys only ever looks at the newest
// connection for a receive posted after requests queued up (docs/wine.md 2.7), so there
// every request must find a receive already waiting: the most the addon allows.
function defaultReceives (platform) {
  if (platform.wine) return 256
  return Math.min(Math.max(5 * os.availableParallelism(), 16), 64)
}

/**
 * The timers of a queue a standalone server creates for itself, from its own options as
 * node applies them: an idle keep-alive connection ends after the server's
 * keepAliveTimeout (node's 5 s by default), where HTTP.SYS's own default is 120 s (a
 * client that keeps its connection would keep its process waiting that long). HTTP.SYS
 * counts whole seconds up to 65534 (65535 turns the timer off): a keepAliveTimeout of 0
 * (node: no timeout) leaves HTTP.SYS's default. Set once, at listen(). Under Wine the
 * addon sets no timers (docs/wine.md 2.10). HTTP.SYS applies it only once a connection's
 * first request has reached the queue (docs/http-sys.md 1).
 * @param {object} [settings] src/http routerSettings (keepAliveTimeout in ms)
 * @returns {object|null} options.timeouts of the addon's Queue, or null
 */
function standaloneTimeouts (settings) {
  const ms = settings ? Number(settings.keepAliveTimeout) : 0
  if (!(ms > 0)) return null
  return { idleConnection: Math.min(Math.ceil(ms / 1000), TIMER_MAX_S) }
}

// A prefix asking for port 0 gets a free port now: HTTP.SYS has no "any port".
async function withFreePorts (urls) {
  const out = []
  for (const url of urls) {
    const parsed = urlprefix.parse(url, { allowPortZero: true })
    if (parsed.port !== 0) {
      out.push(parsed.prefix)
      continue
    }
    const port = await freePort()
    out.push(`${parsed.scheme}://${parsed.host}:${port}${parsed.path}`)
  }
  return out
}

function freePort () {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

function defaultLog (level, fields, message) {
  require('../../logger').child({ component: 'httpsys' })[level](fields, message)
}

function portsOf (urls) {
  return [...new Set(urls.map(portOf).filter((p) => p !== undefined))]
}

const loadAddon = () => require('../../httpsys/loader').load()
const backend = createBackend(loadAddon)

module.exports = {
  attach: backend.attach,
  // what listen() knows before the attach: the controller's prefixes (reserve.js)
  reserve: (options) => require('../reserve').reserveFromEnv(options),
  createQueue: backend.createQueue,
  platform: backend.platform,
  toError: backend.toError,
  createBackend
}
