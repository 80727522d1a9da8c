'use strict'

// What the supervisor's router (native-router.js) takes from the config and gives its
// workers: the limits and tls entries as the router's options, the environment a worker
// attaches with, and a default socket path. (These were the JS hub's, src/hub, removed
// with issue 25; the Go router kept their meaning.)

const net = require('node:net')
const { codes } = require('../errors')
const localSocket = require('../local-socket')
const { ENV, cacheEnv } = require('../worker-interface')
const { authEnv } = require('../windows-auth')

/**
 * What a worker needs to attach to the router's queue (docs/wire-protocol.md).
 * @param {{ socketPath: string, tokens: Map<string, string>, queueUrls: Map<string, string[]> }} router
 * @param {object} app
 */
function workerAttachEnv ({ socketPath, tokens, queueUrls }, app) {
  // HTTPSYS_BACKEND set on purpose: an HTTPSYS_BACKEND=httpsys inherited from the
  // shell would otherwise send the worker past the router
  return {
    [ENV.BACKEND]: 'hub',
    [ENV.HUB]: socketPath,
    [ENV.QUEUE]: app.name,
    [ENV.QUEUE_TOKEN]: tokens.get(app.name),
    // the queue's prefixes as bound (port 0 resolved): the worker's listen() knows
    // its address before it has attached (src/queue/reserve.js); none for an app
    // without urls, whose first listen() decides
    [ENV.QUEUE_URLS]: (queueUrls.get(app.name) || []).join(',') || undefined,
    [ENV.MAX_BODY_SIZE]: undefined,
    [ENV.CACHE]: cacheEnv(app.cache),
    // a development identity, or the worker refuses to attach (src/queue/auth-gate.js)
    [ENV.AUTH]: authEnv(app)
  }
}

/** The config's limits (the same keys HTTP.SYS gets) as the router's option names
 * (native-router.js routerLimits says them to the router's start command). */
function configLimits (limits) {
  if (limits === null) return {}
  return {
    queueLength: limits.queue_length,
    maxBodySize: limits.max_body_size === 0 ? Infinity : limits.max_body_size,
    headersTimeout: limits.header_timeout,
    keepAliveTimeout: limits.idle_timeout,
    bodyTimeout: limits.body_timeout,
    drainTimeout: limits.body_timeout,
    queueTimeout: limits.queue_timeout,
    maxConnections: limits.max_connections,
    cacheSize: limits.cache_size,
    cacheMaxResponse: limits.cache_max_response
  }
}

/**
 * The config's tls entries as the router takes them. Certificates by thumbprint live in a
 * Windows store the router cannot read, and the router picks certificates by port and SNI
 * host, not by local address: both are HTTP.SYS bindings (`httpsys cert`), so on the
 * router they are config errors naming the key.
 * @throws ERR_HTTPSYS_CONFIG_INVALID
 */
function configTls (entries) {
  return (entries || []).map((entry, i) => {
    if (entry.thumbprint !== undefined && entry.pfx === undefined && entry.cert === undefined) {
      throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
        key: `tls[${i}].thumbprint`,
        reason: 'names a certificate in the Windows certificate store, which the router cannot read',
        fix: 'Give the certificate as files: cert and key (PEM), or pfx with passphrase.'
      })
    }
    if (entry.ip !== undefined && entry.ip !== '0.0.0.0' && entry.ip !== '::' && net.isIP(entry.ip)) {
      throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
        key: `tls[${i}].ip`,
        reason: `binds the certificate to the address ${entry.ip}; the router chooses certificates by port and SNI host name only`,
        fix: 'Remove ip (the certificate then serves the whole port), or use host for a certificate by name.'
      })
    }
    const rest = { ...entry }
    delete rest.thumbprint
    delete rest.store
    delete rest.ip
    return rest
  })
}

/** A per-user, per-run path, so two users or two runs never share a router. */
function defaultSocketPath (pid = process.pid) {
  return localSocket.socketPath(`httpsys-${localSocket.userTag()}-${pid}`)
}

module.exports = { defaultSocketPath, configLimits, configTls, workerAttachEnv }
