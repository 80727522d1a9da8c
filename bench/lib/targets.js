'use strict'

// The servers the matrix compares, each serving the same app on its own port:
//
//   node        the app alone
//   cluster     node's cluster module, N workers (what pm2's cluster mode runs)
//   nginx       nginx (N worker processes) in front of N node processes, upstream keep-alive
//   httpsys-1   httpsys start app.js            (supervisor + router + 1 worker)
//   httpsys-N   httpsys start app.js -i N       (the router: router/bin/httpsys-router)
//   unit        NGINX Unit 1.35 (its router, controller and main processes) with the app
//               in 1 node process (bench/lib/unit.js; built by bench/unit/build.sh)
//   ceiling     nginx (N worker processes) answering the hello body from its own memory,
//               no app behind it: the most this machine and its load generator reach
//               for a server's answer (hello, close and cached scenarios only); a
//               target above ceiling/node cannot be shown on this machine
//
// start() resolves once the target answers (httpsys: once every instance is ready) with
// { roots, url, stop, classify }: roots are the pids whose process trees are the target's
// cost; classify(pid, proc) names a process's role in it ('router', 'workers',
// 'supervisor'), so the report can say where the CPU goes (absent: one role, 'server').
// Everything is started detached, in its own process group, so stop() ends exactly
// what this harness started and nothing else.

const { spawn, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const https = require('node:https')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const readline = require('node:readline')
const { parseStat, readProcs, treePids, cmdline } = require('./procstat')
const unit = require('./unit')

const BENCH = path.join(__dirname, '..')
const ROOT = path.join(BENCH, '..')
const APPS = path.join(BENCH, 'apps')

/** nginx's path: $NGINX when set (NGINX=none runs without it), else where packages put it. */
function findNginx () {
  if (process.env.NGINX !== undefined) return fs.existsSync(process.env.NGINX) ? process.env.NGINX : null
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/local/nginx/sbin/nginx', '/usr/bin/nginx']) {
    if (fs.existsSync(p)) return p
  }
  try {
    return execFileSync('sh', ['-c', 'command -v nginx'], { encoding: 'utf8' }).trim() || null
  } catch {
    return null
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

/** Where a target on port answers, over TLS or not. */
function localUrl (port, tls) {
  return `${tls ? 'https' : 'http'}://127.0.0.1:${port}/`
}

/** GET url: its status, or null when it failed. onHeaders(headers) sees the answer's headers. */
function get (url, onHeaders = () => {}) {
  return new Promise((resolve) => {
    const mod = url.startsWith('https:') ? https : http
    const req = mod.get(url, { rejectUnauthorized: false, agent: false, timeout: 2000 }, (res) => {
      onHeaders(res.headers)
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(null))
  })
}

async function waitForUrl (url, child, deadline = Date.now() + 20000) {
  while (Date.now() < deadline) {
    if (child && child.exitCode !== null) throw new Error(`${url}: the server exited (${child.exitCode}) before it answered`)
    if (await get(url) === 200) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`nothing answered 200 on ${url}`)
}

function appEnv (scenario, port, cert) {
  return { ...process.env, ...scenario.env, PORT: String(port), KEY_FILE: cert.key, CERT_FILE: cert.cert, NODE_ENV: 'production' }
}

// every server process started and not yet exited: a Ctrl+C reaches only the harness's
// own process group, so the harness stops these itself (stopAll)
const live = new Set()

function spawnDetached (cmd, args, env, stdout = 'ignore') {
  const child = spawn(cmd, args, { env, stdio: ['ignore', stdout, 'inherit'], detached: true })
  live.add(child)
  child.once('exit', () => live.delete(child))
  return child
}

/** Stop every server this harness started that is still running (an interrupted run). */
function stopAll () {
  return Promise.all([...live].map((c) => stopTree(c, { signal: 'SIGTERM', graceMs: 3000 })))
}

/**
 * Stop what this harness started: signal the leader (or its group), wait, then kill the
 * group and any process of its tree still alive (checked by start time, so a reused pid
 * is never hit).
 */
async function stopTree (child, { signal = 'SIGTERM', group = true, graceMs = 5000 } = {}) {
  const procs = readProcs()
  const tree = [...treePids(procs, [child.pid])].map((pid) => ({ pid, starttime: procs.get(pid).starttime }))
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    try { process.kill(group ? -child.pid : child.pid, signal) } catch {}
    // cleared once the child exits: a pending timer would keep the harness alive for graceMs
    let timer
    const grace = new Promise((resolve) => { timer = setTimeout(resolve, graceMs) })
    await Promise.race([exited, grace])
    clearTimeout(timer)
  }
  try { process.kill(-child.pid, 'SIGKILL') } catch {}
  for (const { pid, starttime } of tree) {
    try {
      const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
      if (parseStat(st).starttime === starttime) process.kill(pid, 'SIGKILL')
    } catch {}
  }
}

async function startNode (scenario, ctx) {
  const port = await freePort()
  const child = spawnDetached(process.execPath, [path.join(APPS, scenario.app)], appEnv(scenario, port, ctx.cert))
  const url = localUrl(port, scenario.tls)
  await waitForUrl(url, child)
  return { roots: [child.pid], url, stop: () => stopTree(child) }
}

async function startCluster (scenario, ctx) {
  const port = await freePort()
  const env = { ...appEnv(scenario, port, ctx.cert), APP: path.join(APPS, scenario.app), WORKERS: String(ctx.instances) }
  const child = spawnDetached(process.execPath, [path.join(APPS, 'cluster.js')], env)
  const url = localUrl(port, scenario.tls)
  await waitForUrl(url, child)
  // the first worker to listen answers; the others are forked at once and ready within
  // a few ms, well before the warm-up ends
  return { roots: [child.pid], url, stop: () => stopTree(child) }
}

/** The router's binary in this checkout (or $HTTPSYS_ROUTER_PATH); null when not built. */
function findRouter () {
  const binary = process.env.HTTPSYS_ROUTER_PATH || path.join(ROOT, 'router', 'bin', process.platform === 'win32' ? 'httpsys-router.exe' : 'httpsys-router')
  return fs.existsSync(binary) ? binary : null
}

/**
 * httpsys start: the supervisor, its router child (router/bin/httpsys-router) and the
 * workers. ctx.profileDir set: the router writes a CPU profile there
 * (HTTPSYS_ROUTER_CPUPROFILE, read by router/cmd/httpsys-router).
 */
async function startHttpsys (scenario, ctx, instances) {
  const port = await freePort()
  const runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-bench-rt-'))
  // a private runtime directory: this supervisor never meets another engineer's
  const env = { ...appEnv(scenario, port, ctx.cert), HTTPSYS_RUNTIME_DIR: runtimeDir }
  // the router is the only one; an inherited HTTPSYS_ROUTER=hub would be a config error
  delete env.HTTPSYS_ROUTER
  delete env.HTTPSYS_ROUTER_CPUPROFILE
  if (ctx.profileDir) env.HTTPSYS_ROUTER_CPUPROFILE = path.join(ctx.profileDir, `router-${scenario.name}-${instances}-${Date.now()}.pprof`)
  const args = [path.join(ROOT, 'bin', 'httpsys'), 'start', path.join(APPS, scenario.app), '-i', String(instances), '--json', '--log-level', 'info']
  const child = spawnDetached(process.execPath, args, env, 'pipe')
  // ready when the supervisor says every instance is (not at the first answer, which
  // would leave the others attaching during the run); an app that errors says why
  let cause = null
  await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout })
    const timer = setTimeout(() => reject(new Error('httpsys start: not ready in 20 s')), 20000)
    rl.on('line', (line) => {
      if (line.includes('"event":"all-ready"')) {
        clearTimeout(timer)
        resolve()
      } else if (line.includes('"event":"errored"')) {
        try { cause = JSON.parse(line).cause } catch {}
      }
    })
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`httpsys start exited ${code} before it was ready${cause ? `: ${cause}` : ''}`))
    })
  })
  child.stdout.resume()
  const url = localUrl(port, scenario.tls)
  await waitForUrl(url, child)
  const supervisor = child.pid
  // comm is the executable's name, cut to 15 bytes (proc(5)); HTTPSYS_ROUTER_PATH may rename it
  const routerComm = path.basename(findRouter() || 'httpsys-router').slice(0, 15)
  return {
    roots: [supervisor],
    url,
    // the router is the supervisor's child running router/bin/httpsys-router; every
    // other process under the supervisor is a worker
    classify: (pid, p) => (pid === supervisor ? 'supervisor' : p.ppid === supervisor && p.comm === routerComm ? 'router' : 'workers'),
    async stop () {
      // SIGINT to the supervisor alone: it drains and stops its workers itself, as
      // Ctrl+C does (and closes the router, which then writes its profile)
      await stopTree(child, { signal: 'SIGINT', group: false, graceMs: 10000 })
      fs.rmSync(runtimeDir, { recursive: true, force: true })
    }
  }
}

/**
 * NGINX Unit serving the scenario's app in ctx.unitProcesses node processes (1 by
 * default), terminating TLS itself (its certificate store) for the https scenarios.
 */
async function startUnit (scenario, ctx) {
  const port = await freePort()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-bench-unit-'))
  for (const d of ['state', 'tmp']) fs.mkdirSync(path.join(dir, d))
  const sock = path.join(dir, 'control.sock')
  const args = ['--no-daemon', '--control', `unix:${sock}`, '--pid', path.join(dir, 'unit.pid'), '--log', path.join(dir, 'unit.log'),
    '--statedir', path.join(dir, 'state'), '--tmpdir', path.join(dir, 'tmp')]
  const main = spawnDetached(ctx.unit.unitd, args, process.env)
  const stop = async () => {
    await stopTree(main, { signal: 'SIGTERM', graceMs: 5000 })
    fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    await unit.waitForSocket(sock, main)
    const env = { ...scenario.env, NODE_ENV: 'production', KEY_FILE: ctx.cert.key, CERT_FILE: ctx.cert.cert }
    const config = unit.unitConfig({ port, app: path.join(APPS, scenario.nginxApp || scenario.app), env, processes: ctx.unitProcesses || 1, nodeModules: ctx.unit.nodeModules })
    if (scenario.tls) {
      await unit.control(sock, 'PUT', '/certificates/bench', Buffer.concat([fs.readFileSync(ctx.cert.cert), fs.readFileSync(ctx.cert.key)]))
      config.listeners[`127.0.0.1:${port}`].tls = { certificate: 'bench' }
    }
    await unit.control(sock, 'PUT', '/config', config)
    await waitForUrl(localUrl(port, scenario.tls), main)
  } catch (err) {
    const log = fs.existsSync(path.join(dir, 'unit.log')) ? fs.readFileSync(path.join(dir, 'unit.log'), 'utf8').split('\n').filter((l) => /\[(alert|error|crit)\]/.test(l)).slice(-3).join(' / ') : ''
    await stop()
    throw new Error(`${err.message}${log ? ` (unit.log: ${log})` : ''}`)
  }
  return { roots: [main.pid], url: localUrl(port, scenario.tls), classify: (pid) => unit.unitRole(cmdline(pid)), stop }
}

/** The start of every nginx.conf the harness writes: up to the http block's settings. */
function nginxPrologue ({ dir, workers, runAsRoot }) {
  return `# written by bench/lib/targets.js for one matrix run
${runAsRoot ? 'user root;  # the temp dirs are the harness\'s (mode 700); as root nginx would switch to nobody\n' : ''}worker_processes ${workers};
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # node serves any number of requests on a connection; nginx's default is 1000
  keepalive_requests 1000000;
`
}

/** nginx.conf for nginx in front of the given node ports; the choices are a tuned proxy's. */
function nginxConf ({ dir, port, backends, workers, tls, cert, runAsRoot, cache = false }) {
  return `${nginxPrologue({ dir, workers, runAsRoot })}  # a 1 MB upload and a 1 MB response stay in memory, as they do in node, instead of
  # going through a temp file
  client_max_body_size 2m;
  client_body_buffer_size 2m;
  proxy_buffer_size 16k;
  proxy_buffers 80 16k;
  proxy_busy_buffers_size 64k;
${cache ? `  proxy_cache_path ${dir}/cache keys_zone=responses:10m;\n` : ''}  upstream app {
${backends.map((p) => `    server 127.0.0.1:${p};`).join('\n')}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port}${tls ? ' ssl' : ''};
${tls ? `    ssl_certificate ${cert.cert};\n    ssl_certificate_key ${cert.key};\n    ssl_protocols TLSv1.2 TLSv1.3;\n` : ''}    location / {
      proxy_pass http://app;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
${cache ? '      proxy_cache responses;\n' : ''}    }
  }
}
`
}

/** nginx.conf for nginx answering the hello app's response itself. */
function ceilingConf ({ dir, port, workers, runAsRoot }) {
  return `${nginxPrologue({ dir, workers, runAsRoot })}  server {
    listen 127.0.0.1:${port};
    location / {
      default_type text/plain;
      return 200 "hello world\\n";
    }
  }
}
`
}

async function startCeiling (scenario, ctx) {
  const port = await freePort()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-bench-ceiling-'))
  const runAsRoot = typeof process.getuid === 'function' && process.getuid() === 0
  fs.writeFileSync(path.join(dir, 'nginx.conf'), ceilingConf({ dir, port, workers: ctx.instances, runAsRoot }))
  const nginx = spawnDetached(ctx.nginx, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], process.env)
  const url = localUrl(port, false)
  const stop = async () => {
    await stopTree(nginx)
    fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitForUrl(url, nginx)
  } catch (err) {
    await stop()
    throw err
  }
  return { roots: [nginx.pid], url, stop }
}

async function startNginx (scenario, ctx) {
  const backends = []
  const children = []
  const stopChildren = () => Promise.all(children.map((c) => stopTree(c)))
  try {
    const app = path.join(APPS, scenario.nginxApp || scenario.app)
    for (let i = 0; i < ctx.instances; i++) {
      const p = await freePort()
      const child = spawnDetached(process.execPath, [app], appEnv(scenario, p, ctx.cert))
      children.push(child)
      backends.push(p)
    }
    for (let i = 0; i < backends.length; i++) await waitForUrl(`http://127.0.0.1:${backends[i]}/`, children[i])
    const port = await freePort()
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-bench-nginx-'))
    const runAsRoot = typeof process.getuid === 'function' && process.getuid() === 0
    fs.writeFileSync(path.join(dir, 'nginx.conf'), nginxConf({ dir, port, backends, workers: ctx.instances, tls: scenario.tls, cert: ctx.cert, runAsRoot, cache: scenario.cache === true }))
    const nginx = spawnDetached(ctx.nginx, ['-p', dir, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log')], process.env)
    children.unshift(nginx)
    const url = localUrl(port, scenario.tls)
    try {
      await waitForUrl(url, nginx)
    } catch (err) {
      const log = fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : ''
      throw new Error(`${err.message}\n${log}`)
    }
    return {
      roots: children.map((c) => c.pid),
      url,
      async stop () {
        await stopChildren()
        fs.rmSync(dir, { recursive: true, force: true })
      }
    }
  } catch (err) {
    await stopChildren()
    throw err
  }
}

/** The targets of a run: name, label, and start(scenario, ctx). */
function targets (instances) {
  return [
    { name: 'node', label: 'bare node', start: startNode },
    { name: 'cluster', label: `node cluster x${instances}`, start: startCluster },
    { name: 'nginx', label: `nginx + node x${instances}`, start: startNginx, needs: 'nginx' },
    { name: 'httpsys-1', label: 'httpsys x1', needs: 'router', start: (s, ctx) => startHttpsys(s, ctx, 1) },
    { name: 'httpsys-N', label: `httpsys x${instances}`, needs: 'router', start: (s, ctx) => startHttpsys(s, ctx, instances) },
    { name: 'unit', label: 'NGINX Unit x1', needs: 'unit', start: startUnit },
    { name: 'ceiling', label: `ceiling: nginx static x${instances}`, start: startCeiling, needs: 'nginx', scenarios: ['hello', 'close', 'cached'] }
  ]
}

// Names of the matrix's columns for `HTTPSYS_ROUTER=native httpsys start` while the JS hub
// was the default (issue 25); the router is the only one now, so they are httpsys-1/-N
const ALIASES = { 'native-1': 'httpsys-1', 'native-N': 'httpsys-N' }

/**
 * The targets a --targets list names (comma-separated; all when empty), in the matrix's
 * order, each once; an old name is taken as its alias (with a note), an unknown one throws.
 */
function pickTargets (list, text) {
  if (!text) return { targets: list, notes: [] }
  const names = text.split(',').map((n) => n.trim()).filter(Boolean)
  const notes = names.filter((n) => ALIASES[n]).map((n) => `--targets ${n} is ${ALIASES[n]} (the router is the only one: the JS hub is gone)`)
  const wanted = names.map((n) => ALIASES[n] || n)
  const unknown = wanted.filter((n) => !list.some((t) => t.name === n))
  if (unknown.length > 0) throw new Error(`unknown target ${unknown.join(', ')}: one of ${list.map((t) => t.name).join(', ')}`)
  return { targets: list.filter((t) => wanted.includes(t.name)), notes }
}

/**
 * Whether url is answered from a cache: a repeated cacheable answer carries Age (RFC 9111
 * 5.1), which the router's output cache and nginx's proxy_cache add and an app does not.
 */
async function answersFromCache (url) {
  let age = null
  for (let i = 0; i < 3 && age === null; i++) {
    await get(url, (h) => { if (h.age !== undefined) age = h.age })
  }
  return age !== null
}

/**
 * One side of bench/pair.js, https.js and websocket.js: app on bare node (kind 'node') or
 * through `httpsys start` (the router + 1 worker), on a free port. Resolves with what
 * fn({ url, port, child }) resolves once url answers; the server is stopped after, as a
 * Ctrl+C would (SIGINT to its process group). env is added to the app's; httpsysArgs(port)
 * go to `httpsys start`.
 */
async function withPairTarget (kind, app, fn, { tls = false, env = {}, httpsysArgs = () => [] } = {}) {
  const port = await freePort()
  const args = kind === 'node'
    ? [app]
    : [path.join(ROOT, 'bin', 'httpsys'), 'start', app, ...httpsysArgs(port), '--json', '--log-level', 'warn']
  const child = spawnDetached(process.execPath, args, { ...process.env, ...env, PORT: String(port), HTTPSYS_LOG_LEVEL: 'warn' })
  const url = localUrl(port, tls)
  try {
    await waitForUrl(url, child)
    return await fn({ url, port, child })
  } finally {
    await stopTree(child, { signal: 'SIGINT' })
  }
}

function makeCert (dir) {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '2',
    '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { cwd: dir, stdio: 'ignore' })
  return { key: path.join(dir, 'key.pem'), cert: path.join(dir, 'cert.pem') }
}

module.exports = { targets, pickTargets, findNginx, findRouter, findUnit: unit.findUnit, makeCert, withPairTarget, stopAll, freePort, get, answersFromCache }
