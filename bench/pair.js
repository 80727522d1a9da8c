'use strict'

// The benchmark harness: the same hello-world app served by bare node and through
// `httpsys start` (hub + 1 worker), measured in one run, alternating, so the ratio
// is taken under the same machine load. Uses wrk when installed, else autocannon.
//
//   node bench/run.js [--rounds 3] [--duration 5] [--connections 50] [--app bench/apps/hello.js]
//
// Prints req/s and p99 latency per round and the median ratio httpsys / bare node.

const { spawn, execFileSync } = require('node:child_process')
const net = require('node:net')
const path = require('node:path')
const { parseArgs } = require('node:util')

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

function hasWrk () {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' })
    return true
  } catch (err) {
    // wrk --version exits 1 after printing its version
    return err.status === 1
  }
}

function freePort () {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address()
      srv.close(() => resolve(port))
    })
    srv.on('error', reject)
  })
}

async function waitForPort (port, deadline = Date.now() + 15000) {
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true) })
      s.on('error', () => resolve(false))
    })
    if (ok) {
      const res = await fetch(`http://127.0.0.1:${port}/`).catch(() => null)
      if (res && res.ok) return
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`nothing answered on port ${port}`)
}

function startTarget (kind, port) {
  const env = { ...process.env, PORT: String(port), HTTPSYS_LOG_LEVEL: 'warn' }
  const args = kind === 'node'
    ? [opts.app]
    : [path.join(root, 'bin', 'httpsys'), 'start', opts.app, '--json', '--log-level', 'warn']
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'], detached: true })
  return child
}

function stopTarget (child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once('exit', resolve)
    child.kill('SIGINT')
    setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL') } catch {} }, 5000).unref()
  })
}

function load (port) {
  const url = `http://127.0.0.1:${port}/`
  if (tool === 'wrk') {
    const out = execFileSync('wrk', ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', url], { encoding: 'utf8' })
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1])
    const p99 = parseLatency(/\s99%\s+([\d.]+\w+)/.exec(out)[1])
    const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)
    const sockErr = /Socket errors: (.*)/.exec(out)
    return { rps, p99, errors: errors ? Number(errors[1]) : 0, socketErrors: sockErr ? sockErr[1] : null }
  }
  const bin = path.join(root, 'node_modules', '.bin', 'autocannon')
  const out = execFileSync(bin, ['-j', '-c', String(connections), '-d', String(duration), url], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
  const r = JSON.parse(out)
  return { rps: r.requests.average, p99: r.latency.p99, errors: r.non2xx + r.errors, socketErrors: null }
}

function parseLatency (text) {
  const m = /([\d.]+)(us|ms|s)/.exec(text)
  const n = Number(m[1])
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

async function measure (kind) {
  const port = await freePort()
  const child = startTarget(kind, port)
  try {
    await waitForPort(port)
    // warm-up so both sides are measured with optimised code
    loadWarm(port)
    return load(port)
  } finally {
    await stopTarget(child)
  }
}

function loadWarm (port) {
  if (tool === 'wrk') execFileSync('wrk', ['-t1', `-c${connections}`, '-d1s', `http://127.0.0.1:${port}/`], { stdio: 'ignore' })
}

async function main () {
  const results = []
  console.log(`# ${tool}, ${connections} connections, ${duration}s per run, ${rounds} rounds, app ${path.relative(root, opts.app)}`)
  for (let i = 0; i < rounds; i++) {
    const node = await measure('node')
    const hub = await measure('httpsys')
    const ratio = hub.rps / node.rps
    results.push({ node, hub, ratio })
    console.log(`round ${i + 1}: node ${node.rps.toFixed(0)} req/s p99 ${node.p99.toFixed(2)} ms | ` +
      `httpsys ${hub.rps.toFixed(0)} req/s p99 ${hub.p99.toFixed(2)} ms (errors ${hub.errors}) | ratio ${ratio.toFixed(3)}`)
  }
  const summary = {
    tool,
    connections,
    duration,
    rounds,
    nodeRps: median(results.map((r) => r.node.rps)),
    httpsysRps: median(results.map((r) => r.hub.rps)),
    nodeP99: median(results.map((r) => r.node.p99)),
    httpsysP99: median(results.map((r) => r.hub.p99)),
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
