'use strict'

// A hub in a process of its own, so a test can measure the router's memory alone
// (test/integration/hub-memory.test.js). argv: socketPath. Creates the queue 'big' on a
// free port and reports { type: 'ready', port }; answers { type: 'rss' } with its
// resident set size and the queue's counters.

const pino = require('pino')
const { Hub } = require('../../src/hub')

const [socketPath] = process.argv.slice(2)
const hub = new Hub({ socketPath, logger: pino({ level: 'silent' }) })

async function main () {
  await hub.start()
  const { ports: [port] } = await hub.createQueue('big', { urls: ['http://+:0/'] })
  process.send({ type: 'ready', port })
}

process.on('message', (m) => {
  if (m.type === 'rss') {
    const stats = hub.queueStats('big')
    process.send({ type: 'rss', rss: process.memoryUsage().rss, inFlight: stats.inFlight, waiting: stats.waiting })
  } else if (m.type === 'close') {
    hub.close().then(() => process.exit(0))
  }
})
process.on('disconnect', () => process.exit(0))

main().catch((err) => {
  process.send({ type: 'error', message: err.message })
  process.exit(1)
})
