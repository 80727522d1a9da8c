'use strict'

// The control commands against a hostile local user. Without XDG_RUNTIME_DIR the runtime
// directory sits in the shared temp directory, where another user can create it first
// and plant state files. Before, `httpsys ls` trusted them: it connected where they said
// and, for a dead pid, unlinked the endpoint they named, so a root `httpsys ls` deleted
// any file. Now a runtime directory that is not this user's private one is refused, and
// what a state file says about paths is never followed.
//
// The second user is created when the tests run as root; otherwise the tests that need
// one are skipped with a message.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const BIN = path.join(__dirname, '..', '..', 'bin', 'httpsys')
const INTRUDER = 'httpsys-intruder'

let base
beforeEach(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-hostile-'))
  // like /tmp: everyone may create entries, each keeps their own
  fs.chmodSync(base, 0o1777)
})
afterEach(() => fs.rmSync(base, { recursive: true, force: true }))

function httpsys (args, runtimeDir) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 15000, env: { ...process.env, HTTPSYS_RUNTIME_DIR: runtimeDir } })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

/** A victim file and a state file planted to name it, with a dead pid. */
function plant (dir, victim) {
  fs.writeFileSync(path.join(dir, 'abcdefabcdef.json'), JSON.stringify({ pid: 999999999, token: 'x', config: '/elsewhere/httpsys.config.js', apps: ['api'], endpoint: victim }))
}

function intruderUid () {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null
  let r = spawnSync('id', ['-u', INTRUDER], { encoding: 'utf8' })
  if (r.status !== 0) {
    spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', INTRUDER])
    r = spawnSync('id', ['-u', INTRUDER], { encoding: 'utf8' })
  }
  return r.status === 0 ? Number(r.stdout.trim()) : null
}

// a second local user is made only as root: otherwise the test is reported skipped
const INTRUDER_UID = intruderUid()
const asRoot = INTRUDER_UID === null ? test.skip : test

asRoot('a runtime directory another user made first is refused, and nothing it names is deleted (needs root: a second user)', () => {
  const uid = INTRUDER_UID
  const dir = path.join(base, 'run')
  const victim = path.join(base, 'victim.txt')
  fs.writeFileSync(victim, 'precious')
  // the intruder's directory, with a state file pointing at the victim
  const r = spawnSync(process.execPath, ['-e', `
    const fs = require('fs')
    fs.mkdirSync(${JSON.stringify(dir)}, { mode: 0o777 })
    fs.chmodSync(${JSON.stringify(dir)}, 0o777)
    fs.writeFileSync(${JSON.stringify(path.join(dir, 'abcdefabcdef.json'))}, JSON.stringify({ pid: 999999999, token: 'x', apps: ['api'], endpoint: ${JSON.stringify(victim)} }))
  `], { uid, gid: uid, encoding: 'utf8' })
  expect(r.status).toBe(0)
  for (const cmd of [['ls'], ['stop', 'all'], ['logs']]) {
    const out = httpsys(cmd, dir)
    expect(out.code).toBe(1)
    expect(out.stderr).toMatch(new RegExp(`control channel at ${dir.replace(/[/\\^$.*+?()[\]{}|-]/g, '\\$&')}: it belongs to uid ${uid}, not to this user.*ERR_HTTPSYS_CONTROL_DENIED`))
  }
  expect(fs.readFileSync(victim, 'utf8')).toBe('precious')
})

test('a runtime directory others may write is refused with the chmod that fixes it', () => {
  const dir = path.join(base, 'run')
  fs.mkdirSync(dir)
  fs.chmodSync(dir, 0o777)
  const victim = path.join(base, 'victim.txt')
  fs.writeFileSync(victim, 'precious')
  plant(dir, victim)
  const out = httpsys(['ls'], dir)
  expect(out.code).toBe(1)
  expect(out.stderr).toMatch(/others may use it \(mode 777\)\. Run `chmod 700 .*`\. \(ERR_HTTPSYS_CONTROL_DENIED\)/)
  expect(fs.existsSync(victim)).toBe(true)
})

test('in a private directory, a dead supervisor\'s state file is cleaned up, but the path it names is not touched', () => {
  const dir = path.join(base, 'run')
  fs.mkdirSync(dir, { mode: 0o700 })
  const victim = path.join(base, 'victim.txt')
  fs.writeFileSync(victim, 'precious')
  plant(dir, victim)
  // a state file that is a link to something else is not read either
  fs.symlinkSync(victim, path.join(dir, '0123456789ab.json'))
  const out = httpsys(['ls'], dir)
  expect(out.code).toBe(0)
  expect(out.stdout).toMatch(/no httpsys supervisor is running/)
  expect(fs.readFileSync(victim, 'utf8')).toBe('precious')
  expect(fs.existsSync(path.join(dir, 'abcdefabcdef.json'))).toBe(false)
  expect(fs.lstatSync(path.join(dir, '0123456789ab.json')).isSymbolicLink()).toBe(true)
})
