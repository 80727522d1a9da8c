'use strict'

// `npm pack` / `npm publish` run this first (the prepack script). The package ships
// everything built, so a user's `npm install` compiles nothing:
//   1. the Windows addon, prebuilds/win32-x64/httpsys_native.node, built with mingw-w64
//      (scripts/build-win.sh). Without the cross compiler, an existing build that is
//      newer than every native source is used as it is; otherwise packing stops and
//      says what to install;
//   2. the native router for every platform, one optional package each
//      (scripts/router-packages.js: build/npm/, and package.json's
//      optionalDependencies, without the prepare script, until postpack). Without
//      Go, packing stops.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const routerPackages = require('./router-packages')

const ROOT = path.join(__dirname, '..')
const ADDON = path.join(ROOT, 'prebuilds', 'win32-x64', 'httpsys_native.node')

function newestSource () {
  const dir = path.join(ROOT, 'native', 'src')
  return Math.max(...fs.readdirSync(dir).map((f) => fs.statSync(path.join(dir, f)).mtimeMs))
}

/** @returns {boolean} whether the addon is there to pack */
function addon () {
  const built = spawnSync('bash', [path.join(ROOT, 'scripts', 'build-win.sh')], { cwd: ROOT, stdio: 'inherit' })
  if (built.status === 0) return true
  if (fs.existsSync(ADDON) && fs.statSync(ADDON).mtimeMs >= newestSource()) {
    console.error(`prepack: the mingw-w64 build failed; packing the existing ${path.relative(ROOT, ADDON)}, which is newer than native/src`)
    return true
  }
  console.error('prepack: the package must ship the Windows addon, and it could not be built. ' +
    'Install the cross compiler (apt-get install g++-mingw-w64-x86-64 mingw-w64-tools) and run `npm pack` again.')
  return false
}

if (!addon()) process.exit(1)
try {
  const tarballs = routerPackages.build()
  // last: a prepack that fails leaves package.json as it was
  routerPackages.forPacking()
  console.error(`prepack: the router's platform packages: ${tarballs.map((f) => path.relative(ROOT, f)).join(', ')}`)
} catch (err) {
  console.error(`prepack: the package must name a router for every platform, and one could not be built: ${err.message}`)
  process.exit(1)
}
