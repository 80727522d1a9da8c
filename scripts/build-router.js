'use strict'

// `npm run build:router`: builds the native router (router/, issue 25) for this
// machine into router/bin/httpsys-router, where HTTPSYS_ROUTER=native finds it
// (src/supervisor/router-process.js). cgo off, as every target is built (issue 25);
// -trimpath and -s keep build paths and the symbol table out of the binary. Binaries
// are never committed (router/.gitignore). README "Development" says which Go.

const { spawnSync } = require('node:child_process')
const path = require('node:path')

const ROUTER = path.join(__dirname, '..', 'router')
const out = path.join('bin', process.platform === 'win32' ? 'httpsys-router.exe' : 'httpsys-router')

const r = spawnSync('go', ['build', '-trimpath', '-ldflags=-s', '-o', out, './cmd/httpsys-router'], {
  cwd: ROUTER,
  stdio: 'inherit',
  env: { ...process.env, CGO_ENABLED: '0' }
})
if (r.error && r.error.code === 'ENOENT') {
  console.error('build:router: `go` is not on PATH. The router (router/) is Go: install Go 1.24 or later (README "Development").')
  process.exit(1)
}
if (r.error) throw r.error
if (r.status !== 0) process.exit(r.status === null ? 1 : r.status)
console.log(`build:router: ${path.join('router', out)}`)
