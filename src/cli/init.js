'use strict'

// `httpsys init`: a commented httpsys.config.js to start from.

function register (program) {
  program.command('init')
    .summary('write a commented httpsys.config.js')
    .description('Write httpsys.config.js (every key, with its default and what it does) into the current directory.')
    .argument('[file]', 'where to write it', 'httpsys.config.js')
    .option('--force', 'replace an existing file')
    .action(action)
}

function action (file, options) {
  const { writeInitialConfig } = require('../config/init-config')
  const written = writeInitialConfig(file, { force: Boolean(options.force) })
  console.log(`wrote ${written}; edit it, then: httpsys config check && httpsys start`)
}

module.exports = { register }
