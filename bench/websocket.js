'use strict'

// WebSocket echo messages per second through httpsys (`httpsys start`, the router relaying
// each upgraded connection to one worker) against the same ws app on bare node, in one
// run, alternating rounds so machine noise hits both alike.
//
//   node bench/websocket.js [--rounds 3] [--duration 5] [--connections 50] [--size 64]
//
// The load runs in a process of its own (ws clients, each sending its next message
// when the echo of the last arrives). Prints messages/s per round and the median
// ratio httpsys / bare node (issue target: >= 0.8).

const path = require('node:path')
const { setTimeout: sleep } = require('node:timers/promises')
const { parseArgs } = require('node:util')
const { run } = require('./lib/load')
const { withPairTarget } = require('./lib/targets')
const { median } = require('./lib/stats')

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    size: { type: 'string', default: '64' },
    client: { type: 'string' }
  }
})

// --client PORT: this file is also the load process the harness starts (load() below)
const task = opts.client ? runClients(Number(opts.client)) : main()
task.catch((err) => {
  console.error(err)
  process.exit(1)
})

// ---- the load process ---------------------------------------------------------------

async function runClients (port) {
  const WebSocket = require('ws')
  const n = Number(opts.connections)
  const payload = Buffer.alloc(Number(opts.size), 120)
  const sockets = await Promise.all(Array.from({ length: n }, () => new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false })
    ws.on('open', () => resolve(ws))
    ws.on('error', reject)
  })))
  let count = 0
  let running = true
  for (const ws of sockets) {
    ws.on('message', () => {
      count++
      if (running) ws.send(payload)
    })
  }
  // a second of warm-up, then the measured window
  for (const ws of sockets) ws.send(payload)
  await sleep(1000)
  const start = count
  const t0 = process.hrtime.bigint()
  await sleep(Number(opts.duration) * 1000)
  const messages = count - start
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  running = false
  for (const ws of sockets) ws.terminate()
  process.stdout.write(JSON.stringify({ messagesPerSec: messages / seconds }) + '\n')
}

// ---- the harness ----------------------------------------------------------------------

function load (port) {
  const args = [__filename, '--client', String(port), '--connections', opts.connections, '--duration', opts.duration, '--size', opts.size]
  return run({ cmd: process.execPath, args, parse: JSON.parse })
}

function measure (kind) {
  const app = path.join(__dirname, 'apps', 'ws-echo.js')
  return withPairTarget(kind, app, ({ port }) => load(port), { httpsysArgs: (port) => ['-u', `http://+:${port}/`] })
}

async function main () {
  const rounds = Number(opts.rounds)
  console.log(`# ws echo, ${opts.connections} connections, ${opts.size}-byte messages, ${opts.duration}s per run, ${rounds} rounds`)
  const ratios = []
  for (let i = 0; i < rounds; i++) {
    const node = await measure('node')
    const hs = await measure('httpsys')
    const ratio = hs.messagesPerSec / node.messagesPerSec
    ratios.push(ratio)
    console.log(`round ${i + 1}: node ${Math.round(node.messagesPerSec)} msg/s, httpsys ${Math.round(hs.messagesPerSec)} msg/s, ratio ${ratio.toFixed(3)}`)
  }
  console.log(`median ratio httpsys / node: ${median(ratios).toFixed(3)} (target >= 0.8)`)
}
