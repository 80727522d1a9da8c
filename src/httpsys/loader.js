'use strict'

// The one place that finds and loads the HTTP.SYS addon (httpsys_native.node).
//
// Candidates, in order:
//   1. HTTPSYS_NATIVE_PATH (an explicit override);
//   2. inside the single executable: the copy it carries as a SEA asset, written to
//      its cache folder on first use (src/sea, docs/single-executable.md);
//   3. next to the executable, for a single executable build (httpsys.exe);
//   4. next to the preload bundle the single executable wrote out, when the user's own
//      node runs it (the executable writes the addon there too);
//   5. prebuilds/<platform>-<arch>/ (what `npm run build:win` writes and packages ship);
//   6. build/Release/ and build/Debug/ (node-gyp on Windows).
// A bundle (2, 4) has no source tree around it: 5 and 6 are tried only from one.
// A failure lists every attempt and the fix in one error. Nothing is loaded on other
// platforms: the addon is Windows-only, and Linux runs the hub.

const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../errors')
const sea = require('../sea')

const FILE = 'httpsys_native.node'
const ROOT = path.join(__dirname, '..', '..') // src/httpsys/ -> the package root

let cached = null

/** @returns {string[]} the paths tried, in order */
function candidates ({ env = process.env, platform = process.platform, arch = process.arch, execPath = process.execPath, inSea = sea.isSea(), bundleDir = sea.bundleDir() } = {}) {
  const list = []
  if (env.HTTPSYS_NATIVE_PATH) list.push(path.resolve(env.HTTPSYS_NATIVE_PATH))
  if (inSea) list.push(seaCopy(env))
  list.push(path.join(path.dirname(execPath), `httpsys_native-${platform}-${arch}.node`))
  if (bundleDir && !inSea) list.push(path.join(bundleDir, FILE))
  if (bundleDir) return list
  list.push(path.join(ROOT, 'prebuilds', `${platform}-${arch}`, FILE))
  list.push(path.join(ROOT, 'build', 'Release', FILE))
  list.push(path.join(ROOT, 'build', 'Debug', FILE))
  return list
}

/** Where the executable's own copy of the addon is written (src/sea extract()). */
function seaCopy (env) {
  return path.join(sea.cacheDir({ env }), FILE)
}

/**
 * Loads the addon once per process.
 * @param {object} [options]
 * @param {string} [options.platform=process.platform]
 * @param {(file: string) => object} [options.dlopen] how a file is loaded (tests)
 * @returns {object} the addon
 * @throws {codes.ERR_HTTPSYS_NATIVE_UNAVAILABLE}
 */
function load (options = {}) {
  if (cached !== null && !options.dlopen) return cached
  const platform = options.platform || process.platform
  if (platform !== 'win32') {
    throw new codes.ERR_HTTPSYS_NATIVE_UNAVAILABLE({
      reason: `HTTP.SYS exists only on Windows, this is ${platform}`,
      attempts: []
    })
  }
  const dlopen = options.dlopen || openAddon
  const attempts = []
  const inSea = options.inSea !== undefined ? options.inSea : sea.isSea()
  const copy = inSea ? seaCopy(options.env || process.env) : null
  for (const file of candidates({ ...options, platform, inSea })) {
    if (file === copy && !writeSeaCopy(file, options, attempts)) continue
    if (!fs.existsSync(file)) {
      attempts.push({ path: file, error: 'not found' })
      continue
    }
    try {
      const addon = dlopen(file)
      if (!options.dlopen) cached = addon
      return addon
    } catch (err) {
      attempts.push({ path: file, error: err.message.split('\n')[0] })
    }
  }
  throw new codes.ERR_HTTPSYS_NATIVE_UNAVAILABLE({ attempts })
}

/**
 * Writes the executable's addon asset to its cache path (a file already there with the
 * same bytes is kept: Windows cannot replace a loaded one). The attempt is reported when
 * the executable carries none or the folder cannot be written.
 */
function writeSeaCopy (file, options, attempts) {
  const name = sea.ASSETS.addon(options.platform || process.platform, options.arch || process.arch)
  try {
    if (sea.extract(name, FILE) !== null) return true
    attempts.push({ path: file, error: `this executable carries no ${name}` })
  } catch (err) {
    attempts.push({ path: file, error: `cannot write this executable's ${name} there: ${err.message.split('\n')[0]}` })
  }
  return false
}

/** @returns {boolean} whether load() would succeed (never throws) */
function isAvailable (options) {
  try {
    load(options)
    return true
  } catch {
    return false
  }
}

// process.dlopen rather than require(): a single executable build cannot require()
// a .node file, and this keeps one way of loading for every case.
function openAddon (file) {
  const mod = { exports: {} }
  process.dlopen(mod, file)
  return mod.exports
}

module.exports = { load, isAvailable, candidates, FILE }
