'use strict'

// `httpsys show <app>` and the pm2 words: what a user coming from pm2 types first.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-show-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  run = null
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })

test('show (describe): config with secrets masked, URLs, instances with their last exits, recent records', async () => {
  const port = await freePort()
  fs.writeFileSync(path.join(dir, 'httpsys.config.js'), `module.exports = { apps: [
    { name: 'api', script: ${JSON.stringify(path.join(APPS, 'pid-server.js'))}, urls: ['http://127.0.0.1:${port}/'], instances: 2, env: { API_TOKEN: 'tok-1', MODE: 'x', DB: 'postgres://u:pg-1@h/db' }, args: ['--api-key=ak-1'] }
  ] }\n`)
  run = start([], { env: env(), cwd: dir })
  await run.waitFor((r) => r.event === 'all-ready')
  await get(port, '/')
  const text = await cli(['show', 'api'], { env: env(), cwd: dir })
  expect(text.code).toBe(0)
  // (the hub backend is the native router)
  const router = 'the native router'
  expect(text.stdout).toMatch(new RegExp(`^api \\[httpsys\\.config\\.js\\]: ready, ${router}, http://127\\.0\\.0\\.1:${port}/, 0 waiting\\n`))
  expect(text.stdout).toMatch(/^inst +pid +state +uptime +restarts +cpu +memory +req\/s +p99 +served +last exit$/m)
  expect(text.stdout).toMatch(/^ {2}env: \{"API_TOKEN":"\*\*\* \(--show-secrets prints it\)","MODE":"x","DB":"postgres:\/\/u:\*\*\*@h\/db"\}$/m)
  expect(text.stdout).toMatch(/^ {2}args: \["--api-key=\*\*\*"\]$/m)
  expect(text.stdout).not.toMatch(/tok-1|pg-1|ak-1/)
  // pid-server's responses are not cacheable: the one GET above passed the cache by
  expect(text.stdout).toMatch(/^output cache: 0 hits, 1 misses \(0\.0% answered from memory\), 0 entries \(0B\), 0 evicted$/m)
  expect(text.stdout).toMatch(/^recent records:\n(.*\n)*.*#0 ready in \d+ ms$/m)
  const json = JSON.parse((await cli(['describe', 'api', '--json'], { env: env(), cwd: dir })).stdout)
  expect(json).toMatchObject({ name: 'api', state: 'ready', urls: [`http://127.0.0.1:${port}/`], backend: 'hub' })
  expect(json.instances).toHaveLength(2)
  expect(json.config.instances).toBe(2)
  expect(JSON.stringify(json)).not.toMatch(/tok-1|pg-1|ak-1/)
  expect((await cli(['show', 'nope'], { env: env(), cwd: dir })).stderr).toMatch(/ERR_HTTPSYS_APP_NOT_FOUND/)
})

test('pm2\'s words answer with ours; version and status exist', async () => {
  for (const [word, ours] of [['delete', 'httpsys stop <app>'], ['kill', 'httpsys stop all'], ['startup', 'httpsys service install']]) {
    const r = await cli([word, 'api'], { env: env(), cwd: dir })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`\`${word}\` is pm2's; here: ${ours}`)
  }
  expect((await cli(['version'])).stdout).toBe(`${require('../../package.json').version}\n`)
  expect((await cli(['status'], { env: env(), cwd: dir })).stdout).toMatch(/no httpsys supervisor is running/)
  expect((await cli(['strat', 'app.js'])).stderr).toMatch(/Did you mean start\?/)
})
