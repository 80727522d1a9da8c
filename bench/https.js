'use strict'

// HTTPS and HTTP/2 benchmark: the same https app served by bare node and through
// `httpsys start` (the router terminates TLS, 1 worker), measured in one run, alternating,
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
// by the requests served, in microseconds. Busy cores: the whole machine over the run
// (/proc/stat), the load generator included; "others" is that less the target, mostly
// the load generator. When busy reaches the machine's cores, the run is bounded by the
// machine: a target then serves more only by costing less CPU per request.
//
// The two targets run one after the other, in mirrored pairs of rounds (lib/stats.js
// roundOrder, as the matrix's), so a machine getting faster or slower during a run does
// not favour either.
//
//   node bench/https.js [--rounds 3] [--duration 5] [--connections 50] [--only keep-alive,new-conn,h2] [--json]

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { hasWrk, parseWrk } = require('./lib/load')
const { readProcs, treeTotals, cpuMsBetween, machineTicks, busyCoresBetween, systemUnits } = require('./lib/procstat')
const { median, roundOrder } = require('./lib/stats')
const { makeCert, withPairTarget } = require('./lib/targets')

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

function has (cmd, args) {
  try {
    execFileSync(cmd, args, { stdio: 'ignore' })
    return true
  } catch (err) {
    return err.status !== undefined && err.code !== 'ENOENT'
  }
}

function wrk (url, extra) {
  const out = execFileSync('wrk', ['-t1', `-c${connections}`, `-d${duration}s`, '--latency', ...extra, url], { encoding: 'utf8' })
  // errors: non-2xx answers only, as this script has always counted them (parseWrk's
  // errors add wrk's socket errors)
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out)
  return { ...parseWrk(out), errors: non2xx ? Number(non2xx[1]) : 0 }
}

function h2load (url, seconds) {
  const out = execFileSync('h2load', ['-t1', '-c10', '-m10', '-D', String(seconds), url], { encoding: 'utf8' })
  const rps = Number(/finished in [\d.]+\w+, ([\d.]+) req\/s/.exec(out)[1])
  const done = /requests: \d+ total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored/.exec(out)
  const proto = /Application protocol: (\S+)/.exec(out)
  return { requests: Number(done[2]), rps, p99: null, errors: Number(done[3]) + Number(done[4]), protocol: proto ? proto[1] : null }
}

const SCENARIOS = {
  'keep-alive': { nodeApp: 'https-hello.js', load: (url) => wrk(url, []) },
  'new-conn': { nodeApp: 'https-hello.js', load: (url) => wrk(url, ['-H', 'Connection: close']) },
  h2: { nodeApp: 'h2-hello.js', load: (url) => h2load(url, duration) }
}

function measure (scenario, kind, cert) {
  const s = SCENARIOS[scenario]
  const app = path.join(__dirname, 'apps', kind === 'node' ? s.nodeApp : 'https-hello.js')
  return withPairTarget(kind, app, ({ url, child }) => {
    // warm-up so both sides are measured with optimised code
    if (scenario === 'h2') h2load(url, 1)
    else execFileSync('wrk', ['-t1', `-c${connections}`, '-d1s', url], { stdio: 'ignore' })
    const before = treeTotals(readProcs(), [child.pid])
    const machineBefore = machineTicks()
    const started = process.hrtime.bigint()
    const r = s.load(url)
    const seconds = Number(process.hrtime.bigint() - started) / 1e9
    const cores = busyCoresBetween(machineBefore, machineTicks(), os.cpus().length)
    const cpuMs = cpuMsBetween(before, treeTotals(readProcs(), [child.pid]), systemUnits().clkTck)
    r.cpuUsPerRequest = cpuMs !== null && r.requests > 0 ? (cpuMs * 1000) / r.requests : null
    r.busyCores = cores
    r.otherCores = cores !== null && cpuMs !== null ? Math.max(0, cores - cpuMs / 1000 / seconds) : null
    return r
  }, { tls: true, env: { KEY_FILE: cert.key, CERT_FILE: cert.cert } })
}

async function main () {
  if (!hasWrk()) throw new Error('bench/https.js needs wrk (apt-get install wrk)')
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
        const m = {}
        for (const kind of roundOrder(['node', 'httpsys'], i)) m[kind] = await measure(scenario, kind, cert)
        const { node, httpsys: hs } = m
        const ratio = hs.rps / node.rps
        results.push({ node, hs, ratio })
        console.log(`${scenario} round ${i + 1}: node ${node.rps.toFixed(0)} req/s, ${fmt(node.cpuUsPerRequest)} us CPU/req, ${cores(node)} | ` +
          `httpsys ${hs.rps.toFixed(0)} req/s, ${fmt(hs.cpuUsPerRequest)} us CPU/req, ${cores(hs)} (errors ${hs.errors}) | ratio ${ratio.toFixed(3)}`)
      }
      const s = {
        nodeRps: median(results.map((r) => r.node.rps)),
        httpsysRps: median(results.map((r) => r.hs.rps)),
        ratio: median(results.map((r) => r.ratio)),
        nodeCpuUsPerRequest: median(results.map((r) => r.node.cpuUsPerRequest)),
        httpsysCpuUsPerRequest: median(results.map((r) => r.hs.cpuUsPerRequest)),
        nodeP99: median(results.map((r) => r.node.p99)),
        httpsysP99: median(results.map((r) => r.hs.p99)),
        httpsysErrors: results.reduce((n, r) => n + r.hs.errors, 0),
        nodeBusyCores: median(results.map((r) => r.node.busyCores)),
        httpsysBusyCores: median(results.map((r) => r.hs.busyCores)),
        nodeOtherCores: median(results.map((r) => r.node.otherCores)),
        httpsysOtherCores: median(results.map((r) => r.hs.otherCores))
      }
      summary.scenarios[scenario] = s
      console.log(`${scenario} median: node ${s.nodeRps.toFixed(0)} req/s, httpsys ${s.httpsysRps.toFixed(0)} req/s, ratio ${s.ratio.toFixed(3)} (target >= 1.0); ` +
        `CPU/req ${fmt(s.nodeCpuUsPerRequest)} / ${fmt(s.httpsysCpuUsPerRequest)} us; busy cores ${fmt(s.nodeBusyCores, 2)} / ${fmt(s.httpsysBusyCores, 2)} ` +
        `of ${summary.cpus} (others, mostly wrk: ${fmt(s.nodeOtherCores, 2)} / ${fmt(s.httpsysOtherCores, 2)})`)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  if (opts.json) console.log(JSON.stringify(summary))
}

function fmt (x, digits = 1) {
  return typeof x === 'number' ? x.toFixed(digits) : 'n/a'
}

function cores (r) {
  return `busy ${fmt(r.busyCores, 2)} cores (others ${fmt(r.otherCores, 2)})`
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
