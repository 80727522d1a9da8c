'use strict'

// `npm run test:router`: the checks of the Go router in router/ (issue 25): go vet,
// gofmt (any unformatted file fails the run), go test ./... and go test -race for the
// packages that share state between goroutines. `npm test` runs it
// between eslint and jest. README "Development" says which Go it needs.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const ROUTER = path.join(__dirname, '..', 'router')
// the router is built with cgo off for every target (issue 25), so it is tested that way
const env = { ...process.env, CGO_ENABLED: '0' }

function run (cmd, args, capture = false, more = {}) {
  const r = spawnSync(cmd, args, { cwd: ROUTER, env: { ...env, ...more }, encoding: 'utf8', stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'] })
  if (r.error && r.error.code === 'ENOENT') {
    console.error(`test:router: \`${cmd}\` is not on PATH. The router (router/) is Go: install Go 1.24 or later (README "Development").`)
    process.exit(1)
  }
  if (r.error) throw r.error
  if (r.status !== 0) process.exit(r.status === null ? 1 : r.status)
  return r.stdout
}

const goroot = run('go', ['env', 'GOROOT'], true).trim()
const bundled = path.join(goroot, 'bin', process.platform === 'win32' ? 'gofmt.exe' : 'gofmt')
const unformatted = run(fs.existsSync(bundled) ? bundled : 'gofmt', ['-l', '.'], true).trim()
if (unformatted !== '') {
  console.error(`test:router: not gofmt-formatted (run \`gofmt -w .\` in router/):\n${unformatted}`)
  process.exit(1)
}
run('go', ['vet', './...'])
// the Windows-only files (the worker pipe, process stats) compile and vet here too; their
// tests run under Wine (test/windows/run.sh) and on Windows
run('go', ['vet', './...'], false, { GOOS: 'windows', GOARCH: 'amd64' })
run('go', ['test', './...'])

// The router's concurrent packages under the race detector, which needs cgo (so a C
// compiler): where there is none, said and skipped, never failed.
const RACE = ['./internal/queue', './internal/attach', './internal/conn', './internal/hub', './internal/h2']
const cc = spawnSync(process.env.CC || 'gcc', ['--version'], { stdio: 'ignore' })
if (cc.error || cc.status !== 0) {
  console.error('test:router: no C compiler (gcc, or $CC): go test -race skipped')
} else {
  const r = spawnSync('go', ['test', '-race', ...RACE], { cwd: ROUTER, env: { ...env, CGO_ENABLED: '1' }, stdio: 'inherit' })
  if (r.status !== 0) process.exit(r.status === null ? 1 : r.status)
}
