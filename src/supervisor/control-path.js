'use strict'

// Where a running supervisor can be reached from another terminal: a per-user runtime
// directory holding, per supervisor, a control socket (a named pipe on Windows) and a
// state file { pid, token, config, apps, endpoint }. The name derives from the config
// (file path, or the started script and its prefixes), so two configs never share one
// and the same config cannot run twice. Another user cannot connect: the directory is
// the user's own (0700) and every request carries the token only the state file holds
// (Windows pipes live in one global namespace whose default ACL lets others read:
// docs/supervisor.md 4.5).

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { codes } = require('../errors')
const { socketPath, userTag, removeDeadSockets } = require('../local-socket')

const IS_WINDOWS = process.platform === 'win32'

/** The per-user directory: HTTPSYS_RUNTIME_DIR, else XDG_RUNTIME_DIR/httpsys, else a private temp dir. */
function runtimeDir (env = process.env) {
  if (env.HTTPSYS_RUNTIME_DIR) return path.resolve(env.HTTPSYS_RUNTIME_DIR)
  if (IS_WINDOWS) return path.join(env.LOCALAPPDATA || os.tmpdir(), 'httpsys')
  if (env.XDG_RUNTIME_DIR) return path.join(env.XDG_RUNTIME_DIR, 'httpsys')
  return path.join(os.tmpdir(), `httpsys-${userTag()}`)
}

/**
 * Creates the runtime directory, private to this user, or checks the one there.
 * @returns {string}
 * @throws ERR_HTTPSYS_CONTROL_DENIED when it is not this user's private directory
 */
function ensureRuntimeDir (dir = runtimeDir()) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  checkPrivate(dir)
  return dir
}

/**
 * The runtime directory for a reader (`ls`, `stop`, ...): checked, or null when there is
 * none yet (no supervisor ever ran).
 * @throws ERR_HTTPSYS_CONTROL_DENIED when it is not this user's private directory
 */
function existingRuntimeDir (dir = runtimeDir()) {
  try {
    fs.lstatSync(dir)
  } catch (err) {
    if (err.code === 'ENOENT') return null
    throw err
  }
  checkPrivate(dir)
  return dir
}

// Under a shared temp directory (no XDG_RUNTIME_DIR) another user can create the
// directory first and plant state files: trusting one would make us connect where they
// say, read their token, and delete the path they name. So a runtime directory must be
// this user's own, a real directory (not a link), and closed to everyone else.
function checkPrivate (dir) {
  if (IS_WINDOWS) return
  const st = fs.lstatSync(dir)
  const fix = `Remove it (\`rm -r ${dir}\`, as its owner) or set HTTPSYS_RUNTIME_DIR to a directory of your own`
  if (!st.isDirectory()) throw new codes.ERR_HTTPSYS_CONTROL_DENIED({ path: dir, reason: 'it is not a directory (a link or a file is never followed)', fix })
  if (st.uid !== process.getuid()) throw new codes.ERR_HTTPSYS_CONTROL_DENIED({ path: dir, reason: `it belongs to uid ${st.uid}, not to this user (uid ${process.getuid()})`, fix })
  if ((st.mode & 0o077) !== 0) {
    throw new codes.ERR_HTTPSYS_CONTROL_DENIED({ path: dir, reason: `others may use it (mode ${(st.mode & 0o777).toString(8)})`, fix: `Run \`chmod 700 ${dir}\`` })
  }
}

/**
 * A short stable name for a config.
 * @param {object} config a validated config (config.source: { configFile } or { script })
 */
function identity (config) {
  const source = config.source || {}
  const key = source.configFile
    ? `config:${path.resolve(source.configFile)}`
    : `apps:${JSON.stringify(config.apps.map((a) => [a.name, a.script, a.urls, a.cwd]))}`
  return identityOf(key)
}

/** The identity `-c <file>` selects, without loading the file. */
function identityOfConfigFile (file, cwd = process.cwd()) {
  return identityOf(`config:${path.resolve(cwd, file)}`)
}

function identityOf (key) {
  return crypto.createHash('sha256').update(key).digest('hex').slice(0, 12)
}

function endpoint (id, dir = runtimeDir()) {
  // a pipe has no directory to keep it apart: its name carries the user
  return socketPath(IS_WINDOWS ? `httpsys-${userTag()}-${id}` : id, { dir })
}

function statePath (id, dir = runtimeDir()) {
  return path.join(dir, `${id}.json`)
}

/** A supervisor's last run (where it ran, where its logs are), kept after it stops. */
function lastRunPath (id, dir = runtimeDir()) {
  return path.join(dir, `${id}.last-run.json`)
}

/**
 * Writes the state file atomically (temp file + rename): a reader never sees half of
 * one, and a crash mid-write leaves the old one (docs/supervisor.md 4.6).
 */
function writeState (file, state) {
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 })
  fs.renameSync(tmp, file)
}

/**
 * Every state file in the runtime directory (live or stale). What a file says about
 * where things are is never trusted: the id comes from its name, and the endpoint and
 * the file's path are derived from the id and the directory.
 * @returns {object[]}
 */
function readStates (dir = runtimeDir()) {
  if (existingRuntimeDir(dir) === null) return []
  const out = []
  for (const name of fs.readdirSync(dir)) {
    const m = /^([0-9a-f]{12})\.json$/.exec(name)
    if (!m) continue
    const file = path.join(dir, name)
    try {
      const st = fs.lstatSync(file)
      if (!st.isFile() || (!IS_WINDOWS && st.uid !== process.getuid())) continue
      const state = JSON.parse(fs.readFileSync(file, 'utf8'))
      out.push({ ...state, id: m[1], endpoint: endpoint(m[1], dir), file })
    } catch {}
  }
  return out
}

/** Every supervisor's last run of this user (lastRunPath), newest first. */
function readLastRuns (dir = runtimeDir()) {
  if (existingRuntimeDir(dir) === null) return []
  const out = []
  for (const name of fs.readdirSync(dir)) {
    if (!/^[0-9a-f]{12}\.last-run\.json$/.test(name)) continue
    const file = path.join(dir, name)
    try {
      const st = fs.lstatSync(file)
      if (!st.isFile() || (!IS_WINDOWS && st.uid !== process.getuid())) continue
      out.push(JSON.parse(fs.readFileSync(file, 'utf8')))
    } catch {}
  }
  return out.sort((a, b) => String(b.startedAt).localeCompare(String(a.startedAt)))
}

/**
 * The supervisors of a folder (issue 28): the ones started in it, whatever their config
 * is called (httpsys.config.js, ecosystem.config.js, -c anything, a script), and the ones
 * running a config file that lives in it (started from elsewhere with -c, as a service
 * is). A control command run in the folder reaches them without -c.
 * @param {object[]} states readStates() entries
 * @param {string} cwd the folder
 * @returns {object[]}
 */
function folderStates (states, cwd) {
  const dir = path.resolve(cwd)
  return states.filter((s) => (typeof s.cwd === 'string' && path.resolve(s.cwd) === dir) ||
    (typeof s.config === 'string' && path.dirname(path.resolve(s.config)) === dir))
}

/**
 * Removes what a dead supervisor left: its state file and its socket, only when they
 * are what we make (a regular file and a socket of this user, named by the id).
 */
function removeStale (state, dir = runtimeDir()) {
  const expected = [[statePath(state.id, dir), (st) => st.isFile()]]
  if (!IS_WINDOWS) expected.push([endpoint(state.id, dir), (st) => st.isSocket()])
  for (const [file, kind] of expected) {
    try {
      const st = fs.lstatSync(file)
      if (kind(st) && (IS_WINDOWS || st.uid === process.getuid())) fs.unlinkSync(file)
    } catch {}
  }
}

/**
 * Removes the routers' worker sockets that crashed supervisors left in the runtime
 * directory (hub-<pid>.sock: supervisor.js workerSocketPath, the name the JS hub's had):
 * only sockets of this user whose pid no longer runs.
 * @returns {string[]} the files removed
 */
function removeDeadWorkerSockets (dir = runtimeDir(), alive) {
  if (IS_WINDOWS || existingRuntimeDir(dir) === null) return []
  return removeDeadSockets(dir, /^hub-(\d+)\.sock$/, alive ? { alive } : {})
}

module.exports = { folderStates, lastRunPath, readLastRuns, removeDeadWorkerSockets, runtimeDir, ensureRuntimeDir, existingRuntimeDir, identity, identityOfConfigFile, endpoint, statePath, writeState, readStates, removeStale }
