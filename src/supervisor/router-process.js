'use strict'

// The native router's process (router/, issue 25) and its control channel
// (docs/router-control.md): spawned with three pipes, commands as JSON lines on its
// stdin, answers and events as JSON lines on its stdout, its records as pino NDJSON on
// its stderr, which go on through our logger. Closing its stdin is the end: it exits
// at once, so it never outlives the supervisor however the supervisor dies (its stdin
// closes with our process).

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const { EventEmitter } = require('node:events')
const { codes, fromAnswer } = require('../errors')
const { LineSplitter } = require('./line-splitter')
const { findRouter } = require('./router-binary')

// pino's level numbers, by name
const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' }

/**
 * @param {string} [binary] a given one; none: found by router-binary.js
 * @returns {string} the router binary's path; throws ERR_HTTPSYS_ROUTER_MISSING when there is none
 */
function routerBinary (binary) {
  if (binary === undefined) return findRouter()
  if (!fs.existsSync(binary)) throw new codes.ERR_HTTPSYS_ROUTER_MISSING({ attempts: [{ path: binary, error: 'not found' }] })
  return binary
}

class RouterProcess extends EventEmitter {
  /**
   * @param {object} options
   * @param {string} [options.binary] default: what router-binary.js finds ($HTTPSYS_ROUTER_PATH, router/bin, the platform's package, the executable's copy)
   * @param {import('pino').Logger} options.logger its records go on through this one
   * @param {string} [options.logLevel] the router's own level (default: the logger's)
   */
  constructor ({ binary, logger, logLevel } = {}) {
    super()
    this.binary = routerBinary(binary)
    this.logger = logger
    this.logLevel = logLevel || (logger && logger.level) || 'info'
    this.child = null
    this.seq = 0
    this.pending = new Map() // id -> { resolve, reject, cmd }
    this.exited = null
    this.exitInfo = null
  }

  /**
   * Spawns the router; resolves once it runs.
   * @param {object} [options]
   * @param {boolean} [options.ipc] node's IPC channel too (fd 3): a standalone app hands
   *   its listening sockets over on it (src/preload/standalone-native.js)
   */
  spawn ({ ipc = false } = {}) {
    const stdio = ipc ? ['pipe', 'pipe', 'pipe', 'ipc'] : ['pipe', 'pipe', 'pipe']
    const child = spawn(this.binary, ['-log-level', this.logLevel], { stdio, windowsHide: true })
    this.child = child
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal }
        const err = new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: `the router process exited (${signal || `code ${code}`})` })
        for (const p of this.pending.values()) p.reject(err)
        this.pending.clear()
        this.emit('exit', this.exitInfo)
        resolve(this.exitInfo)
      })
    })
    const out = new LineSplitter((line) => this.onLine(line), { maxLength: 16 * 1024 * 1024 })
    child.stdout.on('data', (chunk) => out.push(chunk))
    const err = new LineSplitter((line) => this.onLog(line))
    child.stderr.on('data', (chunk) => err.push(chunk))
    // a write after the router died: the exit says so
    child.stdin.on('error', () => {})
    return new Promise((resolve, reject) => {
      child.once('spawn', resolve)
      child.once('error', (e) => reject(new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: `${this.binary} did not start (${e.code || e.message})`, cause: e })))
    })
  }

  /**
   * One command.
   * @param {string} cmd
   * @param {object} [args]
   * @returns {Promise<object>} the answer's fields
   */
  call (cmd, args = {}) {
    if (this.child === null || this.exitInfo !== null) {
      return Promise.reject(new codes.ERR_HTTPSYS_ROUTER_FAILED({ reason: 'the router process is not running' }))
    }
    const id = ++this.seq
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, cmd })
      this.child.stdin.write(JSON.stringify({ ...args, id, cmd }) + '\n')
    })
  }

  onLine (line) {
    let msg
    try {
      msg = JSON.parse(line)
    } catch {
      this.logger.warn({ line: line.slice(0, 200) }, 'the router wrote a line that is not JSON on its control channel')
      return
    }
    if (typeof msg.event === 'string') {
      const { event, ...fields } = msg
      this.emit('event', event, fields)
      return
    }
    const p = this.pending.get(msg.id)
    if (p === undefined) return
    this.pending.delete(msg.id)
    if (msg.error) p.reject(fromAnswer(msg.error))
    else {
      const { id, ok, ...fields } = msg
      p.resolve(fields)
    }
  }

  onLog (line) {
    let rec
    try {
      rec = JSON.parse(line)
    } catch {
      this.logger.warn({ component: 'router' }, line)
      return
    }
    const { level, time, pid, hostname, msg, ...fields } = rec
    const name = LEVELS[level] || 'info'
    // Go writes an error as its message; the hub's records carry pino's serialized err
    // (type, message, code), which log readers and the hub's tests look into
    if (typeof fields.err === 'string') fields.err = { type: 'Error', message: fields.err, ...(fields.code === undefined ? {} : { code: fields.code }) }
    this.logger[name]({ routerPid: pid, ...fields }, msg)
  }

  /** Ends its stdin (it exits at once) and waits for the exit, killing it after ms. */
  async stop (ms = 2000) {
    if (this.child === null || this.exitInfo !== null) return
    this.child.stdin.end()
    const timer = setTimeout(() => this.child.kill('SIGKILL'), ms)
    timer.unref()
    await this.exited
    clearTimeout(timer)
  }
}

module.exports = { RouterProcess, routerBinary }
