'use strict'

// The Windows service control manager through the addon (native/src/service-host.cc):
// each call returns { code, syscall }, and this turns codes into coded errors. The
// addon's service functions are looked up when first used, so an older build without
// them fails here, with the fix, and nothing else of httpsys notices.

const { codes } = require('../errors')

// winerror.h values the SCM answers with (the addon's own table names the HTTP Server
// API's; these are fixed by Windows, so they are named here)
const SCM_ERRORS = {
  5: 'ERROR_ACCESS_DENIED',
  87: 'ERROR_INVALID_PARAMETER',
  124: 'ERROR_INVALID_LEVEL',
  1051: 'ERROR_DEPENDENT_SERVICES_RUNNING',
  1052: 'ERROR_INVALID_SERVICE_CONTROL',
  1053: 'ERROR_SERVICE_REQUEST_TIMEOUT',
  1056: 'ERROR_SERVICE_ALREADY_RUNNING',
  1057: 'ERROR_INVALID_SERVICE_ACCOUNT',
  1058: 'ERROR_SERVICE_DISABLED',
  1060: 'ERROR_SERVICE_DOES_NOT_EXIST',
  1061: 'ERROR_SERVICE_CANNOT_ACCEPT_CTRL',
  1062: 'ERROR_SERVICE_NOT_ACTIVE',
  1063: 'ERROR_FAILED_SERVICE_CONTROLLER_CONNECT',
  1066: 'ERROR_SERVICE_SPECIFIC_ERROR',
  1068: 'ERROR_SERVICE_DEPENDENCY_FAIL',
  1069: 'ERROR_SERVICE_LOGON_FAILED',
  1072: 'ERROR_SERVICE_MARKED_FOR_DELETE',
  1073: 'ERROR_SERVICE_EXISTS',
  1077: 'ERROR_SERVICE_NEVER_STARTED',
  1078: 'ERROR_DUPLICATE_SERVICE_NAME',
  1332: 'ERROR_NONE_MAPPED'
}
const ERROR = Object.fromEntries(Object.entries(SCM_ERRORS).map(([code, name]) => [name, Number(code)]))

const EXPORTS = ['serviceCreate', 'serviceConfigure', 'serviceDelete', 'serviceControl', 'serviceQuery', 'serviceHostStart', 'serviceHostStatus']

/**
 * @param {() => object} getAddon loads the addon (throws ERR_HTTPSYS_NATIVE_UNAVAILABLE)
 */
function createScm (getAddon) {
  let checked = null
  const addon = () => {
    const b = getAddon()
    if (checked !== b) {
      const missing = EXPORTS.filter((name) => typeof b[name] !== 'function')
      if (missing.length > 0) {
        throw new codes.ERR_HTTPSYS_NATIVE_UNAVAILABLE({
          reason: `this build of the addon has no ${missing.join(', ')}: it predates \`httpsys service\`; rebuild it or install this version's prebuilt one`,
          attempts: []
        })
      }
      checked = b
    }
    return b
  }
  const nameOf = (code) => SCM_ERRORS[code] || undefined

  /** Throws the coded error for a failed call; `context` gives { name, what, command }. */
  function check (result, context = {}) {
    if (!result || result.code === 0) return
    const base = { win32: result.code, win32Name: nameOf(result.code), syscall: result.syscall || 'the service control manager', name: context.name }
    switch (result.code) {
      case ERROR.ERROR_ACCESS_DENIED:
        throw new codes.ERR_HTTPSYS_NOT_ELEVATED({ ...base, by: 'the service control manager', what: context.what, command: context.command })
      case ERROR.ERROR_SERVICE_EXISTS:
      case ERROR.ERROR_DUPLICATE_SERVICE_NAME:
        throw new codes.ERR_HTTPSYS_SERVICE_EXISTS({ name: context.name, kind: 'Windows service', ours: context.ours })
      case ERROR.ERROR_FAILED_SERVICE_CONTROLLER_CONNECT:
        throw new codes.ERR_HTTPSYS_SERVICE_NOT_SCM(base)
    }
    throw new codes.ERR_HTTPSYS_SERVICE_CALL({ ...base, reason: context.reason || (result.level ? `setting ${result.level}` : undefined) })
  }

  return {
    nameOf,
    ERROR,

    /** @param {object} spec see serviceCreate in native/src/service-host.cc */
    create (spec, context = {}) {
      check(addon().serviceCreate(spec), { ...context, name: spec.name })
    },

    /**
     * One ChangeServiceConfig2W setting.
     * @returns {boolean} false when this Windows (or Wine) does not know the setting (ERROR_INVALID_LEVEL)
     */
    configure (name, option, context = {}) {
      const result = addon().serviceConfigure(name, option)
      if (result.code === ERROR.ERROR_INVALID_LEVEL) return false
      check(result, { ...context, name })
      return true
    },

    /** @returns {boolean} false when there was no such service */
    delete (name, context = {}) {
      const result = addon().serviceDelete(name)
      if (result.code === ERROR.ERROR_SERVICE_DOES_NOT_EXIST) return false
      check(result, { ...context, name })
      return true
    },

    /** @returns {object|null} the service's configuration and state, null when there is none */
    query (name) {
      const result = addon().serviceQuery(name)
      if (result.code === ERROR.ERROR_SERVICE_DOES_NOT_EXIST) return null
      check(result, { name })
      return result
    },

    /**
     * StartService or ControlService(STOP).
     * @returns {string} the state the SCM reported ('already' when it was there already)
     */
    control (name, action, context = {}) {
      const result = addon().serviceControl(name, action)
      if (action === 'start' && result.code === ERROR.ERROR_SERVICE_ALREADY_RUNNING) return 'already'
      if (action === 'stop' && result.code === ERROR.ERROR_SERVICE_NOT_ACTIVE) return 'already'
      check(result, { ...context, name })
      return result.state
    },

    /** The hosting side, for `httpsys service run` (src/service/run.js). */
    host: {
      /** Starts the dispatcher thread; onEvent(type, value): 'start', 'control', 'error', 'exit'. */
      start (name, onEvent) {
        const code = addon().serviceHostStart(name, onEvent)
        check({ code, syscall: 'StartServiceCtrlDispatcherW' }, { name })
      },
      /** Reports a state to the SCM; returns the Win32 code (0: reported). */
      status (state, options = {}) {
        return addon().serviceHostStatus(state, options)
      }
    }
  }
}

module.exports = { createScm, SCM_ERRORS, ERROR }
