'use strict'

// The benchmark harness: the same hello-world app served by bare node and through
// `httpsys start` (the router + 1 worker), measured in one run, alternating, so the ratio
// is taken under the same machine load. Uses wrk when installed, else autocannon.
//
//   node bench/run.js [--rounds 3] [--duration 5] [--connections 50] [--app bench/apps/hello.js]
//
// Prints req/s and p99 latency per round and the median ratio httpsys / bare node.
// Starting and stopping the servers, the load runs and the medians are bench/lib's.

const path = require('node:path')
const { parseArgs } = require('node:util')
const { withPairTarget } = require('./lib/targets')
const { hasWrk, command, run } = require('./lib/load')
const { median } = require('./lib/stats')

const root = path.join(__dirname, '..')
const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    app: { type: 'string', default: path.join(__dirname, 'apps', 'hello.js') },
    tool: { type: 'string' },
    json: { type: 'boolean', default: false }
  }
})

const rounds = Number(opts.rounds)
const duration = Number(opts.duration)
const connections = Number(opts.connections)
const tool = opts.tool || (hasWrk() ? 'wrk' : 'autocannon')

function measure (kind) {
  return withPairTarget(kind, opts.app, async ({ url }) => {
    // warm-up so both sides are measured with optimised code
    if (tool === 'wrk') await run(command(tool, { url, connections, seconds: 1 }))
    return run(command(tool, { url, connections, seconds: duration }))
  })
}

async function main () {
  const results = []
  console.log(`# ${tool}, ${connections} connections, ${duration}s per run, ${rounds} rounds, app ${path.relative(root, opts.app)}`)
  for (let i = 0; i < rounds; i++) {
    const node = await measure('node')
    const hs = await measure('httpsys')
    const ratio = hs.rps / node.rps
    results.push({ node, hs, ratio })
    console.log(`round ${i + 1}: node ${node.rps.toFixed(0)} req/s p99 ${node.p99.toFixed(2)} ms | ` +
      `httpsys ${hs.rps.toFixed(0)} req/s p99 ${hs.p99.toFixed(2)} ms (errors ${hs.errors}) | ratio ${ratio.toFixed(3)}`)
  }
  const summary = {
    tool,
    connections,
    duration,
    rounds,
    nodeRps: median(results.map((r) => r.node.rps)),
    httpsysRps: median(results.map((r) => r.hs.rps)),
    nodeP99: median(results.map((r) => r.node.p99)),
    httpsysP99: median(results.map((r) => r.hs.p99)),
    ratio: median(results.map((r) => r.ratio))
  }
  console.log(`median: node ${summary.nodeRps.toFixed(0)} req/s, httpsys ${summary.httpsysRps.toFixed(0)} req/s, ` +
    `p99 ${summary.nodeP99.toFixed(2)} / ${summary.httpsysP99.toFixed(2)} ms, ratio ${summary.ratio.toFixed(3)} (target >= 0.9)`)
  if (opts.json) console.log(JSON.stringify(summary))
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
