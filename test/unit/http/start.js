'use strict'

// Shared by the src/http unit tests: a Server on the in-memory queue backend.

const { once } = require('node:events')
const { createServer } = require('../../../src/http')
const { createMemoryQueue, tick } = require('../../helpers/memory-queue')

const servers = new Set()

/**
 * @param {Function} handler the request listener
 * @param {object} [opts] { server: createServer options, mq: createMemoryQueue options }
 */
async function start (handler, opts = {}) {
  const mq = createMemoryQueue(opts.mq)
  const server = createServer({ queueBackend: mq.backend, ...opts.server }, handler)
  server.listen(0)
  await once(server, 'listening')
  servers.add(server)
  return { mq, server }
}

/** Closes what start() opened (afterEach). */
async function stopAll () {
  for (const server of servers) {
    server.closeAllConnections()
    if (server.listening) await new Promise((resolve) => server.close(resolve))
  }
  servers.clear()
}

/** Lets nextTicks and immediates run (events after a response completes). */
async function settle (rounds = 3) {
  for (let i = 0; i < rounds; i++) await tick()
}

module.exports = { start, stopAll, settle, tick }
