'use strict'

// `httpsys logs [app]`: the recent records of the running supervisor (every app, or
// one), and with -f the new ones as they come.

const { InvalidArgumentError } = require('commander')
const { scopeOptions, scopeOf } = require('./scope')

function register (program) {
  scopeOptions(program.command('logs')
    .summary('show (and follow) the log records of the running apps')
    .description('Print the recent log records of the running supervisor: every app\'s output and lifecycle records, ' +
      'pretty in a terminal, JSON lines otherwise.')
    .argument('[app]', 'only this app')
    .option('-f, --follow', 'keep printing new records until Ctrl+C')
    .option('-n, --lines <n>', 'how many recent records', linesArg, 50)
    .option('--json', 'JSON lines even in a terminal'))
    .action(action)
}

async function action (app, options) {
  const tty = require('node:tty')
  const { route, stream } = require('../supervisor/control-client')
  const { prettyStream } = require('../supervisor/output')
  const out = { write: (line) => process.stdout.write(line) }
  const sink = !options.json && tty.isatty(1) ? prettyStream(out) : out
  const supervisors = await route(app, scopeOf(options))
  const streams = supervisors.map((s) => stream(s, { app, lines: options.lines, follow: Boolean(options.follow) }, (line) => sink.write(line + '\n')))
  if (options.follow) process.once('SIGINT', () => { for (const s of streams) s.close() })
  await Promise.all(streams.map((s) => s.done))
}

function linesArg (value) {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('It must be a whole number.')
  return Number(value)
}

module.exports = { register }
