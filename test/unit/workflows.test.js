'use strict'

// The GitHub workflows (.github/workflows/) cannot run here; they are kept correct by
// construction: actionlint (built from its Go module through the Go module proxy, into
// node_modules/.cache) checks them as GitHub would read them, and the tests below hold
// them to what they are for: CI runs .ci/run and, on hosted Windows, the real-HTTP.SYS
// run; a version tag publishes what .ci/run and build:exe make, with checksums; no
// third-party action.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const WORKFLOWS = path.join(ROOT, '.github', 'workflows')
const ACTIONLINT = 'v1.7.12'
const MODULE = 'github.com/rhysd/actionlint/cmd/actionlint'
const BIN_DIR = path.join(ROOT, 'node_modules', '.cache', 'actionlint', ACTIONLINT)
const EXE = process.platform === 'win32' ? '.exe' : ''

/** The go command: $GO, on the PATH, or where the official installer puts it. */
function findGo () {
  const candidates = [process.env.GO, 'go', process.env.GOROOT && path.join(process.env.GOROOT, 'bin', `go${EXE}`), `/usr/local/go/bin/go${EXE}`]
  for (const go of candidates.filter(Boolean)) {
    if (spawnSync(go, ['version'], { encoding: 'utf8' }).status === 0) return go
  }
  return null
}

/** actionlint at the pinned version, built once into node_modules/.cache. */
function actionlint () {
  const bin = path.join(BIN_DIR, `actionlint${EXE}`)
  if (fs.existsSync(bin)) return bin
  const go = findGo()
  if (go === null) {
    throw new Error('go is not installed: the workflow lint (actionlint) is built from its Go module. ' +
      'Install Go 1.25 or later (https://go.dev/dl/) and put it on the PATH (or set GO to it), then run npm test again; ' +
      `or put an actionlint ${ACTIONLINT} binary at ${bin}.`)
  }
  fs.mkdirSync(BIN_DIR, { recursive: true })
  const r = spawnSync(go, ['install', `${MODULE}@${ACTIONLINT}`], {
    encoding: 'utf8',
    env: { ...process.env, GOBIN: BIN_DIR, GOFLAGS: '-buildvcs=false' },
    timeout: 240000
  })
  if (r.status !== 0 || !fs.existsSync(bin)) {
    throw new Error(`go install ${MODULE}@${ACTIONLINT} failed (exit ${r.status}); it fetches through the Go module proxy ` +
      `(GOPROXY=${process.env.GOPROXY || 'https://proxy.golang.org,direct'}):\n${r.stderr || r.error}`)
  }
  return bin
}

const files = () => fs.readdirSync(WORKFLOWS).filter((f) => /\.ya?ml$/.test(f)).map((f) => path.join(WORKFLOWS, f))
const read = (name) => fs.readFileSync(path.join(WORKFLOWS, name), 'utf8')

test(`actionlint ${ACTIONLINT} finds nothing in .github/workflows`, () => {
  const bin = actionlint()
  // shellcheck and pyflakes off: the result must not depend on what else is installed
  const r = spawnSync(bin, ['-no-color', '-shellcheck=', '-pyflakes=', ...files()], { cwd: ROOT, encoding: 'utf8' })
  expect(r.stdout + r.stderr).toBe('')
  expect(r.status).toBe(0)
}, 300000)

test('the workflows use no third-party action: only actions/checkout, setup-node and setup-go, each pinned by major version', () => {
  for (const file of files()) {
    for (const [, uses] of fs.readFileSync(file, 'utf8').matchAll(/^\s*-?\s*uses:\s*(\S+)/gm)) {
      expect(`${path.basename(file)}: ${uses}`).toMatch(/: actions\/(checkout|setup-node|setup-go)@v\d+$/)
    }
  }
})

test('ci.yml: Linux runs .ci/run; hosted windows-2022 and windows-2025 run npm install and npm run test:windows-host', () => {
  const ci = read('ci.yml')
  expect(ci).toMatch(/^\s+run: bash \.ci\/run$/m)
  expect(ci).toMatch(/os: \[windows-2022, windows-2025\]/)
  expect(ci).toMatch(/runs-on: \$\{\{ matrix\.os \}\}/)
  const windows = ci.slice(ci.indexOf('\n  windows:'))
  expect(windows.indexOf('npm install')).toBeGreaterThan(-1)
  expect(windows.indexOf('run: npm run test:windows-host')).toBeGreaterThan(windows.indexOf('npm install'))
  // the node the single executables embed (scripts/build-exe.js)
  const pinned = /const NODE_VERSION = '([\d.]+)'/.exec(fs.readFileSync(path.join(ROOT, 'scripts', 'build-exe.js'), 'utf8'))[1]
  expect(new Set([...ci.matchAll(/node-version: (\S+)/g)].map((m) => m[1]))).toEqual(new Set([pinned])) // (and at least one)
  expect(require('../../package.json').scripts['test:windows-host']).toBe('node test/windows-host/run.js')
})

test('release.yml: a v* tag runs .ci/run, builds every executable and the package, checksums them and attaches them with gh', () => {
  const release = read('release.yml')
  expect(release).toMatch(/tags: \['v\*'\]/)
  expect(release).toMatch(/contents: write/)
  // the commands, as lines of the run scripts, in this order
  const lines = release.slice(release.indexOf('\njobs:')).split('\n').map((l) => l.trim())
  const order = ['bash .ci/run', 'npm run build:exe', 'npm pack', 'sha256sum', 'gh release']
  const at = order.map((command) => lines.findIndex((l) => l.startsWith(command)))
  expect(at.every((i) => i > -1)).toBe(true)
  expect([...at].sort((a, b) => a - b)).toEqual(at)
  // every executable build:exe makes is attached, and summed
  const buildExe = fs.readFileSync(path.join(ROOT, 'scripts', 'build-exe.js'), 'utf8')
  const targets = [...buildExe.matchAll(/^ {2}'([a-z0-9-]+)': \{ pkg:/gm)].map((m) => m[1])
  expect(targets.length).toBeGreaterThan(0)
  for (const t of targets) {
    const file = `httpsys-${t}${t.startsWith('win') ? '.exe' : ''}`
    // in the checksums and in the upload
    expect(release.split(file).length - 1).toBeGreaterThanOrEqual(2)
  }
})
