'use strict'

// Where the supervisor's records go: JSON lines (NDJSON) when stdout is not a terminal or
// with --json, pino-pretty with an `app#0 |` prefix in a terminal.
//
// Writes are synchronous, batched per tick (fd-writer.js): the supervisor exits with
// process.exit() after stopping and must not lose its last lines, and an async
// destination cannot be flushed reliably while a write is in flight. A slow reader
// that stops reading costs records, never the supervisor's progress (fd-writer.js). Log
// files (log_dir) are written by log-file.js.

const tty = require('node:tty')
const pino = require('pino')
const { prettyFactory } = require('pino-pretty')
const { FdWriter } = require('./fd-writer')

// lifecycle fields the pretty message already spells out
const LIFECYCLE_FIELDS = ['event', 'ms', 'code', 'signal', 'delay', 'urls', 'instances', 'hub', 'after', 'queue', 'workerId',
  'via', 'how', 'attempt', 'unstable', 'uptimeMs', 'tree', 'survivors', 'reason', 'pids', 'files', 'count', 'rss', 'limit',
  'samples', 'unstableExits', 'windowMs', 'restart', 'keep', 'failed', 'errored', 'endpoint', 'file', 'apps']

/**
 * @param {object} [options]
 * @param {boolean} [options.json=false] JSON lines even in a terminal
 * @param {string} [options.level='info']
 * @param {number} [options.fd=1]
 * @returns {import('pino').Logger}
 */
function createLogger ({ json = false, level = 'info', fd = 1 } = {}) {
  // a closed terminal (SIGHUP) or a reader gone (EPIPE) must not crash the supervisor
  // before it has stopped its apps: their records are lost, the stop goes on
  const dest = new FdWriter(fd)
  const stream = !json && tty.isatty(fd) ? prettyStream(dest) : dest
  // the writer's own "records dropped" notice looks like the records around it
  if (stream !== dest) dest.formatNotice = (record) => stream.format(record)
  // no base: worker records carry the worker's pid, lifecycle records the one they are about
  return pino({ level, base: null }, stream)
}

// each app's prefix in a colour of its own (the same name, the same colour, in every
// run and in `httpsys logs`), as pm2 and docker compose tell their processes apart
const APP_COLOURS = ['cyan', 'magenta', 'green', 'yellow', 'blue', 'cyanBright', 'magentaBright', 'greenBright', 'yellowBright', 'blueBright']

function colourOf (colours, name) {
  let h = 0
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0
  return colours[APP_COLOURS[h % APP_COLOURS.length]]
}

function prettyStream (dest, { colorize = tty.isatty(1) && process.env.NO_COLOR === undefined } = {}) {
  const colours = require('colorette').createColors({ useColor: colorize })
  const prettify = prettyFactory({
    colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,app,inst,stream,component',
    singleLine: true,
    messageFormat (log, messageKey) {
      const who = log.app === undefined ? (log.component || 'httpsys') : log.inst === undefined ? log.app : `${log.app}#${log.inst}`
      const msg = log[messageKey]
      const prefix = log.app === undefined || !colorize ? who : colourOf(colours, String(log.app))(who)
      return `${prefix} | ${msg === undefined ? '' : msg}`
    }
  })
  const format = (record) => {
    if (record.event !== undefined) {
      for (const key of LIFECYCLE_FIELDS) delete record[key]
    }
    return prettify(record)
  }
  return {
    format,
    flushSync () {
      if (typeof dest.flushSync === 'function') dest.flushSync()
    },
    write (line) {
      let record
      try {
        record = JSON.parse(line)
      } catch {
        dest.write(line)
        return
      }
      dest.write(format(record))
    }
  }
}

module.exports = { createLogger, prettyStream }
