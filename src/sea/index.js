'use strict'

// The single executable (docs/single-executable.md): whether this process runs from
// it, the files it carries as SEA assets, and where those are written on first use.
// A file has to reach the disk when something other than this process's own bundle
// needs it: process.dlopen() opens the HTTP.SYS addon by path, and the user's own node
// runs the preload with --require <path>.
//
// A leaf module: it imports nothing of httpsys, so the queue's loader, the supervisor
// and the CLI may all use it. The executable's entry points are src/exe/.

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

/** Set by the supervisor on a worker it starts as the executable itself: act as node. */
const NODE_MODE_ENV = 'HTTPSYS_NODE_MODE'
/** Where extracted assets go instead of the per-user cache (tests, read-only homes). */
const CACHE_ENV = 'HTTPSYS_CACHE_DIR'
/** How a preload names the executable's bundled one: the package's own export name. */
const PRELOAD_ID = 'httpsys-cli/register'
const ASSETS = Object.freeze({
  PRELOAD: 'register.js',
  BUILD: 'build.json',
  addon: (platform = process.platform, arch = process.arch) => `httpsys_native-${platform}-${arch}.node`
})

let seaApi
let bundle = null
let buildInfo

function seaModule () {
  if (seaApi === undefined) {
    // node:sea exists from node 20.12; a user's older node simply is no executable
    try { seaApi = require('node:sea') } catch { seaApi = null }
  }
  return seaApi
}

/** @returns {boolean} this process runs from the httpsys single executable */
function isSea () {
  const sea = seaModule()
  return Boolean(sea && sea.isSea())
}

/**
 * What a bundle entry (src/exe/main.js, src/exe/preload.js) says about itself:
 * the folder its code is in. The source tree's relative paths (prebuilds/, bin/) mean
 * nothing there.
 * @param {string} dir
 */
function setBundleDir (dir) {
  bundle = dir
}

/** @returns {string|null} the folder of the running bundle; null when run from the source tree */
function bundleDir () {
  return bundle
}

/**
 * An asset of the executable, without a copy.
 * @param {string} name
 * @returns {Buffer|null} null outside the executable or when it does not carry that asset
 */
function asset (name) {
  if (!isSea()) return null
  try {
    return Buffer.from(seaModule().getRawAsset(name))
  } catch {
    return null
  }
}

/** @returns {{version: string, id: string, node: string, target: string}|null} what scripts/build-exe.js recorded */
function build () {
  if (buildInfo === undefined) {
    const raw = asset(ASSETS.BUILD)
    buildInfo = raw ? JSON.parse(raw.toString('utf8')) : null
  }
  return buildInfo
}

/**
 * The folder this executable's assets are written to: one per build, so two versions
 * (or two builds of one version) never share a file, in the user's cache.
 * @returns {string}
 */
function cacheDir ({ env = process.env, platform = process.platform, home = os.homedir() } = {}) {
  const info = build() || { version: 'dev', id: 'source' }
  let base = env[CACHE_ENV]
  if (!base) {
    if (platform === 'win32') base = path.join(env.LOCALAPPDATA || path.join(home, 'AppData', 'Local'), 'httpsys', 'cache')
    else if (platform === 'darwin') base = path.join(home, 'Library', 'Caches', 'httpsys')
    else base = path.join(env.XDG_CACHE_HOME || path.join(home, '.cache'), 'httpsys')
  }
  return path.join(base, `${info.version}-${info.id}`)
}

/**
 * Writes an asset to the cache folder unless the same bytes are there already, and
 * returns its path. Several workers may do this at once, and on Windows a loaded addon
 * cannot be replaced: so a file with the right bytes is never rewritten, and a new
 * one appears whole, by rename.
 * @param {string} name the asset
 * @param {string} [file] its file name there (default: name)
 * @returns {string|null} null when the executable has no such asset
 */
function extract (name, file = name) {
  const data = asset(name)
  if (data === null) return null
  const dir = cacheDir()
  const target = path.join(dir, file)
  if (sameBytes(target, data)) return target
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const tmp = `${target}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`
  fs.writeFileSync(tmp, data, { mode: 0o700 })
  try {
    fs.renameSync(tmp, target)
  } catch (err) {
    fs.rmSync(tmp, { force: true })
    // another process won the race with the same bytes (on Windows, and loaded)
    if (!sameBytes(target, data)) throw err
  }
  return target
}

/**
 * The preload as a file a real node can --require, with the addon next to it (the
 * preload's loader looks there, src/httpsys/loader.js).
 * @returns {string} the preload's path
 */
function extractPreload () {
  extract(ASSETS.addon(), 'httpsys_native.node')
  return extract(ASSETS.PRELOAD)
}

function sameBytes (file, data) {
  try {
    const st = fs.statSync(file)
    return st.size === data.length && fs.readFileSync(file).equals(data)
  } catch {
    return false
  }
}

module.exports = {
  NODE_MODE_ENV,
  CACHE_ENV,
  PRELOAD_ID,
  ASSETS,
  isSea,
  setBundleDir,
  bundleDir,
  asset,
  build,
  cacheDir,
  extract,
  extractPreload
}
