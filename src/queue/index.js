'use strict'

// Which request-queue backend a worker process uses (src/wire/contract.js describes
// what a backend offers), from the environment the supervisor gave it
// (src/worker-interface.js):
//
// - HTTPSYS_BACKEND=httpsys: HTTP.SYS (src/queue/httpsys); off Windows attaching fails
//   with ERR_HTTPSYS_NATIVE_UNAVAILABLE, which is what was asked.
// - HTTPSYS_HUB set: the hub client, to the supervisor's hub.
// - Otherwise (auto) on Windows, when the addon loads: HTTP.SYS.
// - Otherwise there is no router to attach to: null. The preload then starts a router
//   of the process's own, its child (src/preload/standalone-native.js).

const hubClient = require('./hub-client')
const { readWorkerEnv } = require('../worker-interface')

/**
 * @param {object} [env=process.env]
 * @returns {{attach: Function}|null} the backend module, or null when no router is given
 */
function getBackend (env = process.env) {
  const { backend, hub } = readWorkerEnv(env)
  if (backend === 'httpsys') return require('./httpsys')
  if (hub !== null) return hubClient
  if (backend === 'auto' && process.platform === 'win32' && require('../httpsys/loader').isAvailable()) {
    return require('./httpsys')
  }
  return null
}

module.exports = { getBackend }
