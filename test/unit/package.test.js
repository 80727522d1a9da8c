'use strict'

// What `npm install httpsys-cli` gives a user: the package name, the `httpsys` command,
// the files (the prebuilt Windows addon, and native/ + binding.gyp so a user with MSVC
// can rebuild it), nothing compiled at install time. The addon itself is built by the
// prepack script; the Wine suite packs and installs the real tarball.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const pkg = require('../../package.json')

test('the package is httpsys-cli and its command is httpsys', () => {
  expect(pkg.name).toBe('httpsys-cli')
  expect(pkg.bin).toEqual({ httpsys: 'bin/httpsys' })
  expect(pkg.exports['./register']).toBe('./src/register.js')
})

test('nothing compiles at install time; the addon is built before packing', () => {
  expect(pkg.gypfile).toBe(false)
  for (const hook of ['install', 'preinstall', 'postinstall']) expect(pkg.scripts[hook]).toBeUndefined()
  expect(pkg.scripts.prepack).toBe('node scripts/prepack.js')
  // a rebuild with MSVC (npx node-gyp rebuild) needs node-addon-api's headers
  expect(pkg.dependencies['node-addon-api']).toBeDefined()
})

test('npm pack ships the code, the prebuilt addon, and the addon\'s sources; no tests, no Go router sources yet', () => {
  const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', timeout: 60000 })
  expect(r.status).toBe(0)
  const files = JSON.parse(r.stdout)[0].files.map((f) => f.path)
  for (const file of ['bin/httpsys', 'src/register.js', 'src/cli/urlacl.js', 'src/queue/httpsys/index.js', 'binding.gyp', 'native/src/addon.cc', 'native/src/queue.h', 'README.md', 'package.json']) {
    expect(files).toContain(file)
  }
  const addon = 'prebuilds/win32-x64/httpsys_native.node'
  // built by `npm run build:win` (the prepack script); a checkout that has not built it has none
  if (fs.existsSync(path.join(ROOT, addon))) expect(files).toContain(addon)
  expect(files.filter((f) => /^(test|bench|scripts|router|\.ci)\//.test(f))).toEqual([])
})

test('the MSVC build (binding.gyp) compiles every addon source the mingw-w64 build does', () => {
  // scripts/build-win.sh takes native/src/*.cc; node-gyp brings its own delay-load hook
  const gyp = fs.readFileSync(path.join(ROOT, 'binding.gyp'), 'utf8')
  const listed = [...gyp.matchAll(/'native\/src\/([\w-]+\.cc)'/g)].map((m) => m[1]).sort()
  const sources = fs.readdirSync(path.join(ROOT, 'native', 'src')).filter((f) => f.endsWith('.cc') && f !== 'delay-load-hook.cc').sort()
  expect(listed).toEqual(sources)
})
