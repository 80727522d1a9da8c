'use strict'

// The supervisor's end of the control channel (`httpsys ls|reload|restart|stop|logs`
// from another terminal). NDJSON both ways over a Unix socket / named pipe:
//   -> { token, cmd: 'ls'|'reload'|'restart'|'scale'|'stop'|'logs', app?, count?, lines?, follow? }
//   <- { ok: true, result } | { ok: false, error: { code, message } }
//   logs: <- { line } ... then { end: true } unless follow (then until the client leaves)
// A stale socket left by a crashed supervisor is detected (nobody answers on it) and
// replaced; a live one means this config is running already.

const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const { codes } = require('../errors')
const paths = require('./control-path')

const IS_WINDOWS = process.platform === 'win32'
const MAX_REQUEST = 64 * 1024
// what one `logs -f` reader may have waiting in the supervisor's memory; past it its
// records are skipped (and counted) until it has read what it has
const MAX_FOLLOW_BACKLOG = 1024 * 1024

class ControlServer {
  /**
   * @param {object} options
   * @param {object} options.handler { ls(), reload(app), restart(app), scale(app, count), stop(app), logs({ app, lines }), subscribe(fn) }
   * @param {object} options.config the validated config (its identity names the socket)
   * @param {import('pino').Logger} options.logger
   * @param {string} [options.dir] the runtime directory (default: per user)
   */
  constructor ({ handler, config, logger, dir }) {
    this.handler = handler
    this.config = config
    this.logger = logger
    this.dir = dir || paths.runtimeDir()
    this.id = paths.identity(config)
    this.endpoint = paths.endpoint(this.id, this.dir)
    this.stateFile = paths.statePath(this.id, this.dir)
    this.token = crypto.randomBytes(24).toString('hex')
    this.server = null
    this.sockets = new Set()
  }

  async start () {
    paths.ensureRuntimeDir(this.dir)
    await this.takeOver()
    const server = net.createServer((socket) => this.onConnection(socket))
    await new Promise((resolve, reject) => {
      server.once('error', reject)
      // a socket file is created with the umask's mode: make it ours alone from the start
      const umask = IS_WINDOWS ? null : process.umask(0o177)
      server.listen(this.endpoint, () => {
        server.off('error', reject)
        resolve()
      })
      if (umask !== null) process.umask(umask)
    })
    server.unref()
    this.server = server
    this.startedAt = new Date().toISOString()
    this.cwd = process.cwd()
    this.writeState(this.config.apps)
    this.logger.debug({ event: 'control', endpoint: this.endpoint }, `control channel at ${this.endpoint}`)
  }

  /**
   * The apps changed (a config edit applied by `httpsys reload`): the state file names
   * them, so a command for a new app finds this supervisor.
   * @param {object[]} apps the validated apps now running
   */
  setApps (apps) {
    if (this.server === null) return
    try {
      this.writeState(apps)
    } catch (err) {
      this.logger.warn({ err }, `could not update ${this.stateFile}: ${err.message}`)
    }
  }

  writeState (apps) {
    const source = this.config.source || {}
    paths.writeState(this.stateFile, {
      pid: process.pid,
      id: this.id,
      token: this.token,
      endpoint: this.endpoint,
      config: source.configFile || null,
      script: source.script || null,
      // where it was started: a command run in the same folder acts on it (control-client.js)
      cwd: this.cwd,
      apps: apps.map((a) => a.name),
      startedAt: this.startedAt
    })
    // what `httpsys logs` reads once this supervisor has stopped (the state file goes
    // with it): where it ran and where its records are, kept until the next run
    try {
      paths.writeState(paths.lastRunPath(this.id), {
        id: this.id,
        config: source.configFile || null,
        script: source.script || null,
        cwd: this.cwd,
        apps: apps.map((a) => ({ name: a.name, logDir: a.log_dir || null })),
        daemonLog: require('./daemon').daemonLogFile(this.config),
        startedAt: this.startedAt
      })
    } catch (err) {
      this.logger.debug({ err }, 'could not write the last-run file')
    }
  }

  /** Fails when a live supervisor holds our endpoint; removes a dead one's leftovers. */
  async takeOver () {
    let state = null
    try {
      state = JSON.parse(fs.readFileSync(this.stateFile, 'utf8'))
    } catch {}
    if (await answers(this.endpoint)) {
      throw new codes.ERR_HTTPSYS_ALREADY_RUNNING({ pid: state ? state.pid : 'unknown', config: state && (state.config || state.script) })
    }
    if (!IS_WINDOWS) {
      try { fs.unlinkSync(this.endpoint) } catch {}
    }
    try { fs.unlinkSync(this.stateFile) } catch {}
  }

  onConnection (socket) {
    this.sockets.add(socket)
    socket.on('close', () => this.sockets.delete(socket))
    socket.on('error', () => {})
    socket.setEncoding('utf8')
    let buffered = ''
    let handled = false
    socket.on('data', (chunk) => {
      if (handled) return
      buffered += chunk
      const nl = buffered.indexOf('\n')
      if (nl === -1) {
        if (buffered.length > MAX_REQUEST) socket.destroy()
        return
      }
      handled = true
      let request
      try {
        request = JSON.parse(buffered.slice(0, nl))
      } catch {
        return reply(socket, { ok: false, error: { code: 'ERR_HTTPSYS_PROTOCOL', message: 'not a JSON request' } })
      }
      this.handle(socket, request)
    })
  }

  async handle (socket, request) {
    if (!request || typeof request.token !== 'string' || !sameToken(request.token, this.token)) {
      const err = new codes.ERR_HTTPSYS_CONTROL_DENIED({ path: this.endpoint, reason: 'the request did not carry this supervisor\'s token' })
      return reply(socket, { ok: false, error: { code: err.code, message: err.message } })
    }
    const h = this.handler
    try {
      switch (request.cmd) {
        case 'ls':
          return reply(socket, { ok: true, result: await h.ls() })
        case 'reload':
        case 'restart':
        case 'stop':
          return reply(socket, { ok: true, result: await h[request.cmd](String(request.app || 'all')) })
        case 'show':
          return reply(socket, { ok: true, result: await h.show(String(request.app)) })
        case 'scale':
          return reply(socket, { ok: true, result: await h.scale(String(request.app), request.count) })
        case 'logs':
          return this.streamLogs(socket, request)
        default:
          return reply(socket, { ok: false, error: { code: 'ERR_HTTPSYS_PROTOCOL', message: `unknown command ${JSON.stringify(request.cmd)}` } })
      }
    } catch (err) {
      reply(socket, { ok: false, error: { code: err.code || 'ERR_HTTPSYS_PROTOCOL', message: err.message } })
    }
  }

  /**
   * A reader that stops (a suspended `httpsys logs -f`, a stalled pipe) must not grow the
   * supervisor's memory: past MAX_FOLLOW_BACKLOG bytes waiting, records are skipped, and
   * one record says how many once it has caught up.
   */
  streamLogs (socket, { app, lines, follow }) {
    const h = this.handler
    const name = app === undefined || app === null || app === 'all' ? undefined : String(app)
    h.checkApp(name)
    const count = Number.isInteger(lines) && lines >= 0 ? lines : 100
    const write = (line) => socket.write(JSON.stringify({ line: line.endsWith('\n') ? line.slice(0, -1) : line }) + '\n')
    for (const line of h.logs({ app: name, lines: count })) write(line)
    if (!follow) {
      socket.end(JSON.stringify({ end: true }) + '\n')
      return
    }
    let skipped = 0
    const unsubscribe = h.subscribe((line, lineApp) => {
      if (name !== undefined && lineApp !== name) return
      if (socket.writableLength > MAX_FOLLOW_BACKLOG) skipped++
      else write(line)
    })
    socket.on('drain', () => {
      if (skipped === 0) return
      const count = skipped
      skipped = 0
      write(JSON.stringify({
        level: 40, time: Date.now(), event: 'logs:skipped', count, msg: `${count} records skipped: this reader did not keep up`
      }))
    })
    socket.on('close', unsubscribe)
  }

  /** Stops listening and removes the socket and state file (if they are still ours). */
  async close () {
    if (this.server === null) return
    const server = this.server
    this.server = null
    for (const s of this.sockets) s.end(JSON.stringify({ end: true }) + '\n')
    await new Promise((resolve) => {
      server.close(() => resolve())
      setTimeout(() => {
        for (const s of this.sockets) s.destroy()
      }, 200).unref()
    })
    try {
      const state = JSON.parse(fs.readFileSync(this.stateFile, 'utf8'))
      if (state.pid === process.pid) fs.unlinkSync(this.stateFile)
    } catch {}
    if (!IS_WINDOWS) {
      try { fs.unlinkSync(this.endpoint) } catch {}
    }
  }
}

function reply (socket, message) {
  socket.end(JSON.stringify(message) + '\n')
}

function sameToken (a, b) {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && crypto.timingSafeEqual(x, y)
}

/** Whether something listens on endpoint (a crashed supervisor's socket file does not). */
function answers (endpoint, timeout = 1000) {
  return new Promise((resolve) => {
    const socket = net.connect(endpoint)
    const done = (ok) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(ok)
    }
    const timer = setTimeout(() => done(false), timeout)
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

module.exports = { ControlServer, answers }
