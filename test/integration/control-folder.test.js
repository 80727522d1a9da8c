'use strict'

// A supervisor started in a folder is that folder's, whatever its config is called
// (issue 28 items 2, 3, 6): pm2's ecosystem.config.js, from its documentation, starts
// unchanged with warnings only; every command in the folder reaches it, and the hint
// printed after -d is a command that works; `httpsys start <app>` starts that app (pm2's
// habit) and a word that is neither an app nor a file is an error, not a new supervisor;
// a second supervisor in the folder makes a changing command name each with its -c.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { cli, freePort, get, alive, APPS } = require('../fixtures/apps/harness')

const PM2 = path.join(__dirname, '..', 'fixtures', 'pm2')
let dir
let env
const pids = []

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-folder-'))
  for (const f of ['ecosystem.config.js', 'api.js', 'web.js']) fs.copyFileSync(path.join(PM2, f), path.join(dir, f))
  env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run'), ECOSYSTEM_PORT: String(await freePort()), ECOSYSTEM_WEB_PORT: String(await freePort()) }
})

afterAll(async () => {
  await cli(['stop', 'all', '--all-supervisors'], { env, cwd: dir })
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL')
  fs.rmSync(dir, { recursive: true, force: true })
})

const run = (...args) => cli(args, { env, cwd: dir })
const daemonPid = (stdout) => Number(/runs in the background \(pid (\d+)\)/.exec(stdout)[1])

test('pm2\'s ecosystem file, started in the background: warnings only, and every command here reaches it', async () => {
  const started = await run('start', 'ecosystem.config.js', '-d')
  expect(started.code).toBe(0)
  pids.push(daemonPid(started.stdout))
  // one line per ignored key, nothing else
  const lines = started.stderr.trimEnd().split('\n')
  expect(lines.length).toBeGreaterThanOrEqual(5)
  for (const line of lines) expect(line).toMatch(/^httpsys: warning: (deploy|apps\[\d\]\.\w+ \(app [\w-]+\)): /)
  expect(started.stderr).toContain('httpsys: warning: apps[0].exec_mode (app api-app): ignored: every instance takes requests from the app\'s one queue')
  // the hint, as printed, is what works here
  expect(started.stdout).toMatch(/; `httpsys ls`, `httpsys logs -f`, `httpsys stop all`; its log: /)
  const api = JSON.parse((await get(Number(env.ECOSYSTEM_PORT), '/')).body)
  expect(api).toMatchObject({ env: 'development', argv: ['--color'] })

  const ls = JSON.parse((await run('ls', '--json')).stdout)
  expect(ls.map((s) => s.config)).toEqual([path.join(dir, 'ecosystem.config.js')])
  const reload = await run('reload', 'api-app')
  expect(reload).toMatchObject({ code: 0, stderr: '' })
  expect(reload.stdout).toMatch(/^api-app \[ecosystem\.config\.js\]: reloaded in \d+ ms/)
  const show = await run('show', 'web')
  expect(show.code).toBe(0)
  const router = process.platform !== 'win32' ? 'the native router' : '(HTTP\\.SYS|the native router)'
  expect(show.stdout).toMatch(new RegExp(`^web \\[ecosystem\\.config\\.js\\]: ready, ${router}, http://\\+:\\d+/`))
  // its hint at --show-secrets is an option show has
  expect(show.stdout).toContain('"API_TOKEN":"*** (--show-secrets prints it)"')
  expect((await run('show', 'web', '--show-secrets')).stdout).toContain('"API_TOKEN":"tok-123"')
  const logs = await run('logs', 'web', '-n', '5', '--pretty')
  expect(logs.stdout).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: web#0 \| /m)
}, 60000)

test('`httpsys start <app>` starts the stopped app of this folder\'s supervisor; a word that is no app and no file is an error', async () => {
  expect((await run('stop', 'web')).stdout).toBe('web [ecosystem.config.js]: stopped\n')
  const start = await run('start', 'web')
  expect(start).toMatchObject({ code: 0, stdout: 'web [ecosystem.config.js]: started (1 instance ready)\n' })
  expect((await get(Number(env.ECOSYSTEM_WEB_PORT), '/')).status).toBe(200)
  expect((await run('start', 'web')).stdout).toMatch(/^web \[ecosystem\.config\.js\]: already running \(ready\); `httpsys reload web` replaces/)
  // api.js is here, but `api` is not an app: no new supervisor runs ./api.js
  const api = await run('start', 'api')
  expect(api.code).toBe(1)
  expect(api.stderr).toBe(`httpsys: The app script ${path.join(dir, 'api')} does not exist. No app named "api" runs in this folder ` +
    '(its supervisor runs: api-app, web). To run api.js, name the file: `httpsys start api.js`. (ERR_HTTPSYS_SCRIPT_NOT_FOUND)\n')
  expect(JSON.parse((await run('ls', '--json')).stdout)).toHaveLength(1)
}, 60000)

test('two supervisors in one folder: the hint carries -c, a changing command lists each -c, a named app still goes to its own', async () => {
  const port = await freePort()
  const script = path.join(APPS, 'pid-server.js')
  const second = await run('start', script, '-n', 'solo', '-u', `http://127.0.0.1:${port}/`, '-d')
  expect(second.code).toBe(0)
  pids.push(daemonPid(second.stdout))
  expect(second.stdout).toContain(`\`httpsys ls -c ${script}\`, \`httpsys logs -f -c ${script}\`, \`httpsys stop all -c ${script}\``)
  // the hint works as printed
  expect(JSON.parse((await run('ls', '--json', '-c', script)).stdout).map((s) => s.script)).toEqual([script])

  const stop = await run('stop', 'all')
  expect(stop.code).toBe(1)
  expect(stop.stderr).toMatch(new RegExp('^httpsys: 2 httpsys supervisors belong to this folder \\(.*\\): ecosystem\\.config\\.js \\(pid \\d+\\): -c ecosystem\\.config\\.js; ' +
    `${script.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(pid \\d+\\): -c ${script.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\. ` +
    'Name one with -c, as listed, or act on every one with --all-supervisors\\. \\(ERR_HTTPSYS_SUPERVISOR_AMBIGUOUS\\)\\n$'))
  // nothing was stopped
  expect((await get(port, '/')).status).toBe(200)
  expect((await run('reload', 'solo')).stdout).toMatch(/^solo \[.*pid-server\.js\]: reloaded/)

  const one = await run('stop', 'all', '-c', 'ecosystem.config.js')
  expect(one.stdout).toBe(`stopped the supervisor of ${path.join(dir, 'ecosystem.config.js')} (pid ${pids[0]})\n`)
  // one left: plain commands reach it again
  const last = await run('stop', 'all')
  expect(last.stdout).toBe(`stopped the supervisor of ${script} (pid ${pids[1]})\n`)
}, 60000)

test('a config with any name, started with -c from its folder: reload and stop all reach it without -c', async () => {
  const folder = path.join(dir, 'prod')
  fs.mkdirSync(folder)
  const port = await freePort()
  fs.writeFileSync(path.join(folder, 'prod.config.js'),
    `module.exports = { apps: [{ name: 'site', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/'] }] }\n`)
  const here = (...args) => cli(args, { env, cwd: folder })
  const started = await here('start', '-c', 'prod.config.js', '-d')
  expect(started.code).toBe(0)
  pids.push(daemonPid(started.stdout))
  expect(started.stdout).toContain('`httpsys ls`, `httpsys logs -f`, `httpsys stop all`')
  expect((await here('reload', 'site')).stdout).toMatch(/^site \[prod\.config\.js\]: reloaded in \d+ ms/)
  const stop = await here('stop', 'all')
  expect(stop).toMatchObject({ code: 0, stdout: `stopped the supervisor of ${path.join(folder, 'prod.config.js')} (pid ${daemonPid(started.stdout)})\n` })
}, 60000)
