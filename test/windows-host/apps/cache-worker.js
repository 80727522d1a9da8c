'use strict'

// A worker of the cache flush check (test/windows-host/cache.js), one process of its
// own: it opens the queue the check's process created (HTTPSYS_QUEUE, prefixes in
// HTTPSYS_QUEUE_URLS, as the supervisor hands them to workers) and answers every GET
// with a time to live of 60 s, so HTTP.SYS caches it as this process's entry.
//
//   .../count      { pid, n } (never cached): how many requests reached this process
//   anything else  { pid, n }, cacheable
//
// stdin lines: `flush` -> HttpFlushResponseCache from this process's handle, printed
// as `FLUSHED <code>`; `exit` -> close and exit. Prints `READY` once attached.

const readline = require('node:readline')
const { attach } = require('../../../src/queue/httpsys')

let n = 0
let attachment = null

function answer (req) {
  const counting = req.url.endsWith('/count')
  if (!counting) n++
  const body = JSON.stringify({ pid: process.pid, n })
  const headers = ['Content-Type', 'application/json', 'Content-Length', String(Buffer.byteLength(body))]
  attachment.respond(req.id, 200, 'OK', headers, body, 0, counting ? 0 : 60)
}

async function main () {
  attachment = await attach({
    queue: process.env.HTTPSYS_QUEUE,
    handlers: { onRequest: answer, onBody () {}, onBodyEnd () {}, onAbort () {}, onDrain () {}, onClose () {} }
  })
  console.log('READY')
  readline.createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'flush') console.log(`FLUSHED ${attachment.flushCache()}`)
    if (line === 'exit') {
      attachment.close()
      process.exit(0)
    }
  })
}

main().catch((err) => {
  console.log(`ERROR ${err.code || ''} ${err.message}`)
  process.exit(1)
})
