'use strict'

// The load generators: wrk when installed (apt-get install wrk), else autocannon (a
// devDependency). wrk runs with one thread: on a 2-core machine it then leaves a core's
// worth to the target, the same for every target.

const { spawn, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const AUTOCANNON = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'autocannon')

function hasWrk () {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' })
    return true
  } catch (err) {
    // wrk --version prints its version and exits 1
    return err.code !== 'ENOENT' && err.status === 1
  }
}

/** "188.00us", "1.27ms", "2.01s" in milliseconds. */
function parseLatency (text) {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim())
  if (!m) throw new Error(`not a wrk latency: ${JSON.stringify(text)}`)
  const n = Number(m[1])
  return { us: n / 1000, ms: n, s: n * 1000, m: n * 60000 }[m[2]]
}

/** wrk --latency output as figures (latencies in ms). */
function parseWrk (out) {
  const requests = /(\d+) requests in ([\d.]+\w+)/.exec(out)
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out)
  if (!requests || !rps) throw new Error(`wrk printed no result:\n${out}`)
  const pct = (p) => {
    const m = new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(out)
    return m ? parseLatency(m[1]) : null
  }
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out)
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  const socketErrors = sock ? { connect: +sock[1], read: +sock[2], write: +sock[3], timeout: +sock[4] } : null
  return {
    requests: Number(requests[1]),
    rps: Number(rps[1]),
    p50: pct(50),
    p99: pct(99),
    // timeouts are requests wrk gave up on after 2 s: as failed as a 5xx for a user
    errors: (non2xx ? Number(non2xx[1]) : 0) + (socketErrors ? socketErrors.connect + socketErrors.read + socketErrors.write + socketErrors.timeout : 0),
    socketErrors
  }
}

/** autocannon -j output as the same figures. */
function parseAutocannon (json) {
  const r = typeof json === 'string' ? JSON.parse(json) : json
  return {
    requests: r.requests.total,
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.non2xx + r.errors + r.timeouts,
    socketErrors: null
  }
}

/**
 * A Lua script that makes wrk send a body with every request (wrk.method and wrk.body;
 * wrk adds the Content-Length).
 */
function uploadScript (dir, bytes) {
  const file = path.join(dir, `upload-${bytes}.lua`)
  fs.writeFileSync(file, [
    'wrk.method = "POST"',
    `wrk.body = string.rep("x", ${bytes})`,
    'wrk.headers["Content-Type"] = "application/octet-stream"',
    ''
  ].join('\n'))
  return file
}

function uploadFile (dir, bytes) {
  const file = path.join(dir, `upload-${bytes}.bin`)
  if (!fs.existsSync(file)) fs.writeFileSync(file, Buffer.alloc(bytes, 'x'))
  return file
}

/**
 * The command for one load run: { cmd, args, parse }, or { skip } when this tool cannot
 * make the scenario's load.
 */
function command (tool, { url, connections, seconds, close, uploadBytes, tmpDir }) {
  if (tool === 'wrk') {
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--latency']
    // wrk opens a new connection for each request the server answers with a close,
    // and does not resume TLS sessions: a full handshake each time
    if (close) args.push('-H', 'Connection: close')
    if (uploadBytes) args.push('-s', uploadScript(tmpDir, uploadBytes))
    args.push(url)
    return { cmd: 'wrk', args, parse: parseWrk }
  }
  // autocannon keeps its connections open whatever the server says
  if (close) return { skip: 'autocannon cannot open a connection per request: install wrk (apt-get install wrk)' }
  const args = ['-j', '-c', String(connections), '-d', String(seconds)]
  if (uploadBytes) args.push('-m', 'POST', '-i', uploadFile(tmpDir, uploadBytes), '-H', 'content-type=application/octet-stream')
  args.push(url)
  return { cmd: AUTOCANNON, args, parse: parseAutocannon, env: { NODE_TLS_REJECT_UNAUTHORIZED: '0' } }
}

/** Run one load command to its end; resolves with its parsed figures. */
function run ({ cmd, args, parse, env }) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`${path.basename(cmd)} exited ${code}: ${err || out}`))
      try {
        resolve(parse(out))
      } catch (e) {
        reject(e)
      }
    })
  })
}

module.exports = { hasWrk, parseLatency, parseWrk, parseAutocannon, command, run }
