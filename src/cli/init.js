'use strict'

// `httpsys init`: a commented httpsys.config.js to start from.

function register (program) {
  program.command('init')
    .summary('write a commented httpsys.config.js')
    .description('Write httpsys.config.js (every key, with its default and what it does) into the current directory; ' +
      'in an ESM package ("type": "module") httpsys.config.cjs, which loads there as it is.')
    .argument('[file]', 'where to write it (default: httpsys.config.js; httpsys.config.cjs in a "type": "module" package)')
    .option('--force', 'replace an existing file')
    .action(action)
}

function action (file, options) {
  const { writeInitialConfig, defaultInitFile } = require('../config/init-config')
  const written = writeInitialConfig(file === undefined ? defaultInitFile() : file, { force: Boolean(options.force) })
  console.log(`wrote ${written}; edit it, then: httpsys config check && httpsys start`)
}

module.exports = { register }
