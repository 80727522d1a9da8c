'use strict'

// The native router (router/, issue 25) for tests, as hub-harness.js's startHub gives
// the JS hub: built once per test file into a temp directory (go-build.js: binaries are
// never written into the checkout), spawned with a private worker socket, and driven
// over its control channel (src/supervisor/router-process.js) with the hub's option
// names: startNativeRouter({ queueLength: 1 }) is new Hub({ queueLength: 1 }).

const os = require('node:os')
const path = require('node:path')
const crypto = require('node:crypto')
const pino = require('pino')
const { buildGo } = require('./go-build')
const { RouterProcess } = require('../../src/supervisor/router-process')
const { routerLimits } = require('../../src/supervisor/native-router')
const { withPortOwner } = require('../../src/port-owner')
const { defaultCaPem } = require('../../src/tls-default-ca')
const { RouterTls } = require('../../src/supervisor/router-tls')

let built = null
const running = new Set()

// (registered when a test file requires this module: jest takes hooks only there)
if (typeof afterAll === 'function') {
  afterAll(async () => {
    await Promise.all([...running].map((r) => r.close()))
    if (built !== null) built.cleanup()
    built = null
  })
}

/** The router binary, built on first use; removed when the test file ends. */
function routerBin () {
  if (built === null) built = buildGo('httpsys-router')
  return built.bin
}

function socketPath () {
  return path.join(os.tmpdir(), `httpsys-native-${process.pid}-${crypto.randomBytes(4).toString('hex')}.sock`)
}

/**
 * A started native router.
 * @param {object} [opts] the hub's options (maxHeaderSize, maxBodySize, queueLength,
 *   queueTimeout, keepAliveTimeout, headersTimeout, bodyTimeout, drainTimeout,
 *   maxConnections, closeTimeout, finGrace, cacheSize, cacheMaxResponse),
 *   workersMayCreate (default true, as a standalone hub's) and tls (the config's
 *   entries, as the hub's tls option)
 * @returns {Promise<object>} { socketPath, proc, events, createQueue, deleteQueue,
 *   setQueueAvailable, queueStats, stats, tlsStats, reloadTls, addRedirect, close }
 */
async function startNativeRouter ({ workersMayCreate = true, logger, tls = [], ...limits } = {}) {
  const routerTls = new RouterTls({ log: pino({ level: 'silent' }), watch: false, send: (entries) => proc.call('setTls', { entries }) })
  routerTls.set(tls)
  const proc = new RouterProcess({ binary: routerBin(), logger: logger || pino({ level: 'silent' }), logLevel: process.env.HTTPSYS_TEST_ROUTER_LOG || (logger ? logger.level : 'silent') })
  await proc.spawn()
  const sock = socketPath()
  const events = []
  proc.on('event', (name, fields) => events.push({ name, ...fields }))
  const l = { ...routerLimits(null), ...limits }
  if (l.maxBodySize === Infinity) l.maxBodySize = 0
  try {
    await proc.call('start', { workerSocket: sock, workersMayCreate, limits: l })
    await proc.call('setDefaultCa', { ca: defaultCaPem() }) // as the supervisor (native-router.js)
  } catch (err) {
    await proc.stop() // refused options: no router is left behind
    throw err
  }
  if (routerTls.size > 0) await routerTls.push()
  let closed = null
  const router = {
    socketPath: sock,
    proc,
    events,
    createQueue: (name, { urls = [], token, queueLength, queueTimeout, maxBodySize, cache } = {}) =>
      // the port's holder named as the supervisor names it (native-router.js)
      proc.call('createQueue', { name, urls, token, queueLength, queueTimeout, maxBodySize, cache }).catch((err) => { throw withPortOwner(err) }),
    deleteQueue: (name) => proc.call('deleteQueue', { name }),
    setQueueAvailable: (name, available) => proc.call('setQueueAvailable', { name, available }),
    queueStats: (name) => proc.call('queueStats', { name }),
    stats: () => proc.call('stats'),
    tlsStats: () => proc.call('tlsStats'),
    // resolves once the router has the files read again (the hub's reloadTls is synchronous)
    async reloadTls () {
      const out = routerTls.reload()
      await routerTls.push()
      return out
    },
    addRedirect: (name, port, urls) => proc.call('addRedirect', { name, port, urls }).then((r) => r.prefixes),
    close () {
      if (closed === null) {
        routerTls.close()
        running.delete(router)
        closed = proc.call('close').catch(() => {}).then(() => proc.stop())
      }
      return closed
    }
  }
  running.add(router)
  return router
}

module.exports = { startNativeRouter, routerBin }
