'use strict'

// server.listen(...) arguments -> the queue an httpsys server attaches to.
//
// Every signature of node's net.Server#listen is accepted:
//   listen([port[, host[, backlog]]][, cb]), listen(options[, cb]), listen(path[, cb]),
//   listen(handle[, cb])
// plus a URL prefix string: listen('http://+:8080/api/'[, cb]).
//
// Under the supervisor (HTTPSYS_QUEUE set) the app's queue is what counts; the derived
// prefix rides along for a queue that has none of its own. Standalone, the prefix is
// everything. A Unix socket path or an inherited handle cannot be served from a queue.
// https://nodejs.org/api/net.html#serverlisten

const { isIPv4, isIPv6 } = require('node:net')
const { codes } = require('../errors')
const { readWorkerEnv } = require('../worker-interface')

/**
 * @typedef {object} ListenTarget
 * @property {string|undefined} queue  the queue to attach to (under the supervisor)
 * @property {string[]} urls           URL prefixes to register
 * @property {string|undefined} path   a Unix socket (or pipe) path listen() was given
 * @property {Function|null} callback  the 'listening' callback, if one was passed
 * @property {AbortSignal|null} signal options.signal: aborting it closes the server
 * @property {number} port             the port asked for (0: any)
 * @property {string} address          what server.address() reports as address
 * @property {string} family           'IPv4' | 'IPv6'
 */

/**
 * @param {any[]} args what listen() received
 * @param {object} [env=process.env]
 * @param {string} [scheme='http'] 'https' for an https server: listen(443) is https://+:443/
 * @returns {ListenTarget}
 */
function targetFor (args, env = process.env, scheme = 'http') {
  const parsed = parseListenArgs(args)
  const queue = readWorkerEnv(env).queue || undefined
  const urlprefix = require('../urlprefix')
  let urls
  let port = 0
  let host
  if (parsed.prefix !== undefined) {
    const p = urlprefix.parse(parsed.prefix, { allowPortZero: true })
    urls = [p.prefix]
    port = p.port
    host = p.ip || undefined
  } else if (parsed.path !== undefined) {
    // A queue created by the supervisor already has its URLs: an app written to listen
    // behind a reverse proxy on a socket path runs unchanged. Standalone, the process's
    // own hub listens on the path (a backend that cannot is ERR_HTTPSYS_LISTEN_PATH).
    urls = []
  } else {
    port = parsed.port
    host = parsed.host
    urls = [urlprefix.fromListen({ port, host, scheme })]
  }
  return {
    queue,
    urls,
    path: parsed.path,
    // listen(port[, host]): the server owns the port, as a node server does
    byPort: parsed.prefix === undefined && parsed.path === undefined,
    callback: parsed.callback,
    signal: parsed.signal,
    port,
    ...addressOf(host)
  }
}

/**
 * node's argument shapes, normalised.
 * @returns {{port?: number, host?: string, path?: string, prefix?: string,
 *   callback: Function|null, signal: AbortSignal|null}}
 */
function parseListenArgs (args) {
  let callback = null
  let n = args.length
  if (n > 0 && typeof args[n - 1] === 'function') {
    callback = args[n - 1]
    n--
  }
  const first = n > 0 ? args[0] : undefined
  const out = { port: 0, host: undefined, path: undefined, prefix: undefined, callback, signal: null }

  if (first !== null && typeof first === 'object') {
    if (first._handle || first.handle || first.fd !== undefined) {
      throw new codes.ERR_INVALID_ARG_VALUE({
        name: 'handle',
        value: '[handle]',
        reason: 'cannot be used: an httpsys server receives requests from a request queue, not from a socket handle or file descriptor; listen on a port or a URL prefix'
      })
    }
    out.signal = first.signal || null
    if (typeof first.path === 'string' && first.path !== '' && first.port === undefined) {
      out.path = first.path
      return out
    }
    // node: { port: undefined } and { port: null } pick a port; no port key at all is an error
    if (!('port' in first) && (first.path === undefined || first.path === null)) {
      throw new codes.ERR_INVALID_ARG_VALUE({ name: 'options', value: first, reason: 'must have the property "port" or "path"' })
    }
    out.port = portOf(first.port)
    if (first.host !== undefined && first.host !== null) out.host = String(first.host)
    return out
  }
  if (typeof first === 'string' && !isNumeric(first)) {
    if (/^https?:\/\//i.test(first)) out.prefix = first
    else out.path = first
    return out
  }
  out.port = portOf(first)
  if (n > 1 && typeof args[1] === 'string') out.host = args[1]
  return out
}

function isNumeric (s) {
  return s.trim() !== '' && Number.isFinite(Number(s))
}

function portOf (value) {
  if (value === undefined || value === null) return 0
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 65535) {
    throw new codes.ERR_SOCKET_BAD_PORT({ name: 'options.port', value })
  }
  return n
}

// what server.address() reports, as node would for the same host
function addressOf (host) {
  if (host === undefined || host === '') return { address: '::', family: 'IPv6' }
  const bare = host[0] === '[' && host[host.length - 1] === ']' ? host.slice(1, -1) : host
  if (isIPv4(bare)) return { address: bare, family: 'IPv4' }
  if (isIPv6(bare)) return { address: bare, family: 'IPv6' }
  if (bare.toLowerCase() === 'localhost') return { address: '127.0.0.1', family: 'IPv4' }
  return { address: '::', family: 'IPv6' }
}

module.exports = { targetFor, parseListenArgs }
