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
const { socketPath, userTag } = require('../local-socket')

const IS_WINDOWS = process.platform === 'win32'

/** The per-user directory: HTTPSYS_RUNTIME_DIR, else XDG_RUNTIME_DIR/httpsys, else a private temp dir. */
function runtimeDir (env = process.env) {
  if (env.HTTPSYS_RUNTIME_DIR) return path.resolve(env.HTTPSYS_RUNTIME_DIR)
  if (IS_WINDOWS) return path.join(env.LOCALAPPDATA || os.tmpdir(), 'httpsys')
  if (env.XDG_RUNTIME_DIR) return path.join(env.XDG_RUNTIME_DIR, 'httpsys')
  return path.join(os.tmpdir(), `httpsys-${userTag()}`)
}

/**
 * Creates the runtime directory, private to this user; refuses one someone else owns
 * (a directory planted in /tmp by another user would let them read our tokens).
 * @returns {string}
 */
function ensureRuntimeDir (dir = runtimeDir()) {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  if (IS_WINDOWS) return dir
  const st = fs.lstatSync(dir)
  if (!st.isDirectory() || st.uid !== process.getuid()) {
    throw new codes.ERR_HTTPSYS_CONTROL_DENIED({ path: dir, reason: 'it is not a directory of this user' })
  }
  // our own default directories are made private; a directory the user chose keeps its
  // mode (the socket and the state file are 0600 in any case)
  if ((st.mode & 0o077) !== 0 && path.basename(dir).startsWith('httpsys')) fs.chmodSync(dir, 0o700)
  return dir
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

/**
 * Writes the state file atomically (temp file + rename): a reader never sees half of
 * one, and a crash mid-write leaves the old one (docs/supervisor.md 4.6).
 */
function writeState (file, state) {
  const tmp = `${file}.${process.pid}.tmp`
  fs.writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 })
  fs.renameSync(tmp, file)
}

/** @returns {object[]} every state file in the runtime directory (live or stale) */
function readStates (dir = runtimeDir()) {
  let names
  try {
    names = fs.readdirSync(dir)
  } catch {
    return []
  }
  const out = []
  for (const name of names) {
    if (!/^[0-9a-f]{12}\.json$/.test(name)) continue
    try {
      out.push({ ...JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')), file: path.join(dir, name) })
    } catch {}
  }
  return out
}

module.exports = { runtimeDir, ensureRuntimeDir, identity, identityOfConfigFile, endpoint, statePath, writeState, readStates }
