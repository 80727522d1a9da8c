'use strict'

// The thread that owns a Windows standalone app's router (standalone-native-win.js):
// it spawns the router, holds its control channel (router-process.js) and makes the
// calls the app's main thread asks for. A call the main thread waits for (listen()'s
// bindPort) is answered in the shared buffer, then Atomics.notify wakes it; the others
// are answered by message. The thread's own event loop runs while the main thread is
// blocked in Atomics.wait, which is the point of it.

const { parentPort, workerData } = require('node:worker_threads')
const { RouterProcess } = require('../supervisor/router-process')
const { quietLogger } = require('./standalone-own')

// [0]: 0 while a synchronous call runs, 1 once answered; [1]: the answer's length
const state = new Int32Array(workerData.shared, 0, 2)
const answer = new Uint8Array(workerData.shared, 8)

// An answer's error crosses to the main thread as the router wrote it (code, message,
// details), so that thread builds the coded error: errors.js's classes do not cross
// postMessage as themselves.
class Router extends RouterProcess {
  onLine (line) {
    let msg = null
    try {
      msg = JSON.parse(line)
    } catch {}
    if (msg !== null && msg.error && this.pending.has(msg.id)) {
      const p = this.pending.get(msg.id)
      this.pending.delete(msg.id)
      p.reject({ routerError: msg.error })
      return
    }
    super.onLine(line)
  }
}

let proc = null

function plain (err) {
  if (err && err.routerError) return err.routerError
  return { code: (err && err.code) || 'ERR_HTTPSYS_ROUTER_FAILED', message: String((err && err.message) || err) }
}

async function run (cmd, args) {
  if (cmd === 'boot') {
    proc = new Router({ binary: args.binary, logger: quietLogger, logLevel: 'error' })
    proc.on('exit', (info) => parentPort.postMessage({ exit: info }))
    const spawned = proc.spawn()
    // loaded while the router's process starts (the app's first listen() waits for both)
    const { routerLimits } = require('../supervisor/native-router')
    await spawned
    await proc.call('start', { workerSocket: args.workerSocket, workersMayCreate: false, limits: routerLimits(null) })
    return { pid: proc.child.pid }
  }
  if (proc === null) throw new Error('the router is not spawned')
  return proc.call(cmd, args)
}

function answerSync (reply) {
  const bytes = Buffer.from(JSON.stringify(reply))
  if (bytes.length > answer.length) {
    reply = { error: { code: 'ERR_HTTPSYS_ROUTER_FAILED', message: `the router's answer is too long (${bytes.length} bytes)` } }
    return answerSync(reply)
  }
  answer.set(bytes)
  Atomics.store(state, 1, bytes.length)
  Atomics.store(state, 0, 1)
  Atomics.notify(state, 0)
}

parentPort.on('message', ({ id, cmd, args, sync }) => {
  run(cmd, args).then(
    (fields) => sync ? answerSync({ fields }) : parentPort.postMessage({ id, fields }),
    (err) => sync ? answerSync({ error: plain(err) }) : parentPort.postMessage({ id, error: plain(err) })
  )
})
