'use strict'

// The memory scenario (bench/lib/scenarios.js): a server's resident memory by role once
// it has answered a request, and its peak while 40 clients each ask for a few 1 MB
// responses, pipelined, and never read a byte. A server that bounds what it holds for a
// slow reader (the router's held-bytes budget, node's highWaterMark with its parser
// paused) stays near its idle figure; one that buffers whatever the app writes grows by
// the responses it holds.

const net = require('node:net')
const { readProcs, roleTotals, systemUnits } = require('./procstat')

const CLIENTS = 40
const PIPELINED = 4
const HOLD_MS = 3000
const SAMPLE_MS = 200

/** Resident MB by role now (classify as the target gives it; one role 'server' without). */
function rssByRole (handle) {
  const { pageSize } = systemUnits()
  const roles = roleTotals(readProcs(), handle.roots, handle.classify || (() => 'server'))
  const out = { total: 0 }
  for (const [role, r] of Object.entries(roles)) {
    out[role] = (r.rssPages * pageSize) / 2 ** 20
    out.total += out[role]
  }
  return out
}

function maxInto (peak, now) {
  for (const [k, v] of Object.entries(now)) peak[k] = Math.max(peak[k] || 0, v)
  return peak
}

/** Opens a never-reading client: its requests written, its socket paused (no reads). */
function stuckClient (url) {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) }, () => {
      socket.pause()
      socket.write(`GET / HTTP/1.1\r\nHost: ${hostname}:${port}\r\n\r\n`.repeat(PIPELINED))
      resolve(socket)
    })
    socket.once('error', reject)
  })
}

/**
 * { idle, loaded } resident MB by role (and total) for a started target: idle after one
 * answered request and a second's rest, loaded the peak over HOLD_MS with the clients.
 */
async function measureMemory (handle, get) {
  await get(handle.url)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const idle = rssByRole(handle)
  const clients = []
  const peak = { ...idle }
  try {
    for (let i = 0; i < CLIENTS; i++) clients.push(await stuckClient(handle.url))
    const until = Date.now() + HOLD_MS
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS))
      maxInto(peak, rssByRole(handle))
    }
  } finally {
    for (const c of clients) c.destroy()
  }
  return { idle, loaded: peak, clients: CLIENTS, pipelined: PIPELINED }
}

module.exports = { measureMemory, rssByRole, CLIENTS, PIPELINED }
