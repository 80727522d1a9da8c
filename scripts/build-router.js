'use strict'

// `npm run build:router`: builds the native router (router/, issue 25) for this
// machine into router/bin/httpsys-router, where HTTPSYS_ROUTER=native finds it
// (src/supervisor/router-binary.js). `npm install` does the same when Go is there
// (scripts/install-router.js); `npm pack` builds it for every platform
// (scripts/router-packages.js) and `npm run build:exe` for each executable.
// cgo off, as every target is built (issue 25): one static binary per GOOS/GOARCH,
// cross-built from any machine; -trimpath and -s keep build paths and the symbol table
// out of the binary. Binaries are never committed (router/.gitignore). README
// "Development" says which Go.

const { spawnSync } = require('node:child_process')
const path = require('node:path')

const ROUTER = path.join(__dirname, '..', 'router')
const GO_VERSION = '1.24' // router/go.mod's go line
// node's names for a platform and an architecture, as Go says them
const GOOS = { linux: 'linux', darwin: 'darwin', win32: 'windows' }
const GOARCH = { x64: 'amd64', arm64: 'arm64' }

/**
 * Builds the router for a platform.
 * @param {object} options
 * @param {string} options.out the binary to write (absolute)
 * @param {string} [options.platform=process.platform] node's name (linux, darwin, win32)
 * @param {string} [options.arch=process.arch] node's name (x64, arm64)
 * @param {'inherit'|'pipe'} [options.stdio='inherit'] go's output
 * @returns {{ ok: true } | { ok: false, noGo: boolean, message: string }}
 */
function buildRouter ({ out, platform = process.platform, arch = process.arch, stdio = 'inherit' }) {
  if (!GOOS[platform] || !GOARCH[arch]) {
    return { ok: false, noGo: false, message: `no router build for ${platform}-${arch}` }
  }
  const r = spawnSync('go', ['build', '-trimpath', '-ldflags=-s', '-o', out, './cmd/httpsys-router'], {
    cwd: ROUTER,
    stdio: ['ignore', stdio, stdio],
    encoding: 'utf8',
    env: { ...process.env, CGO_ENABLED: '0', GOOS: GOOS[platform], GOARCH: GOARCH[arch] }
  })
  if (r.error && r.error.code === 'ENOENT') {
    return { ok: false, noGo: true, message: `\`go\` is not on PATH. The router (router/) is Go: install Go ${GO_VERSION} or later (README "Development").` }
  }
  if (r.error) return { ok: false, noGo: false, message: r.error.message }
  if (r.status !== 0) {
    const said = stdio === 'pipe' ? `:\n${(r.stderr || '').trim()}` : ''
    return { ok: false, noGo: false, message: `go build for ${platform}-${arch} failed (${r.signal || `exit ${r.status}`})${said}` }
  }
  return { ok: true }
}

/** @returns {string} where a checkout's router for this machine goes */
function checkoutBinary (platform = process.platform) {
  return path.join(ROUTER, 'bin', platform === 'win32' ? 'httpsys-router.exe' : 'httpsys-router')
}

if (require.main === module) {
  const out = checkoutBinary()
  const r = buildRouter({ out })
  if (!r.ok) {
    console.error(`build:router: ${r.message}`)
    process.exit(1)
  }
  console.log(`build:router: ${path.relative(path.join(ROUTER, '..'), out)}`)
}

module.exports = { buildRouter, checkoutBinary, GO_VERSION, GOOS, GOARCH }
