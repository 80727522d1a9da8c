'use strict'

// Which router a run uses: the hub (every platform) or HTTP.SYS (Windows, through the
// native addon). Decided once, before anything starts, so a run that cannot have what
// it asked for fails with nothing spawned.
//
// auto picks HTTP.SYS on Windows when the addon loads and every app has urls. An app
// without urls leaves its prefix to its own listen(); HTTP.SYS cannot wait for that:
// the controller registers prefixes before workers attach (the queue holds requests
// while a worker restarts, and several instances cannot all register one prefix), so
// such a run stays on the hub. Asked for explicitly, httpsys then is a config error.

const { codes } = require('../errors')

/**
 * @param {object} config a validated config ({ backend, apps, source })
 * @param {object} [options]
 * @param {string} [options.platform=process.platform]
 * @param {() => object} [options.loadNative] loads the addon or throws
 *   ERR_HTTPSYS_NATIVE_UNAVAILABLE (default: src/httpsys/loader.js)
 * @returns {{ backend: 'hub'|'httpsys', reason: string, detail?: string, fallback?: boolean, fix?: string }}
 *   fallback: Windows, where HTTP.SYS was wanted (auto) and could not be had
 * @throws ERR_HTTPSYS_NATIVE_UNAVAILABLE, ERR_HTTPSYS_CONFIG_INVALID (httpsys asked for)
 */
function chooseBackend (config, { platform = process.platform, loadNative } = {}) {
  const load = loadNative || (() => require('../httpsys/loader').load({ platform }))
  const asked = config.backend || 'auto'
  if (asked === 'hub') return { backend: 'hub', reason: askedFor(config) }
  if (asked === 'httpsys') {
    // the loader's error lists every path it tried and how to build the addon
    load()
    requireUrls(config)
    return { backend: 'httpsys', reason: askedFor(config) }
  }
  if (platform !== 'win32') return { backend: 'hub', reason: 'not Windows' }
  // On Windows the hub is the second choice: the fallback says why and how to get
  // HTTP.SYS (fallback: the supervisor logs it as a warning, never silently).
  try {
    load()
  } catch (err) {
    return {
      backend: 'hub',
      fallback: true,
      reason: 'the HTTP.SYS addon did not load',
      detail: err.message,
      fix: 'reinstall httpsys-cli (its package ships prebuilds/win32-x64/httpsys_native.node) or rebuild it with `npx node-gyp rebuild`; ' +
        '`httpsys doctor` checks it. To use the hub on purpose, pass --backend hub.'
    }
  }
  const bare = config.apps.filter((a) => a.urls.length === 0).map((a) => a.name)
  if (bare.length > 0) {
    const script = Boolean(config.source && config.source.script)
    return {
      backend: 'hub',
      fallback: true,
      reason: `${bare.length === 1 ? 'app' : 'apps'} ${bare.map((n) => JSON.stringify(n)).join(', ')} ` +
        `${bare.length === 1 ? 'has' : 'have'} no urls (HTTP.SYS needs them before the app starts)`,
      fix: (script ? 'give the app a prefix (-u http://+:8080/)' : 'give every app urls (urls: ["http://+:8080/"])') +
        ' to run on HTTP.SYS; to use the hub on purpose, pass --backend hub.'
    }
  }
  return { backend: 'httpsys', reason: 'Windows, and the HTTP.SYS addon loads' }
}

function askedFor (config) {
  const from = config.source && config.source.backend
  if (from === '--backend') return `--backend ${config.backend}`
  return `backend: ${JSON.stringify(config.backend)} in the config`
}

function requireUrls (config) {
  const i = config.apps.findIndex((a) => a.urls.length === 0)
  if (i === -1) return
  const app = config.apps[i]
  const script = Boolean(config.source && config.source.script)
  throw new codes.ERR_HTTPSYS_CONFIG_INVALID({
    key: script ? '--url' : `apps[${i}].urls`,
    app: app.name,
    reason: `app ${JSON.stringify(app.name)} has no URL prefix, and the httpsys backend needs one: HTTP.SYS routes only ` +
      'the prefixes the supervisor registers before the app starts, not the port its listen() asks for',
    fix: script
      ? 'Add one, e.g. --url http://+:8080/, or use --backend hub (there the app\'s listen() picks its port).'
      : `Add urls: ["http://+:8080/"] to app ${JSON.stringify(app.name)}, or use backend: "hub" (there the app's listen() picks its port).`
  })
}

module.exports = { chooseBackend }
