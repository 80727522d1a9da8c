'use strict'

// A worker process whose request handler throws synchronously on /throw..., like an
// app whose request listener throws. argv: socketPath queue [handler|nohandler].
// With "handler" it has an 'uncaughtException' listener (and so keeps running) and
// reports every caught error to the parent; it answers every other URL with
// "ok <url>" and reports each request it receives (IPC).

const hubClient = require('../../src/queue/hub-client')

const [socketPath, queue, mode = 'handler'] = process.argv.slice(2)
if (mode === 'handler') {
  process.on('uncaughtException', (err) => process.send({ type: 'caught', message: err.message }))
}

let att
hubClient.attach({
  socketPath,
  queue,
  handlers: {
    onRequest (req) {
      process.send({ type: 'request', url: req.url })
      if (req.url.startsWith('/throw')) throw new Error(`boom ${req.url}`)
      const body = `ok ${req.url}`
      att.respond(req.id, 200, 'OK', ['Content-Type', 'text/plain', 'Content-Length', String(body.length)], body, 0)
    },
    onClose () { process.exit(0) }
  }
}).then((a) => {
  att = a
  process.send({ type: 'attached' })
}, (err) => {
  process.send({ type: 'error', code: err.code })
  process.exit(1)
})
