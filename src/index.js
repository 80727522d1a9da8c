'use strict'

// The programmatic API: what `httpsys start` does, from code.
//
//   const httpsys = require('httpsys-cli')
//   const config = httpsys.validateConfig(await httpsys.loadConfig('httpsys.config.js'), { baseDir })
//   const supervisor = await httpsys.start(config)
//   supervisor.on('ready', ({ app, inst, pid }) => ...)
//   await supervisor.stop()

const { load, validate } = require('./config')
const { start } = require('./supervisor')
const { codes } = require('./errors')

module.exports = {
  start,
  loadConfig: load,
  validateConfig: validate,
  errors: codes
}
