'use strict'

// The HTTP.SYS addon's JavaScript layer (docs/architecture.md 2), for everything but a
// worker's attachment (src/queue/httpsys): loading the addon (loader.js), Win32 errors
// mapped to coded ones (errors.js), the controller's queues (controller.js), the property
// calls' bytes (properties.js), the machine's configuration - URL reservations,
// certificate bindings, timers (service-config.js) - and certificates (cert-import.js,
// app-cert.js, client-certs.js). The supervisor, setup, service and CLI use it; only
// loader.js touches the .node file, lazily, so `--help` and every Linux test run without it.

const { createErrorMapper } = require('./errors')
const { createQueue } = require('./controller')
const { createServiceConfig } = require('./service-config')

/**
 * The addon's platform facts and error mapper, made once from the loaded addon, and the
 * controller's queues over them.
 * @param {() => object} getAddon loads the addon (the real one, or a fake in tests);
 *   throws ERR_HTTPSYS_NATIVE_UNAVAILABLE
 */
function createAddonLayer (getAddon) {
  let platform = null
  let errors = null
  const addon = () => {
    const b = getAddon()
    if (platform === null) {
      platform = { ...b.platform(), events: b.events, errors: b.errors() }
      errors = createErrorMapper(platform)
    }
    return b
  }
  return {
    /** the loaded addon (loads it on the first call) */
    addon,
    /** the error mapper (errors.js) */
    errors () {
      addon()
      return errors
    },
    /** { wine: string|null, features: {...}, events, errors } of the loaded addon */
    platform () {
      addon()
      return platform
    },
    toError (err, context) {
      addon()
      return errors.toError(err, context)
    },
    /** Controller side: a named queue holding an app's prefixes (controller.js) */
    createQueue (name, options) {
      const b = addon()
      return createQueue(b, errors, name, { ...options, queueProperties: platform.features.queueProperties !== false })
    }
  }
}

const loadAddon = () => require('./loader').load()
const layer = createAddonLayer(loadAddon)

module.exports = {
  createAddonLayer,
  createQueue: layer.createQueue,
  platform: layer.platform,
  toError: layer.toError,
  serviceConfig: createServiceConfig(loadAddon)
}
