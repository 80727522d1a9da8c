'use strict'

// `npm pack` / `npm publish` run this first (the prepack script): the package ships the
// Windows addon prebuilt, so a Windows user's `npm install` compiles nothing. It builds
// prebuilds/win32-x64/httpsys_native.node with mingw-w64 (scripts/build-win.sh). Without
// the cross compiler, an existing build that is newer than every native source is
// used as it is; otherwise packing stops and says what to install.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..')
const ADDON = path.join(ROOT, 'prebuilds', 'win32-x64', 'httpsys_native.node')

function newestSource () {
  const dir = path.join(ROOT, 'native', 'src')
  return Math.max(...fs.readdirSync(dir).map((f) => fs.statSync(path.join(dir, f)).mtimeMs))
}

const built = spawnSync('bash', [path.join(ROOT, 'scripts', 'build-win.sh')], { cwd: ROOT, stdio: 'inherit' })
if (built.status === 0) process.exit(0)

if (fs.existsSync(ADDON) && fs.statSync(ADDON).mtimeMs >= newestSource()) {
  console.error(`prepack: the mingw-w64 build failed; packing the existing ${path.relative(ROOT, ADDON)}, which is newer than native/src`)
  process.exit(0)
}
console.error('prepack: the package must ship the Windows addon, and it could not be built. ' +
  'Install the cross compiler (apt-get install g++-mingw-w64-x86-64 mingw-w64-tools) and run `npm pack` again.')
process.exit(1)
