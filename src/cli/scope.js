'use strict'

// Which running supervisor(s) a control command acts on (src/supervisor/control-client.js
// select()): the options every control command takes, and the label each result line
// carries so output never leaves a user guessing which project it came from.

/** Adds -c, --id and --all-supervisors to a command. */
function scopeOptions (command) {
  return command
    .option('-c, --config <file>', 'the supervisor started with this config file (or script); default: this folder\'s')
    .option('--id <id>', 'the supervisor with this id (see `httpsys ls`)')
    .option('--all-supervisors', 'every supervisor of this user, not only this folder\'s')
}

function scopeOf (options) {
  return { config: options.config, id: options.id, allSupervisors: Boolean(options.allSupervisors) }
}

module.exports = { scopeOptions, scopeOf }
