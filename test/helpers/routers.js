'use strict'

// The two routers a black-box test runs against (issue 25: every test that ran against
// the JS hub runs against the native router too, so the day src/hub goes only the hub
// half is deleted): describe.each(ROUTERS)('%s', (name, start) => ...). start takes
// the hub's options and gives an object with the hub's control calls (createQueue,
// deleteQueue, queueStats, stats, close, socketPath); the native router's answer with
// promises, so a test awaits them (await of the hub's plain values is the same value).

const { startHub } = require('./hub-harness')
const { startNativeRouter } = require('./native-router')

const ROUTERS = [
  ['the hub', startHub],
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

/** The router's queue names (the hub's queues(); the native router's stats). */
async function queueNames (r) {
  if (typeof r.queues === 'function') return r.queues()
  return (await r.stats()).queues.map((q) => q.name)
}

module.exports = { ROUTERS, eventually, queueNames }
