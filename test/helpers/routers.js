'use strict'

// The router a black-box test runs against: describe.each(ROUTERS)('%s', (name, start)
// => ...). These tests ran against the JS hub too until it was removed (issue 25); the
// list stays so a test reads as it did. start takes the router's options and gives an
// object with its control calls (createQueue, deleteQueue, queueStats, stats, close,
// socketPath), which answer with promises.

const { startNativeRouter } = require('./native-router')

const ROUTERS = [
  ['the native router', startNativeRouter]
]

/** Polls an async condition (the native router's stats come over its control channel). */
async function eventually (fn, timeoutMs = 5000, what = 'condition') {
  const deadline = Date.now() + timeoutMs
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** The router's queue names (from its stats). */
async function queueNames (r) {
  return (await r.stats()).queues.map((q) => q.name)
}

module.exports = { ROUTERS, eventually, queueNames }
