'use strict'

// Which request-queue backend this process uses (contract.js describes what a backend
// offers).
//
// - Under the supervisor, HTTPSYS_HUB names the hub's socket: the hub client.
// - Standalone (`node --require httpsys/register app.js`, no HTTPSYS_HUB): the first
//   attach() starts a Hub inside this process on a private socket and attaches to it
//   through the very same client, so standalone and supervised apps share one code path.
// - HTTP.SYS (src/queue/httpsys-native.js): when HTTPSYS_BACKEND=httpsys (off Windows
//   that fails with ERR_HTTPSYS_NATIVE_UNAVAILABLE, which is what was asked), or by
//   default (HTTPSYS_BACKEND unset or auto) on Windows when the addon loads and no hub
//   supervises this process. HTTPSYS_BACKEND=hub forces the hub everywhere.

const os = require('node:os')
const path = require('node:path')
const fs = require('node:fs')
const crypto = require('node:crypto')
const hubClient = require('./hub-client')

let standalone = null
let localHub = null

/** @returns {{attach: Function}} the backend module for this process */
function getBackend () {
  const choice = process.env.HTTPSYS_BACKEND || 'auto'
  if (choice === 'httpsys') return require('./httpsys-native')
  if (process.env.HTTPSYS_HUB) return hubClient
  if (choice === 'auto' && process.platform === 'win32' && require('./native-loader').isAvailable()) {
    return require('./httpsys-native')
  }
  if (standalone === null) standalone = { attach: attachStandalone }
  return standalone
}

async function attachStandalone (options) {
  const socketPath = await startLocalHub()
  return hubClient.attach({ ...options, socketPath })
}

/** Starts this process's own hub once; later calls share it. */
function startLocalHub () {
  if (localHub === null) {
    const { Hub } = require('../hub')
    const id = `httpsys-${process.pid}-${crypto.randomBytes(4).toString('hex')}`
    const socketPath = process.platform === 'win32'
      ? `\\\\.\\pipe\\${id}`
      : path.join(os.tmpdir(), `${id}.sock`)
    // embedded: its worker sockets do not keep the process alive; its listeners and
    // client connections do, exactly as a node server's would.
    const hub = new Hub({ socketPath, embedded: true })
    localHub = hub.start().then(() => {
      if (process.platform !== 'win32') {
        process.once('exit', () => {
          try {
            fs.unlinkSync(socketPath)
          } catch {}
        })
      }
      return socketPath
    })
    localHub.hub = hub
  }
  return localHub
}

module.exports = { getBackend }
