'use strict'

// `httpsys ls` and `monit` in an 80-column terminal (tmux, 80x32), as most terminals
// open: the tables fit instead of wrapping (issue 28: about 150 columns wrapped at 80).
// `capture-pane -J` joins what the terminal wrapped, so a wrapped line shows as one
// longer than 80. tmux is installed by .ci/run; without it this file is skipped.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { cli, freePort, get, alive, waitUntil, ROOT, APPS } = require('../fixtures/apps/harness')

const hasTmux = spawnSync('tmux', ['-V']).status === 0
if (!hasTmux && process.env.CI) throw new Error('tmux is required in CI (.ci/run installs it)')
const maybe = hasTmux ? describe : describe.skip

let dir
let daemonPid = null
let session = null
const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })
const tmux = (...args) => execFileSync('tmux', ['-L', `httpsys-narrow-${process.pid}`, ...args], { encoding: 'utf8' })
const bin = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(ROOT, 'bin', 'httpsys'))}`

beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-narrow-')) })
afterAll(async () => {
  if (session) try { tmux('kill-server') } catch {}
  if (daemonPid !== null && alive(daemonPid)) {
    await cli(['stop', 'all'], { env: env(), cwd: dir })
    if (alive(daemonPid)) process.kill(daemonPid, 'SIGKILL')
  }
  fs.rmSync(dir, { recursive: true, force: true })
})

/** A command in a fresh 80-column tmux window; the screen (wrapped lines joined) once `until` matches. */
async function screen (command, until) {
  session = `n${Date.now()}`
  const shellEnv = Object.entries({ ...env(), PATH: process.env.PATH, TERM: 'xterm-256color' }).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')
  tmux('new-session', '-d', '-s', session, '-x', '80', '-y', '32', `cd ${JSON.stringify(dir)} && env -u NO_COLOR ${shellEnv} ${command}; echo "[exit $?]"; sleep 30`)
  let text = ''
  const ok = await waitUntil(() => {
    text = tmux('capture-pane', '-p', '-J', '-t', session)
    return until.test(text)
  }, 15000)
  if (!ok) throw new Error(`the screen never matched ${until}:\n${text}`)
  return text
}

maybe('in an 80-column terminal', () => {
  beforeAll(async () => {
    const port = await freePort()
    fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = { apps: [
      { name: 'api-gateway', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/api/v1/'], instances: 2 },
      { name: 'web', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/'] }
    ] }\n`)
    const started = await cli(['start', '-d'], { env: env(), cwd: dir })
    expect(started.code).toBe(0)
    daemonPid = Number(/\(pid (\d+)\)/.exec(started.stdout)[1])
    for (let i = 0; i < 20; i++) expect((await get(port, '/api/v1/x')).status).toBe(200)
  }, 30000)

  afterEach(() => {
    try { tmux('kill-session', '-t', session) } catch {}
  })

  test('ls: every line fits, each instance on one row with its state, the URLs below', async () => {
    const text = await screen(`${bin} ls`, /\[exit 0\]/)
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(80)
    expect(text).toMatch(/^app +# +pid +state +up +↺ +cpu +mem +req\/s +p99 +(busy +)?wait$/m)
    expect(text).toMatch(/^api-gateway +0 +\d+ +ready +\d+s +0 +[\d.]+% +[\d.]+M /m)
    expect(text).toMatch(/^ +1 +\d+ +ready /m)
    expect(text).toMatch(/^web +0 +\d+ +ready /m)
    expect(text).toMatch(/^urls: api-gateway +http:\/\/127\.0\.0\.1:\d+\/api\/v1\/$/m)
  })

  test('monit: the table\'s columns that fit, nothing cut at the edge; q quits', async () => {
    const text = await screen(`${bin} monit`, /^api-gateway +0 +\d+ +ready /m)
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(80)
    expect(text).toMatch(/^app +# +pid +state +up +↺ +cpu +mem +req\/s +p99 +(busy +)?wait$/m)
    tmux('send-keys', '-t', session, 'q')
    expect(await waitUntil(() => /\[exit 0\]/.test(tmux('capture-pane', '-p', '-t', session)), 5000)).toBe(true)
  })
})
