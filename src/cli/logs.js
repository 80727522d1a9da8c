'use strict'

// `httpsys logs [app]`: the recent records of the running supervisor (every app, or
// one), and with -f the new ones as they come. --file reads records from a file instead
// (an app's log_dir file, what `httpsys start` wrote to a pipe, or - for stdin), so the
// NDJSON a pipe or a log file holds can be read pretty (--pretty) as a terminal shows it.

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
    .option('--json', 'JSON lines even in a terminal')
    .option('--pretty', 'pretty lines (as in a terminal) also when piped')
    .option('--file <file>', 'read the records of this NDJSON file (an app\'s <log_dir>/<name>.log, saved output of ' +
      '`httpsys start`; - for stdin) instead of asking the supervisor; pretty in a terminal or with --pretty'))
    .addHelpText('after', `
Examples:
  $ httpsys logs api -f                      follow one app's records
  $ httpsys logs --pretty | less -R          the pretty form, paged
  $ httpsys logs --file logs/api.log -n 200  an app's log_dir file, pretty in a terminal
  $ httpsys start app.js | httpsys logs --file - --pretty`)
    .action(action)
}

async function action (app, options, command) {
  const tty = require('node:tty')
  const { route, stream } = require('../supervisor/control-client')
  const { prettyStream } = require('../supervisor/output')
  if (options.json && options.pretty) command.error('error: --json and --pretty ask for two forms of the records: choose one')
  const out = { write: (line) => process.stdout.write(line) }
  const sink = options.pretty || (!options.json && tty.isatty(1)) ? prettyStream(out) : out
  if (options.file !== undefined) return fromFile(options.file, app, options, sink, command)
  let supervisors
  try {
    supervisors = await route(app, scopeOf(options))
  } catch (err) {
    if (err.code !== 'ERR_HTTPSYS_NOT_RUNNING' || options.follow) throw err
    // stopped: what it wrote to its log files
    if (!(await fromFiles(app, options, sink))) throw err
    return
  }
  const streams = supervisors.map((s) => stream(s, { app, lines: options.lines, follow: Boolean(options.follow) }, (line) => sink.write(line + '\n')))
  if (options.follow) process.once('SIGINT', () => { for (const s of streams) s.close() })
  await Promise.all(streams.map((s) => s.done))
}

/**
 * The records of a supervisor that is not running, from the files it wrote: the
 * daemon's log (`start -d`) and the apps' log_dir files, for a supervisor of a config
 * file or one started from a script.
 * @returns {Promise<boolean>} whether there were files to read
 */
async function fromFiles (app, options, sink) {
  const fs = require('node:fs')
  const path = require('node:path')
  const { findConfigFile } = require('../config')
  const found = await logFilesOf(app, options)
  if (found === null) return false
  const seen = new Set()
  const records = []
  for (const f of found.files) {
    let text
    try {
      text = fs.readFileSync(f, 'utf8')
    } catch {
      continue
    }
    for (const line of text.split('\n')) {
      if (line === '' || seen.has(line)) continue
      seen.add(line)
      let r
      try { r = JSON.parse(line) } catch { continue }
      if (app === undefined || r.app === app) records.push({ r, line })
    }
  }
  if (records.length === 0) return false
  records.sort((a, b) => (a.r.time || 0) - (b.r.time || 0))
  process.stderr.write(`(the supervisor of ${found.what} is not running: its last records, from its log files)\n`)
  for (const { line } of records.slice(-options.lines)) sink.write(line + '\n')
  return true

  // The files a stopped supervisor wrote, as its last run recorded them at start
  // (control-path.js lastRunPath): the one of -c (a config file or a script), else
  // of this folder's config file, else the one started in this folder whatever its
  // config was called. A config file whose supervisor never recorded a run: its files
  // as the config names them.
  async function logFilesOf (app, options) {
    const { readLastRuns } = require('../supervisor/control-path')
    const configFile = options.config ? null : findConfigFile()
    const wanted = options.config ? path.resolve(options.config) : configFile ? path.resolve(configFile) : null
    const runs = readLastRuns()
    const here = (r) => r.cwd === process.cwd()
    const run = wanted !== null
      ? runs.find((r) => r.script === wanted || r.config === wanted) || (options.config ? undefined : runs.find(here))
      : runs.find(here)
    const files = []
    if (run !== undefined) {
      files.push(run.daemonLog)
      for (const a of run.apps || []) {
        if (a.logDir && (app === undefined || a.name === app)) files.push(path.join(a.logDir, `${a.name}.log`))
      }
      return { what: run.config || run.script || run.cwd, files }
    }
    if (wanted === null || !fs.existsSync(wanted)) return null
    const { resolveStartConfig } = require('../config')
    const { daemonLogFile } = require('../supervisor/daemon')
    const config = await resolveStartConfig({ config: wanted })
    files.push(daemonLogFile(config))
    for (const a of config.apps) {
      if (a.log_dir && (app === undefined || a.name === app)) files.push(path.join(a.log_dir, `${a.name}.log`))
    }
    return { what: options.config || configFile, files }
  }
}

/**
 * --file: the last -n records of an NDJSON file (of `app` only, when given), then with
 * -f the ones appended to it; `-` reads stdin to its end. Lines that are not JSON
 * (a stack a crashed process printed) are shown as they are.
 */
async function fromFile (file, app, options, sink, command) {
  const fs = require('node:fs')
  const wanted = (line) => {
    if (app === undefined) return true
    try { return JSON.parse(line).app === app } catch { return false }
  }
  if (file === '-') {
    const readline = require('node:readline')
    for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
      if (line !== '' && wanted(line)) sink.write(line + '\n')
    }
    return
  }
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    command.error(`error: cannot read ${file} (${err.code}): give an app's <log_dir>/<name>.log, or - for stdin`)
  }
  const complete = text.slice(0, text.lastIndexOf('\n') + 1)
  let offset = Buffer.byteLength(complete)
  const lines = complete.split('\n').filter((l) => l !== '' && wanted(l))
  for (const line of lines.slice(-options.lines)) sink.write(line + '\n')
  if (!options.follow) return
  // follow: what is appended, polled (a rotation starts the file again)
  await new Promise((resolve) => {
    let partial = ''
    const timer = setInterval(() => {
      let size
      try { size = fs.statSync(file).size } catch { return }
      if (size < offset) offset = 0
      if (size === offset) return
      const fd = fs.openSync(file, 'r')
      const buf = Buffer.alloc(size - offset)
      fs.readSync(fd, buf, 0, buf.length, offset)
      fs.closeSync(fd)
      offset = size
      const chunk = partial + buf.toString('utf8')
      const end = chunk.lastIndexOf('\n')
      partial = chunk.slice(end + 1)
      for (const line of chunk.slice(0, end + 1).split('\n')) if (line !== '' && wanted(line)) sink.write(line + '\n')
    }, 200)
    process.once('SIGINT', () => { clearInterval(timer); resolve() })
  })
}

function linesArg (value) {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('It must be a whole number.')
  return Number(value)
}

module.exports = { register }
