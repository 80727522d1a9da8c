'use strict'

// Where HTTPSYS_ROUTER=native finds the router binary (src/supervisor/router-binary.js):
// the override, a checkout's router/bin, the platform's npm package, the single
// executable's copy; and one error listing every place when there is none.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { findRouter, packageName } = require('../../../src/supervisor/router-binary')

let root
beforeEach(() => { root = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-router-bin-')) })
afterEach(() => fs.rmSync(root, { recursive: true, force: true }))

function place (rel, mode = 0o755) {
  const file = path.join(root, rel)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, '#!/bin/sh\n', { mode })
  return file
}

function platformPackage (platform = 'linux', arch = 'x64') {
  const dir = path.join(root, 'node_modules', packageName(platform, arch))
  place(path.join('node_modules', packageName(platform, arch), 'package.json'), 0o644)
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: packageName(platform, arch), version: '0.1.0', os: [platform], cpu: [arch] }))
  return place(path.join('node_modules', packageName(platform, arch), 'bin', platform === 'win32' ? 'httpsys-router.exe' : 'httpsys-router'))
}

const find = (o = {}) => findRouter({ env: {}, platform: 'linux', arch: 'x64', root, inSea: false, bundleDir: null, ...o })

test('a checkout: router/bin/httpsys-router, which npm install builds, comes before an installed platform package', () => {
  const pkg = platformPackage()
  expect(find()).toBe(pkg)
  const built = place('router/bin/httpsys-router')
  expect(find()).toBe(built)
})

test('an installed package: the platform\'s optional package, by os and cpu (win32: the .exe)', () => {
  const linux = platformPackage()
  const win = platformPackage('win32', 'x64')
  const mac = platformPackage('darwin', 'arm64')
  expect(find()).toBe(linux)
  expect(find({ platform: 'win32' })).toBe(win)
  expect(find({ platform: 'darwin', arch: 'arm64' })).toBe(mac)
})

test('HTTPSYS_ROUTER_PATH is the only place looked in when set: a wrong one is said, not passed over', () => {
  place('router/bin/httpsys-router')
  const own = place('elsewhere/my-router')
  expect(find({ env: { HTTPSYS_ROUTER_PATH: own } })).toBe(own)
  const wrong = path.join(root, 'no-such-router')
  expect(() => find({ env: { HTTPSYS_ROUTER_PATH: wrong } })).toThrow(expect.objectContaining({
    code: 'ERR_HTTPSYS_ROUTER_MISSING',
    attempts: [{ path: wrong, error: 'not found' }],
    message: expect.stringMatching(/no-such-router: not found\. Point HTTPSYS_ROUTER_PATH at a built httpsys-router \(in a checkout `npm run build:router` builds router\/bin\/httpsys-router\), or unset it\.$/)
  }))
})

test('none anywhere: one ERR_HTTPSYS_ROUTER_MISSING lists each place and why, with the fix (build, reinstall with optional dependencies, the override)', () => {
  const err = (() => { try { find() } catch (e) { return e } })()
  expect(err.code).toBe('ERR_HTTPSYS_ROUTER_MISSING')
  expect(err.attempts).toEqual([
    { path: path.join(root, 'router', 'bin', 'httpsys-router'), error: 'not found' },
    { path: 'httpsys-router-linux-x64', error: 'not installed (an optional dependency of httpsys-cli)' }
  ])
  expect(err.message).toContain(`Tried: ${path.join(root, 'router', 'bin', 'httpsys-router')}: not found; httpsys-router-linux-x64: not installed`)
  expect(err.message).toMatch(/npm run build:router.*Go 1\.24.*--omit=optional.*httpsys-router-linux-x64.*HTTPSYS_ROUTER_PATH/)
  expect(err.message).not.toMatch(/HTTPSYS_ROUTER=hub/) // the JS hub was removed (issue 25)
})

test('a binary that may not be run is named as such; a platform no package is built for says which are', () => {
  place('router/bin/httpsys-router', 0o644)
  expect(() => find()).toThrow(expect.objectContaining({
    attempts: expect.arrayContaining([{ path: path.join(root, 'router', 'bin', 'httpsys-router'), error: 'not executable' }])
  }))
  expect(() => find({ arch: 'ia32' })).toThrow(expect.objectContaining({
    message: expect.stringContaining('httpsys-router-linux-ia32: no package is built for linux-ia32 (there are: linux-x64, linux-arm64, darwin-x64, darwin-arm64, win32-x64)')
  }))
})

test('the single executable: its own copy, written out on first use; no source tree or node_modules is looked in', () => {
  place('router/bin/httpsys-router')
  const copy = place('cache/httpsys-router')
  expect(find({ inSea: true, bundleDir: root, extract: () => copy })).toBe(copy)
  expect(() => find({ inSea: true, bundleDir: root, extract: () => null })).toThrow(expect.objectContaining({
    attempts: [{ path: 'httpsys-router-linux-x64', error: 'this executable carries no router' }],
    message: expect.stringMatching(/Use an executable built with its router \(npm run build:exe\)/)
  }))
})
