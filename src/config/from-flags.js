'use strict'

// One app described by `httpsys start <script>` flags, validated by the same schema as a
// config file. Errors name the flag (`--instances`), not a config path.

const path = require('node:path')
const { validate } = require('./validate')

const FLAGS = {
  script: 'the script argument',
  args: 'the app arguments (after --)',
  urls: '--url',
  instances: '--instances',
  name: '--name',
  node_args: '--node-args',
  cwd: '--cwd'
}

/**
 * @param {object} flags
 * @param {string} flags.script the script, relative to `baseDir` (the shell's cwd)
 * @param {string[]} [flags.args]
 * @param {string[]} [flags.urls]
 * @param {number|string} [flags.instances]
 * @param {string} [flags.name]
 * @param {string} [flags.nodeArgs]
 * @param {string} [flags.cwd]
 * @param {object} [options]
 * @param {string} [options.baseDir=process.cwd()]
 */
function fromFlags (flags, { baseDir = process.cwd() } = {}) {
  const app = {}
  const set = (key, value) => { if (value !== undefined) app[key] = value }
  // the script is where the user pointed in their shell, whatever --cwd says
  set('script', typeof flags.script === 'string' ? path.resolve(baseDir, flags.script) : flags.script)
  set('cwd', flags.cwd)
  set('name', flags.name)
  set('urls', flags.urls && flags.urls.length ? flags.urls : undefined)
  set('instances', flags.instances)
  set('args', flags.args && flags.args.length ? flags.args : undefined)
  set('node_args', flags.nodeArgs)
  return validate({ apps: [app] }, {
    baseDir,
    keyLabel: (p) => FLAGS[p[2]] || p.join('.'),
    example: (p, value) => FLAGS[p[2]] && FLAGS[p[2]].startsWith('--')
      ? `${FLAGS[p[2]]} ${value.replace(/^"(.*)"$/, '$1')}`
      : value
  })
}

module.exports = { fromFlags }
