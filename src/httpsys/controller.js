'use strict'

// The controller's side of HTTP.SYS (the supervisor): one named request queue per app,
// holding the app's URL prefixes, which the app's workers open by name. The controller
// never receives; requests wait in the kernel queue while workers restart. ASP.NET
// Core's HttpSys calls this the Create mode, and the workers' side the Attach mode.

const { queueSetup, queueState, authentication } = require('./properties')

/**
 * @param {object} addon the loaded addon
 * @param {object} errors the error mapper (errors.js)
 * @param {string} name the queue's machine-wide name
 * @param {object} [options]
 * @param {string[]} [options.urls] prefixes registered on the queue
 * @param {number} [options.queueLength] requests held before HTTP.SYS answers 503
 * @param {number} [options.verbosity] the 503 verbosity (default: the addon's, Limited)
 * @param {object} [options.timeouts] HTTP.SYS timeouts (seconds; minSendRate bytes/s)
 * @param {number} [options.maxConnections]
 * @param {boolean} [options.queueProperties=true] whether HTTP.SYS takes queue properties
 *   (platform().features; Wine does not)
 * @param {object|null} [options.auth] Windows authentication on the queue's URL groups
 *   (properties.js authentication(): the config's auth)
 * @param {string} [options.sddl] who may open the queue
 * @param {string} [options.app] for error messages
 * @returns {{name: string, urls: string[], addUrl: Function, removeUrl: Function, setActive: Function, flushCache: Function, close: Function}}
 */
function createQueue (addon, errors, name, { urls = [], queueLength, verbosity, timeouts, maxConnections, auth, queueProperties = true, sddl, app } = {}) {
  const properties = queueSetup({ mode: 'controller', queueProperties, queueLength, verbosity, timeouts, maxConnections, auth })
  let native
  try {
    native = new addon.Queue({ mode: 'controller', name, urls, sddl, properties })
  } catch (err) {
    throw errors.toError(err, { queue: name, app })
  }
  return {
    name,
    get urls () { return native.info().urls },
    addUrl (url) {
      try {
        native.addUrl(url)
      } catch (err) {
        throw errors.toError(err, { queue: name, app })
      }
    },
    removeUrl (url) { return native.removeUrl(url) === 0 },
    /**
     * Turns the queue off (false) while nothing can serve it: HTTP.SYS answers its
     * requests 503 at once. Returns the Win32 code (0; 120 where HTTP.SYS cannot, Wine).
     */
    setActive (active) { return native.setProperty(queueState(Boolean(active))) },
    /**
     * Windows authentication on each of the queue's URL groups (a config edit); null
     * turns it off. Returns the Win32 code. Bad values throw (properties.js).
     */
    setAuth (auth) { return native.setProperty(authentication(auth || null)) },
    /**
     * Empties HTTP.SYS's response cache under the queue's prefixes (an addon without
     * the call: 120, as under Wine, whose cache keeps nothing). Returns the Win32 code.
     */
    flushCache () { return typeof native.flushCache === 'function' ? native.flushCache() : 120 },
    close () { native.close() }
  }
}

module.exports = { createQueue }
