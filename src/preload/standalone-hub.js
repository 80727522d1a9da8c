'use strict'

// Standalone (`node --require httpsys-cli/register app.js`, no supervisor): the preload
// starts a hub inside this process on a private socket and attaches to it through the
// very same hub client a supervised worker uses, so standalone and supervised apps
// share one code path. The hub starts on the first listen(), once; later servers share
// it.

const crypto = require('node:crypto')
const fs = require('node:fs')
const hubClient = require('../queue/hub-client')
const { socketPath } = require('../local-socket')

let localHub = null

/** Starts this process's own hub once; resolves to its worker socket's path. */
function startLocalHub () {
  if (localHub === null) {
    const { Hub } = require('../hub')
    const file = socketPath(`httpsys-${process.pid}-${crypto.randomBytes(4).toString('hex')}`)
    // embedded: its worker sockets do not keep the process alive; its listeners and
    // client connections do, exactly as a node server's would.
    const hub = new Hub({ socketPath: file, embedded: true })
    localHub = hub.start().then(() => {
      if (process.platform !== 'win32') {
        process.once('exit', () => {
          try {
            fs.unlinkSync(file)
          } catch {}
        })
      }
      return file
    })
  }
  return localHub
}

/** The queue backend of a standalone process (src/wire/contract.js). */
const backend = {
  async attach (options) {
    return hubClient.attach({ ...options, socketPath: await startLocalHub() })
  }
}

module.exports = { backend, startLocalHub }
