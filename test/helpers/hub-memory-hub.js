'use strict'

// A hub in a process of its own, so a test can measure the router's memory alone
// (test/integration/router-memory.test.js, router-h2.test.js). argv: socketPath, and
// for https (h2) a certificate file, its key file and the port. Creates the queue 'big'
// (on a free port for http) and reports { type: 'ready', port }; answers { type: 'rss' }
// with its resident set size, the queue's counters and the bytes its h2 streams buffer.

const pino = require('pino')
const { Hub } = require('../../src/hub')

const [socketPath, cert, key, tlsPort] = process.argv.slice(2)
const tls = cert ? [{ port: Number(tlsPort), cert, key }] : []
const hub = new Hub({ socketPath, logger: pino({ level: 'silent' }), tls })

async function main () {
  await hub.start()
  const url = cert ? `https://+:${tlsPort}/` : 'http://+:0/'
  const { ports: [port] } = await hub.createQueue('big', { urls: [url] })
  process.send({ type: 'ready', port })
}

/** What node's http2 streams of the hub buffer (writableLength): response bytes not sent. */
function h2Buffered () {
  let n = 0
  for (const c of hub.conns) {
    if (c.open instanceof Set) for (const sc of c.open) n += sc.stream.writableLength
  }
  return n
}

process.on('message', (m) => {
  if (m.type === 'rss') {
    const stats = hub.queueStats('big')
    process.send({ type: 'rss', rss: process.memoryUsage().rss, inFlight: stats.inFlight, waiting: stats.waiting, h2Buffered: h2Buffered() })
  } else if (m.type === 'close') {
    hub.close().then(() => process.exit(0))
  }
})
process.on('disconnect', () => process.exit(0))

main().catch((err) => {
  process.send({ type: 'error', message: err.message })
  process.exit(1)
})
