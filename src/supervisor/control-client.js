'use strict'

// The other end of the control channel: what `httpsys ls|reload|restart|stop|logs`
// call. Finds the running supervisors of this user (all of them, or the one of `-c
// <config>`), routes a command to the one(s) running the named app, and cleans up what
// a crashed supervisor left behind.

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { codes } = require('../errors')
const paths = require('./control-path')
const { answers } = require('./control-server')
const { configFilesIn } = require('../config')
const { pidAlive } = require('../local-socket')

/**
 * @param {object} [options]
 * @param {string} [options.config] only the supervisor started with this config file
 * @param {string} [options.dir] the runtime directory (default: per user)
 * @returns {Promise<object[]>} the state of each live supervisor
 */
async function findSupervisors ({ config, dir = paths.runtimeDir() } = {}) {
  let states = paths.readStates(dir)
  if (config) {
    const id = paths.identityOfConfigFile(config)
    states = states.filter((s) => s.id === id)
  }
  const live = []
  for (const state of states) {
    if (await answers(state.endpoint)) {
      live.push(state)
    } else if (!pidAlive(state.pid)) {
      // a supervisor that crashed: its files mislead every later command
      paths.removeStale(state, dir)
    }
  }
  if (live.length === 0) throw new codes.ERR_HTTPSYS_NOT_RUNNING({ config, dir })
  return live.sort((a, b) => String(a.startedAt).localeCompare(String(b.startedAt)))
}

/**
 * Sends one request, resolves with its result.
 * @param {object} state a supervisor's state (endpoint, token)
 * @param {object} message { cmd, ... }
 */
function request (state, message) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(state.endpoint)
    let buffered = ''
    let answered = false
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.write(JSON.stringify({ ...message, token: state.token }) + '\n'))
    socket.on('data', (chunk) => { buffered += chunk })
    socket.on('error', (err) => {
      if (!answered) reject(new codes.ERR_HTTPSYS_NOT_RUNNING({ config: state.config || state.script, dir: err.code }))
      answered = true
    })
    socket.on('close', () => {
      if (answered) return
      answered = true
      let reply
      try {
        reply = JSON.parse(buffered.split('\n')[0])
      } catch {}
      if (!reply || reply.end) return reject(new codes.ERR_HTTPSYS_NOT_RUNNING({ config: state.config || state.script }))
      if (reply.ok) return resolve(reply.result)
      const err = new Error(reply.error.message)
      err.code = reply.error.code
      reject(err)
    })
  })
}

/**
 * Streams log lines: the recent ones, then (follow) new ones until close() or the
 * supervisor stops.
 * @param {object} state
 * @param {object} message { app, lines, follow }
 * @param {(line: string) => void} onLine
 * @returns {{ done: Promise<void>, close: () => void }}
 */
function stream (state, message, onLine) {
  const socket = net.connect(state.endpoint)
  const done = new Promise((resolve, reject) => {
    let buffered = ''
    socket.setEncoding('utf8')
    socket.on('connect', () => socket.write(JSON.stringify({ ...message, cmd: 'logs', token: state.token }) + '\n'))
    socket.on('data', (chunk) => {
      buffered += chunk
      let nl
      while ((nl = buffered.indexOf('\n')) !== -1) {
        const text = buffered.slice(0, nl)
        buffered = buffered.slice(nl + 1)
        let msg
        try { msg = JSON.parse(text) } catch { continue }
        if (typeof msg.line === 'string') {
          onLine(msg.line)
        } else if (msg.ok === false) {
          const err = new Error(msg.error.message)
          err.code = msg.error.code
          reject(err)
        }
      }
    })
    socket.on('error', () => {})
    socket.on('close', () => resolve())
  })
  return { done, close: () => socket.destroy() }
}

/**
 * The supervisors a command acts on. A command never reaches across projects by
 * accident (two projects' apps are often both called `app` or `server`):
 * - `--all-supervisors`: every supervisor of this user;
 * - `--id <id>`: the one `httpsys ls` shows with that id;
 * - `-c <file>`: the one started with that config file, or with that script
 *   (`httpsys start app.js` runs a script-started supervisor);
 * - else the current folder's (control-path.js folderStates()): the ones started in it,
 *   whatever their config is called, and the one of a config file that lives in it;
 *   route() asks for -c when several of them would act.
 * @param {object} [options]
 * @param {boolean} [options.list] `ls`: with no project in this folder, every supervisor
 * @returns {Promise<object[]>} live supervisor states, each with a `label` for output
 */
async function select ({ config, id, allSupervisors, list: listing = false, cwd = process.cwd(), dir } = {}) {
  const every = await findSupervisors({ dir }).catch((err) => {
    if (err.code === 'ERR_HTTPSYS_NOT_RUNNING') return []
    throw err
  })
  const labelled = (states) => states.map((s) => ({ ...s, label: labelOf(s, cwd) }))
  if (allSupervisors) {
    if (every.length === 0) throw new codes.ERR_HTTPSYS_NOT_RUNNING({ dir: paths.runtimeDir() })
    return labelled(every)
  }
  if (id !== undefined) {
    const found = every.filter((s) => s.id === id)
    if (found.length === 0) throw new codes.ERR_HTTPSYS_NOT_RUNNING({ config: `id ${id}`, known: every.map((s) => `${s.id} (${labelOf(s, cwd)})`) })
    return labelled(found)
  }
  if (config !== undefined) {
    const file = path.resolve(cwd, config)
    const wanted = paths.identityOfConfigFile(config, cwd)
    const found = every.filter((s) => s.id === wanted || (s.script && path.resolve(s.script) === file))
    if (found.length === 0) throw new codes.ERR_HTTPSYS_NOT_RUNNING({ config, known: every.map((s) => `${s.id} (${labelOf(s, cwd)})`) })
    return labelled(found)
  }
  // this folder's: started here whatever its config is called, or of a config file here
  const found = paths.folderStates(every, cwd)
  if (found.length === 0 && listing) return labelled(every)
  if (found.length === 0) {
    const projectFile = configFilesIn(cwd)[0]
    throw new codes.ERR_HTTPSYS_NOT_RUNNING({
      config: projectFile || `this folder (${cwd})`,
      known: every.map((s) => `${s.id} (${labelOf(s, cwd)})`)
    })
  }
  return labelled(found)
}

/**
 * Several supervisors of this folder where a command needs one: each with the -c that
 * names it, never a guess (ERR_HTTPSYS_SUPERVISOR_AMBIGUOUS).
 */
function ambiguous (states, cwd = process.cwd()) {
  const choices = states.map((s) => {
    const label = labelOf(s, cwd)
    return `${label} (pid ${s.pid}): -c ${/[\s"'$`\\]/.test(label) ? JSON.stringify(label) : label}`
  })
  return new codes.ERR_HTTPSYS_SUPERVISOR_AMBIGUOUS({ count: states.length, dir: cwd, choices })
}

/** How a supervisor is named in output: its config file or script, relative when near. */
function labelOf (state, cwd = process.cwd()) {
  const file = state.config || state.script
  if (!file) return `pid ${state.pid}`
  const rel = path.relative(cwd, file)
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : file
}

/** The supervisors a command for `app` goes to; 'all' means every app of them. */
async function route (app, options = {}) {
  const supervisors = await select(options)
  const every = app === undefined || app === 'all'
  const chosen = every ? supervisors : supervisors.filter((s) => Array.isArray(s.apps) && s.apps.includes(app))
  if (chosen.length === 0) {
    throw new codes.ERR_HTTPSYS_APP_NOT_FOUND({ app, known: [...new Set(supervisors.flatMap((s) => s.apps || []))] })
  }
  // this folder's supervisors, several of which would act: which one is the user's to say
  const folder = !options.allSupervisors && options.id === undefined && options.config === undefined
  if (folder && chosen.length > 1) throw ambiguous(chosen, options.cwd)
  return chosen
}

/** `httpsys ls`: the selected supervisors' apps and instances. */
async function list (options = {}) {
  const supervisors = await select({ ...options, list: true })
  return Promise.all(supervisors.map(async (s) => ({ ...(await request(s, { cmd: 'ls' })), id: s.id, label: s.label, config: s.config, script: s.script, cwd: s.cwd })))
}

/**
 * `httpsys reload|restart|stop|scale <app|all>`.
 * @param {object} [extra] more of the request (scale: { count })
 * @returns {Promise<Array<{ pid: number, config: string, result: * }>>} one per supervisor
 */
async function command (cmd, app, options = {}, extra = {}) {
  const supervisors = await route(app, options)
  return Promise.all(supervisors.map(async (s) => ({ pid: s.pid, id: s.id, label: s.label, config: s.config || s.script, result: await request(s, { ...extra, cmd, app }) })))
}

/** Resolves once pid is gone (bounded). */
async function waitForExit (pid, timeout = 60000) {
  const end = Date.now() + timeout
  while (running(pid) && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 20))
  return !running(pid)
}

// A supervisor that has exited is a zombie until its parent reaps it: a `start -d`
// daemon's parent is init, which in a container may reap only every second or two, so
// `stop all` took 1.2-2.6 s after a 14 ms stop (issue 28). Exited is exited.
function running (pid) {
  if (!pidAlive(pid)) return false
  if (process.platform !== 'linux') return true
  try {
    // the state follows the command name, which is in parentheses and may hold spaces
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return pidAlive(pid)
  }
}

module.exports = { findSupervisors, select, ambiguous, labelOf, request, stream, route, list, command, waitForExit }
