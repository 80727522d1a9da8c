'use strict'

// `httpsys scale <app> <n>` (pm2's scale): the app runs n instances from now on,
// instances added (started) or removed (drained, stopped) one way or the other with no
// failed request. The config is not changed: the next reload or start applies its
// instances again (docs/supervisor.md 2.7).

const { InvalidArgumentError } = require('commander')
const { codes } = require('../errors')
const { scopeOptions, scopeOf } = require('./scope')

function register (program) {
  scopeOptions(program.command('scale')
    .summary('run an app with n instances now, without a restart')
    .description('Adds instances (started) or removes them (the highest numbers, drained and stopped) while the others ' +
      'serve. +n adds n, "max" is one per CPU. Lasts until the next reload or start, which apply the config\'s ' +
      'instances: edit the config to keep it.')
    .argument('<app>', 'an app name')
    .argument('<n>', 'instances: a number, +n to add, or "max"', count))
    .action(action)
}

function count (value) {
  if (/^\+?[1-9]\d*$/.test(value)) return value
  if (value === 'max') return String(require('../config').parseInstances('max'))
  throw new InvalidArgumentError('It must be a number of instances from 1 (e.g. 4), +n to add (e.g. +2), or "max".')
}

async function action (app, n, options, cmd) {
  const { command } = require('../supervisor/control-client')
  if (app === 'all') cmd.error('error: scale takes one app name, not all')
  let failed = null
  // +n is counted by the supervisor, from what runs there
  for (const { label, config, result: r } of await command('scale', app, scopeOf(options), { count: n })) {
    if (!r.ok) {
      failed = failed || r
      continue
    }
    const pids = r.pids.length ? ` (pid ${r.pids.join(', ')})` : ''
    const keep = r.to === r.configured ? '' : `; ${config || 'the config'} says ${r.configured}: the next reload or start applies that, so set instances: ${r.to} there to keep it`
    console.log(`${r.app} [${label}]: ${r.from === r.to ? `already ${r.to}` : `${r.from} -> ${r.to}`} instance${r.to === 1 ? '' : 's'}${pids}${keep}`)
  }
  if (failed) throw new codes.ERR_HTTPSYS_RELOAD_FAILED({ app: failed.app, reason: failed.reason })
}

module.exports = { register }
