'use strict'

// Which node runs an app's workers, and the command that starts one
// (docs/single-executable.md 3). An app's `node` key (or `start --node`):
//   absent   from the source tree (npm install): the node running httpsys, as always.
//            From the single executable: `node` on the PATH when it is node >= 20,
//            else the node inside the executable;
//   'self'   the node running httpsys (inside the executable: the executable itself,
//            started in node mode);
//   a path   that node (validated by src/config: it exists).
// A worker on a real node gets the preload as a file (from the source tree, or written
// out of the executable); a worker that is the executable gets it from its own bundle.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../errors')
const sea = require('./index')

const MIN_MAJOR = 20
const VERSION_TIMEOUT_MS = 10000

// a node binary's version, by path: asked once per process (it costs a process start)
const versions = new Map()
// auto resolution, by PATH value
const found = new Map()

/**
 * @param {string} file a node binary
 * @returns {{version?: string, error?: string}}
 */
function versionOf (file) {
  if (!versions.has(file)) {
    const r = spawnSync(file, ['-p', 'process.versions.node'], {
      encoding: 'utf8', timeout: VERSION_TIMEOUT_MS, windowsHide: true, env: { ...process.env, [sea.NODE_MODE_ENV]: '' }
    })
    const version = String(r.stdout || '').trim()
    if (r.error) versions.set(file, { error: r.error.code || r.error.message })
    else if (r.status !== 0 || !/^\d+\.\d+\.\d+/.test(version)) versions.set(file, { error: `exited with ${r.status}${r.stderr ? `: ${r.stderr.trim().split('\n')[0]}` : ''}` })
    else versions.set(file, { version })
  }
  return versions.get(file)
}

function tooOld (version) {
  return Number(version.split('.')[0]) < MIN_MAJOR
}

/**
 * The first file called `name` (`name.exe` on Windows) on a PATH that we may execute.
 * @returns {string|null}
 */
function onPath (name = 'node', pathValue = process.env.PATH || process.env.Path || '', platform = process.platform) {
  const exe = platform === 'win32' && !/\.exe$/i.test(name) ? `${name}.exe` : name
  for (const dir of pathValue.split(path.delimiter)) {
    if (!dir) continue
    const file = path.join(dir, exe)
    try {
      if (!fs.statSync(file).isFile()) continue
      if (platform !== 'win32') fs.accessSync(file, fs.constants.X_OK)
      return file
    } catch {}
  }
  return null
}

/**
 * @param {string|undefined} node the app's `node` key
 * @param {object} [env] the worker's environment (its PATH is searched)
 * @returns {{path: string, self: boolean, version: string, why: string}}
 * @throws {codes.ERR_HTTPSYS_NODE_UNUSABLE} a configured node that does not run or is too old
 */
function resolveNode (node, env = process.env) {
  const self = (why) => ({ path: process.execPath, self: true, version: process.versions.node, why })
  if (node === 'self') return self('node: "self"')
  if (node) {
    const v = versionOf(node)
    if (v.error) throw new codes.ERR_HTTPSYS_NODE_UNUSABLE({ node, reason: `it does not run (${v.error})` })
    if (tooOld(v.version)) throw new codes.ERR_HTTPSYS_NODE_UNUSABLE({ node, reason: `it is v${v.version}; httpsys needs node ${MIN_MAJOR} or later` })
    return { path: node, self: false, version: v.version, why: 'node: configured' }
  }
  if (!sea.isSea()) return self('the node running httpsys')
  const pathValue = env.PATH || env.Path || ''
  if (!found.has(pathValue)) {
    const file = onPath('node', pathValue)
    let choice
    if (file === null) choice = self('no node on the PATH')
    else {
      const v = versionOf(file)
      if (v.error) choice = self(`${file} on the PATH does not run (${v.error})`)
      else if (tooOld(v.version)) choice = self(`${file} on the PATH is v${v.version}, older than ${MIN_MAJOR}`)
      else choice = { path: file, self: false, version: v.version, why: 'found on the PATH' }
    }
    found.set(pathValue, choice)
  }
  return found.get(pathValue)
}

/**
 * The command that starts a worker.
 * @param {object} app a validated app (node, node_args)
 * @param {string[]} argv [...node_args, '--require', preload, script, ...args]
 * @param {object} env the worker's environment
 * @returns {{file: string, args: string[], env: object, node: object}}
 */
function workerCommand (app, argv, env) {
  const node = resolveNode(app.node, env)
  if (!sea.isSea()) return { file: node.path, args: argv, env, node }
  const n = (app.node_args || []).length
  const args = argv.slice()
  if (!node.self) {
    // the user's node: the preload written out of the executable
    if (args[n] === '--require') args[n + 1] = sea.extractPreload()
    return { file: node.path, args, env: without({ ...env }, sea.NODE_MODE_ENV), node }
  }
  // the executable as node: it reads no node options from its command line, so the
  // app's node_args go where every node reads them
  if (args[n] === '--require') args[n + 1] = sea.PRELOAD_ID
  const options = [env.NODE_OPTIONS, ...app.node_args.map(quoteOption)].filter(Boolean).join(' ')
  const childEnv = { ...env, [sea.NODE_MODE_ENV]: '1' }
  if (options) childEnv.NODE_OPTIONS = options
  return { file: node.path, args: args.slice(n), env: childEnv, node }
}

// spawn() passes an undefined value on as the text "undefined"
function without (env, key) {
  delete env[key]
  return env
}

// NODE_OPTIONS splits on spaces; a double-quoted one stays whole
function quoteOption (arg) {
  return /[\s"\\]/.test(arg) ? `"${arg.replace(/["\\]/g, '\\$&')}"` : arg
}

module.exports = { resolveNode, workerCommand, onPath, MIN_MAJOR }
