'use strict'

// `npm install` in a checkout builds the native router for this machine (the prepare
// script, scripts/install-router.js), and is harmless where it cannot: silent without
// router/ (an installed package), one line without Go, never a failed install. Run on
// a copy of scripts/ and router/ in a temp directory: nothing is written into the
// checkout. `npm pack` itself is tested in test/exe (it builds five routers).

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
let dir

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-install-router-'))
  fs.mkdirSync(path.join(dir, 'scripts'))
  for (const f of ['install-router.js', 'build-router.js']) fs.copyFileSync(path.join(ROOT, 'scripts', f), path.join(dir, 'scripts', f))
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

function install (env = process.env) {
  return spawnSync(process.execPath, [path.join(dir, 'scripts', 'install-router.js')], { cwd: dir, env, encoding: 'utf8', timeout: 280000 })
}

function copyRouter () {
  fs.cpSync(path.join(ROOT, 'router'), path.join(dir, 'router'), { recursive: true, filter: (src) => !src.startsWith(path.join(ROOT, 'router', 'bin')) })
}

test('an installed package (no router/): nothing said, nothing done, exit 0', () => {
  const r = install()
  expect([r.status, r.stdout, r.stderr]).toEqual([0, '', ''])
  expect(fs.readdirSync(dir)).toEqual(['scripts'])
})

test('a checkout without Go on PATH: one line saying the router is not built and why; the install goes on', () => {
  copyRouter()
  const r = install({ ...process.env, PATH: '/nonexistent' })
  expect(r.status).toBe(0)
  expect(r.stderr).toBe('')
  expect(r.stdout).toMatch(/^httpsys: the native router is not built: `go` is not on PATH \(Go 1\.24 or later, README "Development"\); then `npm run build:router`\.\n$/)
  expect(fs.existsSync(path.join(dir, 'router', 'bin'))).toBe(false)
})

/** The first line the router answers to one control command; its stdin ends after it. */
function ask (bin, command) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, ['-log-level', 'silent'], { stdio: ['pipe', 'pipe', 'ignore'] })
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('no answer within 20 s')) }, 20000)
    let out = ''
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (d) => {
      out += d
      if (!out.includes('\n')) return
      clearTimeout(timer)
      // the end of its stdin ends the router (as the supervisor's end does)
      child.stdin.end()
      resolve(out.split('\n')[0])
    })
    child.on('error', reject)
    child.stdin.write(JSON.stringify(command) + '\n')
  })
}

test('a checkout with Go: the router for this machine in router/bin, which starts and answers its control channel', async () => {
  copyRouter()
  const r = install()
  expect(r.stderr).toBe('')
  expect(r.stdout).toBe(`httpsys: built the native router for ${process.platform}-${process.arch}: ${path.join('router', 'bin', 'httpsys-router')}\n`)
  expect(r.status).toBe(0)
  const bin = path.join(dir, 'router', 'bin', 'httpsys-router')
  expect(JSON.parse(await ask(bin, { id: 1, cmd: 'stats' }))).toMatchObject({ id: 1 })
}, 300000)

test('a checkout whose router does not build: go\'s error and one line; the install still goes on', () => {
  copyRouter()
  fs.appendFileSync(path.join(dir, 'router', 'cmd', 'httpsys-router', 'main.go'), '\nthis is not Go\n')
  const r = install()
  expect(r.status).toBe(0)
  expect(r.stdout).toMatch(/^httpsys: the native router is not built: go build for .* failed \(exit 1\):\n[^]*main\.go[^]*\n`npm run build:router` tries again\.\n$/)
}, 300000)
