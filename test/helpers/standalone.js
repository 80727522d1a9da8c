'use strict'

// For tests that run an app as a standalone process (`node -r src/register.js app.js`:
// no router given, the preload starts a hub inside it).

const path = require('node:path')

const REGISTER = path.join(__dirname, '..', '..', 'src', 'register.js')

/**
 * This process's environment without any HTTPSYS_* variable (a test run under httpsys
 * would otherwise hand the app a router, a queue or a cache setting), plus `extra`.
 */
function standaloneEnv (extra = {}) {
  const env = { ...process.env }
  for (const name of Object.keys(env)) if (name.startsWith('HTTPSYS_')) delete env[name]
  return Object.assign(env, extra)
}

module.exports = { REGISTER, standaloneEnv }
