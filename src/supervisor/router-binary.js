'use strict'

// The one place that finds the native router's binary (router/, issue 25), as
// src/httpsys/loader.js finds the HTTP.SYS addon. Binaries are never committed: each
// way httpsys reaches a user brings its own.
//
// Candidates, in order:
//   1. HTTPSYS_ROUTER_PATH: when set, the only one. An explicit choice that is wrong is
//      said, never passed over for another binary;
//   2. a checkout: router/bin/httpsys-router, which `npm install` builds with Go
//      (scripts/install-router.js) and `npm run build:router` rebuilds;
//   3. an installed package: the platform's package (httpsys-router-<platform>-<arch>),
//      which npm installs from the main package's optionalDependencies, the way esbuild
//      ships its binary (scripts/router-packages.js writes them at `npm pack`);
//   4. inside the single executable: the copy it carries as a SEA asset, written to its
//      cache folder on first use (src/sea, docs/single-executable.md).
// A bundle (the executable) has no source tree or node_modules around it: 2 and 3 are
// tried only from one. A failure lists every attempt and the fix in one
// ERR_HTTPSYS_ROUTER_MISSING.

const fs = require('node:fs')
const Module = require('node:module')
const path = require('node:path')
const { codes } = require('../errors')
const sea = require('../sea')

const ENV = 'HTTPSYS_ROUTER_PATH'
const ROOT = path.join(__dirname, '..', '..') // src/supervisor/ -> the package root

// The platforms a package (and an executable) carries a router for: Go builds each with
// cgo off (scripts/router-packages.js), as node names them.
const PLATFORMS = Object.freeze(['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'])

/** @returns {string} the router's file name on that platform */
function fileName (platform = process.platform) {
  return platform === 'win32' ? 'httpsys-router.exe' : 'httpsys-router'
}

/** @returns {string} the npm package that carries the router for that platform */
function packageName (platform = process.platform, arch = process.arch) {
  return `httpsys-router-${platform}-${arch}`
}

/** @returns {string} the executable's SEA asset that holds the router */
function assetName (platform = process.platform, arch = process.arch) {
  return `httpsys-router-${platform}-${arch}${platform === 'win32' ? '.exe' : ''}`
}

/**
 * Finds the router binary.
 * @param {object} [options] (tests)
 * @param {object} [options.env=process.env]
 * @param {string} [options.platform=process.platform]
 * @param {string} [options.arch=process.arch]
 * @param {string} [options.root] the package root (default: this package's)
 * @param {boolean} [options.inSea] running from the single executable
 * @param {string|null} [options.bundleDir] set when running from a bundle
 * @param {() => string|null} [options.extract] writes the executable's copy out; its path
 * @returns {string} the binary's path
 * @throws {codes.ERR_HTTPSYS_ROUTER_MISSING} listing every attempt
 */
function findRouter (options = {}) {
  const env = options.env || process.env
  const platform = options.platform || process.platform
  const arch = options.arch || process.arch
  const root = options.root || ROOT
  const inSea = options.inSea !== undefined ? options.inSea : sea.isSea()
  const bundle = options.bundleDir !== undefined ? options.bundleDir : sea.bundleDir()
  const attempts = []
  const found = (file) => usable(file, platform, attempts)

  if (env[ENV]) {
    const file = path.resolve(env[ENV])
    if (found(file)) return file
    throw missing(attempts, { platform, arch, override: true })
  }

  if (!bundle) {
    const built = path.join(root, 'router', 'bin', fileName(platform))
    if (found(built)) return built

    const pkg = packageName(platform, arch)
    if (!PLATFORMS.includes(`${platform}-${arch}`)) {
      attempts.push({ path: pkg, error: `no package is built for ${platform}-${arch} (there are: ${PLATFORMS.join(', ')})` })
    } else {
      let dir = null
      try {
        // node's resolution from the package root: the node_modules npm put it in
        dir = path.dirname(Module.createRequire(path.join(root, 'package.json')).resolve(`${pkg}/package.json`))
      } catch {
        attempts.push({ path: pkg, error: 'not installed (an optional dependency of httpsys-cli)' })
      }
      if (dir !== null) {
        const file = path.join(dir, 'bin', fileName(platform))
        if (found(file)) return file
      }
    }
  }

  if (inSea) {
    const name = assetName(platform, arch)
    let file = null
    try {
      file = (options.extract || (() => sea.extract(name, fileName(platform))))()
      if (file === null) attempts.push({ path: name, error: 'this executable carries no router' })
    } catch (err) {
      attempts.push({ path: path.join(sea.cacheDir({ env }), fileName(platform)), error: `cannot write this executable's ${name} there: ${err.message.split('\n')[0]}` })
    }
    if (file !== null && found(file)) return file
  }

  throw missing(attempts, { platform, arch, inSea, bundle })
}

/** Whether the file is there and may be run; why not goes to attempts. */
function usable (file, platform, attempts) {
  try {
    fs.accessSync(file, platform === 'win32' ? fs.constants.F_OK : fs.constants.X_OK)
    if (fs.statSync(file).isFile()) return true
    attempts.push({ path: file, error: 'not a file' })
  } catch (err) {
    attempts.push({ path: file, error: err.code === 'ENOENT' ? 'not found' : err.code === 'EACCES' ? 'not executable' : err.message.split('\n')[0] })
  }
  return false
}

/** The error, with the fix that fits where httpsys runs from. */
function missing (attempts, { platform, arch, override, inSea, bundle }) {
  let fix
  if (override) fix = `Point ${ENV} at a built httpsys-router (in a checkout \`npm run build:router\` builds router/bin/httpsys-router), or unset it`
  else if (inSea) fix = `Use an executable built with its router (npm run build:exe), or set ${ENV} to a built httpsys-router`
  else if (bundle) fix = `Set ${ENV} to a built httpsys-router`
  else {
    fix = 'In a checkout: `npm run build:router` (Go 1.24 or later; `npm install` does it when Go is on PATH). ' +
      (PLATFORMS.includes(`${platform}-${arch}`)
        ? `Installed: reinstall httpsys-cli with its optional dependencies (not --omit=optional or --no-optional), so npm adds ${packageName(platform, arch)}. `
        : '') +
      `Or set ${ENV} to a built httpsys-router`
  }
  return new codes.ERR_HTTPSYS_ROUTER_MISSING({ attempts, fix })
}

module.exports = { findRouter, packageName, assetName, fileName, PLATFORMS, ENV }
