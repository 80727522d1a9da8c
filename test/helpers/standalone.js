'use strict'

// For tests that run an app as a standalone process (`node -r src/register.js app.js`:
// no router given, the preload runs its own: the native router as the app's child).

const path = require('node:path')

const REGISTER = path.join(__dirname, '..', '..', 'src', 'register.js')

// Which router a standalone app runs (issue 25): a whole test run may ask for one
// (`HTTPSYS_ROUTER=native npx jest ...`, and HTTPSYS_STANDALONE_BIND=router for
// Windows' way of binding, src/preload/standalone-native-win.js), so these are kept.
const KEPT = new Set(['HTTPSYS_ROUTER', 'HTTPSYS_ROUTER_PATH', 'HTTPSYS_STANDALONE_BIND'])

/**
 * This process's environment without any other HTTPSYS_* variable (a test run under
 * httpsys would otherwise hand the app a router, a queue or a cache setting), plus `extra`.
 */
function standaloneEnv (extra = {}) {
  const env = { ...process.env }
  for (const name of Object.keys(env)) if (name.startsWith('HTTPSYS_') && !KEPT.has(name)) delete env[name]
  return Object.assign(env, extra)
}

module.exports = { REGISTER, standaloneEnv }
