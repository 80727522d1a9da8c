'use strict'

// The interface between the supervisor and the worker processes it starts: the
// environment variables it hands a worker and the IPC messages both sides exchange.
// The supervisor writes them (src/supervisor/instance.js, the routers' workerEnv()), the
// preload and the queue backends read them; this module is the one place their names
// are spelled. docs/architecture.md 7 describes the semantics.

/** Environment variables the supervisor sets for a worker (and the user may set). */
const ENV = Object.freeze({
  /** the hub's worker socket (Unix socket or named pipe); unset on HTTP.SYS and standalone */
  HUB: 'HTTPSYS_HUB',
  /** the app's queue name: every server of the worker attaches to it */
  QUEUE: 'HTTPSYS_QUEUE',
  /**
   * the app's secret for its queue: the router admits to a queue only workers that
   * present it (their HELLO, docs/wire-protocol.md), so another process reaching its socket
   * cannot take the app's requests. Kept in the environment so the app's own cluster
   * and fork() children, which attach to the same queue, inherit it.
   */
  QUEUE_TOKEN: 'HTTPSYS_QUEUE_TOKEN',
  /** the prefixes the controller registered on the queue, comma-separated (both routers; unset for an app without urls) */
  QUEUE_URLS: 'HTTPSYS_QUEUE_URLS',
  /** the router: 'hub' | 'httpsys' | 'auto' (unset: auto) */
  BACKEND: 'HTTPSYS_BACKEND',
  /** the supervisor's pid: only its own child speaks the IPC protocol below */
  SUPERVISOR_PID: 'HTTPSYS_SUPERVISOR_PID',
  /** the app's name and this process's instance number */
  APP: 'HTTPSYS_APP',
  INSTANCE: 'HTTPSYS_INSTANCE',
  /** pino level of the worker's own httpsys records */
  LOG_LEVEL: 'HTTPSYS_LOG_LEVEL',
  /**
   * request body bytes beyond which the worker answers 413 (limits.max_body_size; 0: no
   * limit). HTTP.SYS has no such limit, so on that router each worker enforces it; the
   * hub enforces it itself.
   */
  MAX_BODY_SIZE: 'HTTPSYS_MAX_BODY_SIZE',
  /**
   * '1' for an app of type 'worker' (no HTTP): the preload leaves node's http alone and
   * only answers the supervisor's IPC (drain, shutdown, stats)
   */
  NO_HTTP: 'HTTPSYS_NO_HTTP',
  /**
   * the app's output cache (docs/output-cache.md): 'off', or its config rules as JSON
   * ([{ path, ttl (seconds), query }]); unset: no rules, responses with
   * Cache-Control: public, max-age or s-maxage are still cached
   */
  CACHE: 'HTTPSYS_CACHE',
  /**
   * '1' under `httpsys start --setup` (src/cli/start.js puts it in the supervisor's own
   * environment, so the daemon of `start -d --setup` has it too; the HTTP.SYS router
   * hands it on): a worker whose https server attaches to a port no certificate binding
   * covers imports the key and certificate the app passed to https.createServer() into
   * LocalMachine\My and binds them (src/httpsys/app-cert.js). Unset, it only warns.
   */
  SETUP: 'HTTPSYS_SETUP',
  /**
   * ms the supervisor gives a stopping worker before it kills it (the app's
   * kill_timeout; HTTP.SYS router): a worker lets the responses already in the kernel
   * finish until then (src/queue/httpsys/attachment.js)
   */
  KILL_TIMEOUT: 'HTTPSYS_KILL_TIMEOUT',
  /**
   * HTTP.SYS: the config's `tls` entries that ask clients for a certificate, as JSON
   * ([{ port, host?, rejectUnauthorized, ca?: [PEM] }]); the worker checks the
   * certificates HTTP.SYS hands over against them (src/httpsys/client-certs.js)
   */
  CLIENT_CERTS: 'HTTPSYS_CLIENT_CERTS',
  /**
   * the app's Windows authentication (its `auth`) and promote_server_vars, as JSON
   * (src/windows-auth.js authEnv): on HTTP.SYS the worker exposes what HTTP.SYS
   * authenticated, on the hub a development identity, or it refuses to attach
   */
  AUTH: 'HTTPSYS_AUTH'
})

/** IPC message types ({ type, ... }) between the supervisor and its worker. */
const MSG = Object.freeze({
  /**
   * supervisor -> worker: stop. The preload runs the app's SIGTERM/SIGINT listeners when
   * it has any, else closes its servers once their requests are answered and exits.
   * Carries { deadline } (ms the supervisor waits before killing).
   */
  SHUTDOWN: 'httpsys:shutdown',
  /**
   * supervisor -> worker: stop taking requests from the queue and finish the ones in
   * flight, without exiting (the first step of the stop ladder and of a rolling reload).
   */
  DRAIN: 'httpsys:drain',
  /** worker -> supervisor: every server has closed after DRAIN */
  DRAINED: 'httpsys:drained',
  /**
   * supervisor -> worker: report. Answered with { type: STATS, rss, heapUsed,
   * processUptimeMs, requests } (requests: src/queue/request-stats.js snapshot())
   */
  STATS: 'httpsys:stats',
  /** worker -> supervisor, once: a server of this process is attached to its queue */
  READY: 'httpsys:ready'
})

/**
 * What the worker side reads from its environment.
 * @param {object} [env=process.env]
 * @returns {{hub: string|null, queue: string|null, queueToken: string|null, queueUrls: string[], backend: string,
 *   supervisorPid: number|null, app: string|null, instance: number|null, maxBodySize: number,
 *   noHttp: boolean, cache: object[]|null, setup: boolean, killTimeout: number}} cache: the config's cache
 *   rules, null when the cache is off; setup: under `httpsys start --setup`; killTimeout: ms (Infinity: none)
 */
function readWorkerEnv (env = process.env) {
  const pid = Number(env[ENV.SUPERVISOR_PID])
  const inst = Number(env[ENV.INSTANCE])
  const maxBody = Number(env[ENV.MAX_BODY_SIZE])
  const kill = Number(env[ENV.KILL_TIMEOUT])
  return {
    hub: env[ENV.HUB] || null,
    queue: env[ENV.QUEUE] || null,
    queueToken: env[ENV.QUEUE_TOKEN] || null,
    queueUrls: listOf(env[ENV.QUEUE_URLS]),
    backend: env[ENV.BACKEND] || 'auto',
    supervisorPid: env[ENV.SUPERVISOR_PID] && pid > 0 ? pid : null,
    app: env[ENV.APP] || null,
    instance: env[ENV.INSTANCE] !== undefined && env[ENV.INSTANCE] !== '' && Number.isInteger(inst) ? inst : null,
    maxBodySize: Number.isSafeInteger(maxBody) && maxBody > 0 ? maxBody : Infinity,
    noHttp: env[ENV.NO_HTTP] === '1',
    cache: cacheRules(env[ENV.CACHE]),
    setup: env[ENV.SETUP] === '1',
    killTimeout: env[ENV.KILL_TIMEOUT] && kill > 0 ? kill : Infinity,
    clientCerts: decodeClientCerts(env[ENV.CLIENT_CERTS])
  }
}

/** HTTPSYS_CACHE: null (off), or the rules; a value that is not a rule list means no rules. */
function cacheRules (value) {
  if (value === undefined || value === '') return []
  if (value === 'off' || value === '0' || value === 'false') return null
  let list
  try {
    list = JSON.parse(value)
  } catch {
    return []
  }
  if (!Array.isArray(list)) return []
  return list.filter((r) => r && typeof r.path === 'string' && r.path.startsWith('/') && Number.isInteger(r.ttl) && r.ttl > 0)
    .map((r) => ({ path: r.path, ttl: r.ttl, query: r.query === true }))
}

/** HTTPSYS_CLIENT_CERTS's entries ([] when unset or not a list of them). */
function decodeClientCerts (value) {
  if (value === undefined || value === '') return []
  try {
    const list = JSON.parse(value)
    return Array.isArray(list) ? list.filter((e) => e && Number.isInteger(e.port)) : []
  } catch {
    return []
  }
}

function listOf (value) {
  return value ? value.split(/[\s,]+/).filter(Boolean) : []
}

/**
 * HTTPSYS_CACHE for an app's workers, from its config `cache` (false, or rules with
 * ttl in seconds); undefined: no rules (Cache-Control alone decides).
 */
function cacheEnv (cache) {
  if (cache === false) return 'off'
  return Array.isArray(cache) && cache.length > 0 ? JSON.stringify(cache) : undefined
}

module.exports = { ENV, MSG, readWorkerEnv, cacheEnv }
