'use strict'

// HTTPS and HTTP/2 benchmark: the same https app served by bare node and through
// `httpsys start` (the hub terminates TLS, 1 worker), measured in one run, alternating,
// so each ratio is taken under the same machine load. Three scenarios:
//
//   keep-alive   wrk over HTTPS, persistent connections
//   new-conn     wrk over HTTPS with `Connection: close`: a TLS handshake per request
//                (wrk does not resume sessions, so both sides do full handshakes)
//   h2           h2load (nghttp2-client), 10 connections x 10 streams; bare node's h2 is
//                its http2 compat server (node's https server has no h2)
//
// CPU per request: user + system CPU time of every process of the target (the
// supervisor and its workers, or the bare node process) over the measured run, divided
// by the requests served, in microseconds.
//
//   node bench/https.js [--rounds 3] [--duration 5] [--connections 50] [--only keep-alive,new-conn,h2] [--json]

const { spawn, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const https = require('node:https')
const { parseArgs } = require('node:util')

const root = path.join(__dirname, '..')
const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    only: { type: 'string', default: 'keep-alive,new-conn,h2' },
    json: { type: 'boolean', default: false }
  }
})
const rounds = Number(opts.rounds)
const duration = Number(opts.duration)
const connections = Number(opts.connections)
const scenarios = opts.only.split(',')
const TICK = 100 // USER_HZ, clock ticks per second in /proc/<pid>/stat (Linux: 100)

function has (cmd, args) {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' })
    return true
  } catch (err) {
    return err.status !== undefined && err.code !== 'ENOENT' // wrk --version exits 1
  }
}

function makeCert (dir) {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { cwd: dir, stdio: 'ignore' })
  return { key: path.join(dir, 'key.pem'), cert: path.join(dir, 'cert.pem') }
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
      https.get({ host: '127.0.0.1', port, rejectUnauthorized: false, agent: false }, (res) => {
        res.resume()
        resolve(res.statusCode === 200)
      }).on('error', () => resolve(false))
    })
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`nothing answered on port ${port}`)
}

function startTarget (kind, app, port, cert) {
  const env = { ...process.env, PORT: String(port), KEY_FILE: cert.key, CERT_FILE: cert.cert, HTTPSYS_LOG_LEVEL: 'warn' }
  const args = kind === 'node'
    ? [app]
    : [path.join(root, 'bin', 'httpsys'), 'start', app, '--json', '--log-level', 'warn']
  return spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'], detached: true })
}

function stopTarget (child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once('exit', resolve)
    child.kill('SIGINT')
    setTimeout(() => { try { process.kill(-child.pid, 'SIGKILL') } catch {} }, 5000).unref()
  })
}

/** CPU ticks (user + system) of pid and every descendant, from /proc. */
function treeTicks (rootPid) {
  const procs = new Map()
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      procs.set(Number(name), { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) })
    } catch {}
  }
  let total = 0
  const stack = [rootPid]
  const seen = new Set()
  while (stack.length > 0) {
    const pid = stack.pop()
    if (seen.has(pid)) continue
    seen.add(pid)
    const p = procs.get(pid)
    if (p) total += p.ticks
    for (const [child, info] of procs) if (info.ppid === pid) stack.push(child)
  }
  return total
}

function wrk (url, extra) {
  const out = execFileSync('wrk', ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', ...extra, url], { encoding: 'utf8' })
  const requests = Number(/(\d+) requests in/.exec(out)[1])
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)[1])
  const p99 = parseLatency(/\s99%\s+([\d.]+\w+)/.exec(out)[1])
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(out)
  const sock = /Socket errors: (.*)/.exec(out)
  return { requests, rps, p99, errors: errors ? Number(errors[1]) : 0, socketErrors: sock ? sock[1] : null }
}

function h2load (url, seconds) {
  const out = execFileSync('h2load', ['-t1', '-c10', '-m10', '-D', String(seconds), url], { encoding: 'utf8' })
  const rps = Number(/finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out)[1])
  const done = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out)
  const proto = /Application protocol: (\S+)/.exec(out)
  const p99 = null
  return { requests: Number(done[2]), rps, p99, errors: Number(done[3]) + Number(done[4]), protocol: proto ? proto[1] : null }
}

function parseLatency (text) {
  const m = /([\d.]+)(us|ms|s)/.exec(text)
  const n = Number(m[1])
  return m[2] === 'us' ? n / 1000 : m[2] === 's' ? n * 1000 : n
}

const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b)
  if (s.length === 0) return null
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

const SCENARIOS = {
  'keep-alive': { nodeApp: 'https-hello.js', load: (url) => wrk(url, []) },
  'new-conn': { nodeApp: 'https-hello.js', load: (url) => wrk(url, ['-H', 'Connection: close']) },
  h2: { nodeApp: 'h2-hello.js', load: (url) => h2load(url, duration) }
}

async function measure (scenario, kind, cert) {
  const s = SCENARIOS[scenario]
  const app = path.join(__dirname, 'apps', kind === 'node' ? s.nodeApp : 'https-hello.js')
  const port = await freePort()
  const child = startTarget(kind, app, port, cert)
  const url = `https://127.0.0.1:${port}/`
  try {
    await waitForPort(port)
    // warm-up so both sides are measured with optimised code
    if (scenario === 'h2') h2load(url, 1)
    else execFileSync('wrk', ['-t1', `-c${connections}`, '-d1s', url], { stdio: 'ignore' })
    const before = treeTicks(child.pid)
    const r = s.load(url)
    const cpuMs = (treeTicks(child.pid) - before) * (1000 / TICK)
    r.cpuUsPerRequest = r.requests > 0 ? (cpuMs * 1000) / r.requests : null
    return r
  } finally {
    await stopTarget(child)
  }
}

async function main () {
  if (!has('wrk', ['--version'])) throw new Error('bench/https.js needs wrk (apt-get install wrk)')
  const withH2 = scenarios.includes('h2') && has('h2load', ['--version'])
  if (scenarios.includes('h2') && !withH2) console.log('# h2 skipped: h2load not found (apt-get install nghttp2-client)')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-bench-'))
  const cert = makeCert(dir)
  const summary = { connections, duration, rounds, cpus: os.cpus().length, scenarios: {} }
  console.log(`# wrk -c${connections} (HTTPS), h2load -c10 -m10 (h2); ${duration}s per run, ${rounds} rounds; CPU per request in us (all processes of the target)`)
  try {
    for (const scenario of scenarios) {
      if (!SCENARIOS[scenario] || (scenario === 'h2' && !withH2)) continue
      const results = []
      for (let i = 0; i < rounds; i++) {
        const node = await measure(scenario, 'node', cert)
        const hub = await measure(scenario, 'httpsys', cert)
        const ratio = hub.rps / node.rps
        results.push({ node, hub, ratio })
        console.log(`${scenario} round ${i + 1}: node ${node.rps.toFixed(0)} req/s, ${fmt(node.cpuUsPerRequest)} us CPU/req | ` +
          `httpsys ${hub.rps.toFixed(0)} req/s, ${fmt(hub.cpuUsPerRequest)} us CPU/req (errors ${hub.errors}) | ratio ${ratio.toFixed(3)}`)
      }
      const s = {
        nodeRps: median(results.map((r) => r.node.rps)),
        httpsysRps: median(results.map((r) => r.hub.rps)),
        ratio: median(results.map((r) => r.ratio)),
        nodeCpuUsPerRequest: median(results.map((r) => r.node.cpuUsPerRequest)),
        httpsysCpuUsPerRequest: median(results.map((r) => r.hub.cpuUsPerRequest)),
        nodeP99: median(results.map((r) => r.node.p99)),
        httpsysP99: median(results.map((r) => r.hub.p99)),
        httpsysErrors: results.reduce((n, r) => n + r.hub.errors, 0)
      }
      summary.scenarios[scenario] = s
      console.log(`${scenario} median: node ${s.nodeRps.toFixed(0)} req/s, httpsys ${s.httpsysRps.toFixed(0)} req/s, ratio ${s.ratio.toFixed(3)} (target >= 1.0); ` +
        `CPU/req ${fmt(s.nodeCpuUsPerRequest)} / ${fmt(s.httpsysCpuUsPerRequest)} us`)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  if (opts.json) console.log(JSON.stringify(summary))
}

function fmt (x) {
  return typeof x === 'number' ? x.toFixed(1) : 'n/a'
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
