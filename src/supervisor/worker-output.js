'use strict'

// Every line a worker writes becomes one log record tagged { app, inst, pid, stream }.
// Lines that already are pino records (our preload's logger, or the app's own pino) are
// merged, keeping their level and time, instead of being wrapped as a string in a string.
// Records go straight to the logger's destination: going through logger.info() would
// stamp a second time and level onto them.

const pino = require('pino')

const LEVEL = { stdout: 30, stderr: 50 }

/**
 * @param {import('pino').Logger} logger the supervisor's logger (its level filters, its destination writes)
 * @param {{ app: string, inst: number, pid: number, stream: 'stdout'|'stderr' }} tags
 * @returns {(line: string, truncated: boolean) => void}
 */
function createLineSink (logger, tags) {
  const dest = logger[pino.symbols.streamSym]
  const { app, inst, pid, stream } = tags
  return function onLine (line, truncated) {
    let record = truncated ? undefined : asPinoRecord(line)
    if (record) {
      // our pid tags the worker (`httpsys ls`, exit records); an app that logs another one
      // (a pino record of a process it started) keeps it under appPid
      const theirs = record.pid
      record = Object.assign({ level: record.level, time: record.time, pid }, record, { pid, app, inst, stream })
      if (theirs !== undefined && theirs !== pid) record.appPid = theirs
    } else {
      record = { level: LEVEL[stream], time: Date.now(), pid, app, inst, stream, msg: line }
      if (truncated) record.truncated = true
    }
    if (record.level >= logger.levelVal) dest.write(JSON.stringify(record) + '\n')
  }
}

function asPinoRecord (line) {
  if (line.charCodeAt(0) !== 0x7b || line.charCodeAt(line.length - 1) !== 0x7d) return undefined
  let value
  try {
    value = JSON.parse(line)
  } catch {
    return undefined
  }
  return value !== null && typeof value === 'object' && typeof value.level === 'number' && value.time !== undefined
    ? value
    : undefined
}

module.exports = { createLineSink }
