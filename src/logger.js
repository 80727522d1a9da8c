'use strict'

const pino = require('pino')
const { ENV } = require('./worker-interface')

// One pino instance per process; components log through children.
// Workers write JSON lines to stderr: the supervisor reads them as records, not text.
const level = process.env[ENV.LOG_LEVEL] || 'info'
const logger = pino({ level, base: { pid: process.pid } }, pino.destination({ fd: 2, sync: true }))

function child (bindings) {
  return logger.child(bindings)
}

module.exports = { logger, child }
