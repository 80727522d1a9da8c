'use strict'

// Watch mode: a burst of file changes is one rolling reload that picks up the change; a
// change in node_modules or a dotfile is none; changes during a reload become exactly
// one follow-up reload.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, freePort, get, sleep, writeConfig, APPS } = require('../fixtures/apps/harness')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-watch-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

test('one reload per burst of changes, none for node_modules or dotfiles, one follow-up for changes during a reload', async () => {
  const port = await freePort()
  const src = path.join(dir, 'src')
  fs.mkdirSync(path.join(src, 'node_modules'), { recursive: true })
  const version = path.join(src, 'version.txt')
  fs.writeFileSync(version, 'v1')
  run = start(['-c', writeConfig(dir, {
    apps: [{
      name: 'dev',
      script: path.join(APPS, 'ready-app.js'),
      urls: [`http://127.0.0.1:${port}/`],
      wait_ready: true,
      watch: [src],
      watch_delay: '250ms',
      env: { VERSION_FILE: version, READY_DELAY: '600' }
    }]
  })], { env: { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') } })
  await run.waitFor((r) => r.event === 'ready')
  await sleep(300) // the watcher's initial scan
  const reloads = () => run.records.filter((r) => r.event === 'reload:start')

  // a save burst: 6 writes 60 ms apart (each inside watch_delay of the last)
  for (let i = 2; i <= 7; i++) {
    fs.writeFileSync(version, `v${i}`)
    await sleep(60)
  }
  await run.waitFor((r) => r.event === 'reload:done', { timeout: 10000 })
  expect(reloads()).toHaveLength(1)
  expect(reloads()[0]).toMatchObject({ app: 'dev', reason: 'watch' })
  expect(run.records.find((r) => r.event === 'watch')).toMatchObject({ app: 'dev', files: [expect.stringMatching(/version\.txt$/)] })
  expect(JSON.parse((await get(port, '/')).body).version).toBe('v7')

  // never watched
  fs.writeFileSync(path.join(src, 'node_modules', 'dep.js'), '1')
  fs.writeFileSync(path.join(src, '.env'), 'A=1')
  await sleep(600)
  expect(reloads()).toHaveLength(1)

  // changes while a reload runs (the new process takes 600 ms to be ready): one more
  fs.writeFileSync(version, 'v8')
  await run.waitFor((r) => r.event === 'reload:start', { count: 2 })
  fs.writeFileSync(version, 'v9')
  await sleep(350)
  fs.writeFileSync(version, 'v10')
  await run.waitFor((r) => r.event === 'reload:done', { count: 3, timeout: 15000 })
  await sleep(500)
  expect(reloads()).toHaveLength(3)
  expect(run.records.filter((r) => r.event === 'reload:queued')).toHaveLength(1)
  expect(JSON.parse((await get(port, '/')).body).version).toBe('v10')
  run.signal('SIGINT')
  expect((await run.exited).code).toBe(0)
}, 40000)
