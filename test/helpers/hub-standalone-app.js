'use strict'

// A standalone worker (no HTTPSYS_HUB): no router is given (getBackend() is null), so
// the preload's standalone backend starts an in-process hub. Prints
// its attachment info as one JSON line; closes the attachment after answering /bye,
// after which the process must exit on its own.

const { getBackend } = require('../../src/queue')
const standalone = require('../../src/preload/standalone-hub')

let att
if (getBackend() !== null) throw new Error('a router was given: this is not standalone')
standalone.backend.attach({
  urls: ['http://+:0/'],
  handlers: {
    onRequest (req) {
      att.respond(req.id, 200, 'OK', ['Content-Type', 'text/plain', 'Content-Length', '10'], 'standalone', 0)
      if (req.url === '/bye') setTimeout(() => att.close(), 20)
    }
  }
}).then((a) => {
  att = a
  process.stdout.write(JSON.stringify(a.info) + '\n')
}, (err) => {
  process.stdout.write(JSON.stringify({ error: err.code }) + '\n')
  process.exitCode = 1
})
