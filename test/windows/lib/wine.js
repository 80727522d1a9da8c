'use strict'

// Linux-side helpers for the Wine tests: start Windows node.exe under Wine with its
// output in a file (node.exe dies on a piped stdout under Wine), wait for lines in
// that file, stop it through the stop file, and talk HTTP to it from Linux.

const { spawn, execFileSync } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..', '..')
const NODE_EXE = process.env.HTTPSYS_WINE_NODE
const LOG_DIR = process.env.HTTPSYS_WINE_LOGS || path.join(ROOT, 'build', 'wine-logs')

let counter = 0

/**
 * Starts `wine node.exe args...` in the project root (or cwd).
 * @returns {{name, log, stopFile, child, exited: Promise<number|null>, output: () => string}}
 */
function startNode (name, args, { env = {}, exe = NODE_EXE, cwd = ROOT } = {}) {
  fs.mkdirSync(LOG_DIR, { recursive: true })
  const id = `${String(++counter).padStart(2, '0')}-${name}`
  const log = path.join(LOG_DIR, `${id}.log`)
  const stopFile = path.join(LOG_DIR, `${id}.stop`)
  fs.rmSync(stopFile, { force: true })
  const fd = fs.openSync(log, 'w')
  const child = spawn('wine', [exe, ...args], {
    cwd,
    env: { ...process.env, WINEDEBUG: '-all', HTTPSYS_WINE_STOP_FILE: stopFile, ...env },
    stdio: ['ignore', fd, fd]
  })
  fs.closeSync(fd)
  const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
  const output = () => fs.readFileSync(log, 'utf8')
  return { name: id, log, stopFile, child, exited, output, exitCode: null }
}

/** Resolves with the first match of `pattern` in the process's output. */
async function waitFor (proc, pattern, timeout = 20000) {
  const end = Date.now() + timeout
  let done = false
  proc.exited.then(() => { done = true })
  while (Date.now() < end) {
    const m = pattern.exec(proc.output())
    if (m) return m
    if (done) break
    await sleep(50)
  }
  const m = pattern.exec(proc.output())
  if (m) return m
  throw new Error(`${proc.name}: no ${pattern} within ${timeout} ms${done ? ' (the process exited)' : ''}; output:\n${tail(proc.output())}`)
}

/**
 * Asks for a graceful stop and waits for the process to exit by itself.
 * @returns {Promise<boolean>} whether it exited in time (it is killed otherwise)
 */
async function stop (proc, timeout = 10000) {
  fs.writeFileSync(proc.stopFile, 'stop')
  const code = await within(proc.exited, timeout)
  if (code !== 'timeout') return true
  proc.child.kill('SIGKILL')
  await proc.exited
  return false
}

/** Runs node.exe to completion; resolves with { code, output }. */
async function runNode (name, args, options = {}, timeout = 30000) {
  const proc = startNode(name, args, options)
  const code = await within(proc.exited, timeout)
  if (code === 'timeout') {
    proc.child.kill('SIGKILL')
    await proc.exited
  }
  return { code, output: proc.output(), log: proc.log }
}

/** Windows node.exe processes still running (by the exe's file name). */
function leftovers (exe = NODE_EXE) {
  return processesMatching(path.basename(exe))
}

/** Linux `ps` lines (pid, ppid, state, seconds running, the Windows command line) that contain `text`. */
function processesMatching (text) {
  let out = ''
  try {
    out = execFileSync('ps', ['-eo', 'pid=,ppid=,stat=,etimes=,args='], { encoding: 'utf8' })
  } catch {
    return []
  }
  const needle = text.toLowerCase()
  return out.split('\n').filter((line) => line.toLowerCase().includes(needle))
}

/**
 * The Windows processes alive in the Wine prefix, from Wine's own process list (`wmic`;
 * Wine 8's tasklist is a stub that prints nothing). Wine hands out a freed pid again
 * only after many others, so a pid seen here is the process it named earlier.
 * @returns {Map<number, number>} pid -> parent pid
 */
function windowsProcesses () {
  const out = execFileSync('wine', ['wmic', 'process', 'get', 'ParentProcessId,ProcessId'],
    { env: { ...process.env, WINEDEBUG: '-all' }, stdio: ['ignore', 'pipe', 'ignore'], timeout: 20000 })
  const procs = new Map()
  // UTF-16 with a BOM; a header line, then "<parent> <pid>" per process
  for (const line of out.toString('utf16le').split(/\r?\n/).slice(1)) {
    const m = /^\s*(\d+)\s+(\d+)\s*$/.exec(line)
    if (m) procs.set(Number(m[2]), Number(m[1]))
  }
  if (procs.size === 0) throw new Error(`wmic listed no process:\n${out.toString('utf16le')}`)
  return procs
}

/** A TCP port free on this machine (Wine's http.sys binds 0.0.0.0). */
function freePort () {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', reject)
    server.listen(0, '0.0.0.0', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * One HTTP request from Linux, with a timeout (Wine leaves unmatched requests hanging).
 * The Host header is spelled "Host": Wine's http.sys matches it case-sensitively and
 * hangs up on "host:".
 * @returns {Promise<{status, headers, rawHeaders, body: Buffer}>}
 */
function request (port, { method = 'GET', path: target = '/', headers = {}, body, agent = false, timeout = 8000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: target, headers: { Host: `localhost:${port}`, ...headers }, agent })
    req.setTimeout(timeout, () => req.destroy(new Error(`${method} ${target}: no answer within ${timeout} ms`)))
    req.on('error', reject)
    req.on('response', (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.end(body)
  })
}

/** Retries `fn` until it resolves (a server coming up), for at most `timeout` ms. */
async function eventually (fn, timeout = 20000) {
  const end = Date.now() + timeout
  let last
  while (Date.now() < end) {
    try {
      return await fn()
    } catch (err) {
      last = err
      await sleep(200)
    }
  }
  throw last
}

/** curl from Linux, as a user would; resolves with { code, stdout }. */
function curl (args) {
  return new Promise((resolve) => {
    const child = spawn('curl', ['-s', '-S', '--max-time', '8', ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => { stdout += d })
    child.stderr.on('data', (d) => { stderr += d })
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

function sleep (ms) {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** `promise`, or 'timeout' after `ms`; the timer never outlives the race. */
function within (promise, ms) {
  let timer
  const timeout = new Promise((resolve) => { timer = setTimeout(resolve, ms, 'timeout') })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

function tail (text, lines = 30) {
  return text.split('\n').slice(-lines).join('\n')
}

/** A test that cannot run here: reported as skipped (with why), never as passed. */
class Skip extends Error {
  constructor (reason) {
    super(reason)
    this.name = 'Skip'
  }
}

function skip (reason) {
  throw new Skip(reason)
}

/**
 * A fresh Wine: the wineserver (and with it the http.sys driver, winedevice.exe) ended
 * and started again, persistent as run.sh starts it. Wine's http.sys keeps the
 * connections of earlier tests (no timers, docs/wine.md 2.10), and twice in full runs it
 * stopped delivering anything after the cookie tests (every request of the next test
 * starved, and the test after it hung); a test that counts starved requests starts
 * from a driver of its own. Only between tests: every Wine process ends.
 */
function restartWine () {
  try {
    execFileSync('wineserver', ['-k'], { stdio: 'ignore', timeout: 20000 })
  } catch {}
  const server = spawn('wineserver', ['-p'], { stdio: 'ignore', detached: true })
  server.on('error', () => {})
  server.unref()
}

module.exports = { Skip, skip, restartWine, ROOT, NODE_EXE, LOG_DIR, startNode, waitFor, stop, runNode, leftovers, processesMatching, windowsProcesses, freePort, request, eventually, curl, sleep, within, tail }
