'use strict'

// `httpsys ls`, `show` and `monit` in a real terminal (tmux, 120x32): what a person
// sees, colours included, and that monit quits on q and gives the terminal back. tmux
// is installed by .ci/run; on a machine without it this file says so and is skipped
// (in CI, a missing tmux fails instead).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { cli, freePort, get, alive, waitUntil, ROOT, APPS } = require('../fixtures/apps/harness')

const hasTmux = spawnSync('tmux', ['-V']).status === 0
if (!hasTmux && process.env.CI) throw new Error('tmux is required in CI (.ci/run installs it)')
const maybe = hasTmux ? describe : describe.skip
if (!hasTmux) console.warn('status-terminal.test.js skipped: tmux is not installed (apt-get install tmux)')

let dir
let daemonPid = null
let session = null
let traffic = null
const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })
// its own tmux server: never the user's
const tmux = (...args) => execFileSync('tmux', ['-L', `httpsys-test-${process.pid}`, ...args], { encoding: 'utf8' })

beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-term-')) })
afterAll(async () => {
  if (session) try { tmux('kill-server') } catch {}
  if (daemonPid !== null && alive(daemonPid)) {
    await cli(['stop', 'all'], { env: env(), cwd: dir })
    if (alive(daemonPid)) process.kill(daemonPid, 'SIGKILL')
  }
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Runs a command in a fresh tmux window; resolves with what the screen shows once `until` matches. */
async function screen (command, until, { timeout = 15000, escapes = false, height = 32 } = {}) {
  session = `s${Date.now()}`
  const shellEnv = Object.entries({ ...env(), PATH: process.env.PATH, TERM: 'xterm-256color' }).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')
  tmux('new-session', '-d', '-s', session, '-x', '120', '-y', String(height), `cd ${JSON.stringify(dir)} && env -u NO_COLOR ${shellEnv} ${command}; echo "[exit $?]"; sleep 30`)
  let text = ''
  const ok = await waitUntil(() => {
    text = tmux('capture-pane', '-p', ...(escapes ? ['-e'] : []), '-t', session)
    return until.test(text)
  }, timeout)
  if (!ok) throw new Error(`the screen never matched ${until}:\n${text}`)
  return text
}

maybe('in a terminal', () => {
  beforeAll(async () => {
    const port = await freePort()
    fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = { apps: [
      { name: 'api', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/api/'], instances: 2 },
      { name: 'web', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/'] }
    ] }\n`)
    const started = await cli(['start', '-d'], { env: env(), cwd: dir })
    expect(started.code).toBe(0)
    daemonPid = Number(/\(pid (\d+)\)/.exec(started.stdout)[1])
    for (let i = 0; i < 40; i++) expect((await get(port, '/api/x')).status).toBe(200)
    // keep some traffic going while the screens are read
    traffic = setInterval(() => { get(port, '/api/y').catch(() => {}) }, 20)
  }, 30000)

  afterAll(() => clearInterval(traffic))

  afterEach(() => {
    try { tmux('kill-session', '-t', session) } catch {}
  })

  const bin = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(ROOT, 'bin', 'httpsys'))}`

  test('ls: a table with every instance, coloured states, numbers and URLs', async () => {
    const text = await screen(`${bin} ls`, /\[exit 0\]/)
    expect(text).toMatch(/^app +inst +pid +state +uptime +restarts +cpu +memory +req\/s +p99 +in flight +queued +urls$/m)
    expect(text).toMatch(/^api +0 +\d+ +ready +\d+s +0 +[\d.]+% +[\d.]+M +[\d.]+ +[\d.]+ ms +\d+ +\d+ +http:\/\/127\.0\.0\.1:\d+\/api\/$/m)
    expect(text).toMatch(/^ +1 +\d+ +ready /m)
    expect(text).toMatch(/^web +0 +\d+ +ready /m)
    const coloured = await screen(`${bin} ls`, /\[exit 0\]/, { escapes: true })
    expect(coloured).toMatch(/\x1b\[32mready\x1b\[39m/) // eslint-disable-line no-control-regex
  })

  test('show: the app, its instances with their numbers, its config and records', async () => {
    const text = await screen(`${bin} show api`, /\[exit 0\]/, { height: 80 })
    const router = 'the native router'
    expect(text).toMatch(new RegExp(`^api \\[httpsys\\.config\\.js\\]: ready, ${router}, http://127\\.0\\.0\\.1:\\d+/api/, \\d+ waiting$`, 'm'))
    expect(text).toMatch(/^inst +pid +state +uptime +restarts +cpu +memory +req\/s +p99 +served +last exit$/m)
    expect(text).toMatch(/^0 +\d+ +ready +\d+s +0 +[\d.]+% +[\d.]+M +[\d.]+ +[\d.]+ ms +\d+ +-$/m)
    expect(text).toMatch(/^config:$/m)
    expect(text).toMatch(/^recent records:$/m)
  })

  test('monit: refreshes, shows rates, a sparkline and logs; q quits and gives the terminal back', async () => {
    const first = await screen(`${bin} monit`, /▁|▂|▃|▄|▅|▆|▇|█/)
    expect(first).toMatch(/httpsys monit .* q: quit/)
    expect(first).toMatch(/^api +0 +\d+ +ready /m)
    expect(first).toMatch(/^api +.*[▁▂▃▄▅▆▇█]+ +[\d.]+ req\/s +p99 [\d.]+ ms$/m)
    expect(first).toMatch(/logs/)
    expect(first).toMatch(/api#0 \| ready in \d+ ms/)
    // it refreshes: the clock moves
    const clock = /httpsys monit +(\S+)/.exec(first)[1]
    // (a second apart; a loaded machine may take longer to read the status and draw)
    const moved = () => {
      const m = /httpsys monit +(\S+)/.exec(tmux('capture-pane', '-p', '-t', session))
      return m !== null && m[1] !== clock
    }
    expect(await waitUntil(moved, 6000)).toBe(true)
    tmux('send-keys', '-t', session, 'q')
    expect(await waitUntil(() => /\[exit 0\]/.test(tmux('capture-pane', '-p', '-t', session)), 5000)).toBe(true)
    // the alternate screen is gone: the shell's screen holds no monit frame
    expect(tmux('capture-pane', '-p', '-t', session)).not.toMatch(/q: quit/)
  })
})
