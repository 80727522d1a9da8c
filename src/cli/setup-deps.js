'use strict'

// What the Windows setup commands (urlacl, cert, doctor, start --setup) work with: the
// platform and the HTTP.SYS service configuration. createProgram(deps) can replace
// them, which is how the commands are tested on Linux against the fake addon.

/**
 * @param {object} [deps]
 * @param {string} [deps.platform]
 * @param {object} [deps.serviceConfig] src/httpsys/service-config.js's object
 * @param {() => object} [deps.loadAddon]
 */
function setupDeps (deps = {}) {
  const platform = deps.platform || process.platform
  let config = deps.serviceConfig || null
  return {
    platform,
    windows: platform === 'win32',
    serviceConfig () {
      if (config === null) config = require('../httpsys').serviceConfig
      return config
    },
    loadAddon: deps.loadAddon || (() => require('../httpsys/loader').load()),
    out: deps.out || ((text) => process.stdout.write(text))
  }
}

/** Why a Windows-only command has nothing to do here (the hub needs none of it). */
function notHere (what) {
  return `${what} is HTTP.SYS configuration, which exists on Windows only. The router here is httpsys's native router, ` +
    'which needs no URL reservation or certificate binding: nothing to do.\n'
}

module.exports = { setupDeps, notHere }
