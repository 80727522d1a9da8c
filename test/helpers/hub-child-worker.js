'use strict'

// A worker process for hub tests that must kill a real process mid-request.
// argv: socketPath queue. Answers GET /fast at once; never answers /hang. Tells the
// parent (IPC) about every request it receives.

const hubClient = require('../../src/queue/hub-client')

const [socketPath, queue] = process.argv.slice(2)
let att
hubClient.attach({
  socketPath,
  queue,
  handlers: {
    onRequest (req) {
      process.send({ type: 'request', url: req.url, id: req.id })
      if (req.url.startsWith('/fast')) {
        att.respond(req.id, 200, 'OK', ['Content-Type', 'text/plain', 'Content-Length', '4'], 'fast', 0)
      }
    },
    onClose () { process.exit(0) }
  }
}).then((a) => {
  att = a
  process.send({ type: 'attached', info: a.info })
}, (err) => {
  process.send({ type: 'error', code: err.code })
  process.exit(1)
})
