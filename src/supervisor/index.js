'use strict'

// The supervisor: apps, instances, restarts, stop, and the log records of all of them.

const { start } = require('./start')
const { runForeground } = require('./foreground')
const { Supervisor, workerSocketPath } = require('./supervisor')
const { createLogger } = require('./output')

module.exports = { start, runForeground, Supervisor, workerSocketPath, createLogger }
