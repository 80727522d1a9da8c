'use strict'

// The one place that finds and loads the HTTP.SYS addon (httpsys_native.node).
//
// Candidates, in order:
//   1. HTTPSYS_NATIVE_PATH (an explicit override);
//   2. next to the executable, for a single executable build (httpsys.exe);
//   3. prebuilds/<platform>-<arch>/ (what `npm run build:win` writes and packages ship);
//   4. build/Release/ and build/Debug/ (node-gyp on Windows).
// A failure lists every attempt and the fix in one error. Nothing is loaded on other
// platforms: the addon is Windows-only, and Linux runs the hub.

const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../../errors')

const FILE = 'httpsys_native.node'
const ROOT = path.join(__dirname, '..', '..', '..')

let cached = null

/** @returns {string[]} the paths tried, in order */
function candidates ({ env = process.env, platform = process.platform, arch = process.arch, execPath = process.execPath } = {}) {
  const list = []
  if (env.HTTPSYS_NATIVE_PATH) list.push(path.resolve(env.HTTPSYS_NATIVE_PATH))
  list.push(path.join(path.dirname(execPath), `httpsys_native-${platform}-${arch}.node`))
  list.push(path.join(ROOT, 'prebuilds', `${platform}-${arch}`, FILE))
  list.push(path.join(ROOT, 'build', 'Release', FILE))
  list.push(path.join(ROOT, 'build', 'Debug', FILE))
  return list
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
  for (const file of candidates({ ...options, platform })) {
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
