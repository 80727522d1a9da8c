'use strict'

// What an app starts must not outlive it in the ways a stop cannot see: the supervisor
// killed outright (SIGKILL, OOM killer) leaves no app child running; a crash leaves no
// detached (setsid) child behind; and the preload leaves an app's own fork() children
// alone, so they keep talking to their parent.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, freePort, get, alive, waitUntil } = require('../fixtures/apps/harness')

let run
let dir
const extra = [] // pids the tests themselves must not leave behind
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-orphans-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  run = null
  for (const pid of extra.splice(0)) {
    try { process.kill(pid, 'SIGKILL') } catch {}
  }
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })

function app (name, source) {
  const file = path.join(dir, name)
  fs.writeFileSync(file, source)
  return file
}

const pidsFrom = (records, word) => records
  .filter((r) => typeof r.msg === 'string' && r.msg.startsWith(word + ' '))
  .map((r) => Number(r.msg.split(' ')[1]))

test('the supervisor killed with SIGKILL: the app\'s children in its group are gone within 2 s', async () => {
  const port = await freePort()
  const script = app('sleeper.js', `
    const http = require('node:http')
    const { spawn } = require('node:child_process')
    const child = spawn('sleep', ['1001'], { stdio: 'ignore' })
    console.log('sleep ' + child.pid)
    http.createServer((req, res) => res.end('ok')).listen(process.env.PORT)
  `)
  run = start([script, '-n', 'sleeper', '-u', `http://127.0.0.1:${port}/`], { env: env() })
  const { pid } = await run.waitFor((r) => r.event === 'ready')
  await run.waitFor((r) => pidsFrom([r], 'sleep').length === 1)
  const [sleep] = pidsFrom(run.records, 'sleep')
  extra.push(sleep)
  expect(alive(sleep)).toBe(true)

  // the native router (the default off Windows, issue 25) is a process too: it goes with them
  const router = run.records.find((r) => r.event === 'router' && r.router === 'native')
  if (process.env.HTTPSYS_ROUTER !== 'hub') expect(router).toBeDefined()
  run.signal('SIGKILL')
  await run.exited
  expect(await waitUntil(() => !alive(sleep) && !alive(pid) && (router === undefined || !alive(router.pid)), 2000)).toBe(true)
})

test('an app\'s fork() child answers its parent\'s messages under httpsys start', async () => {
  const port = await freePort()
  app('forkchild.js', 'process.on(\'message\', (n) => process.send(n * 2))\n')
  const script = app('forker.js', `
    const http = require('node:http')
    const { fork } = require('node:child_process')
    const child = fork(__dirname + '/forkchild.js')
    let exited = null
    child.on('exit', (code) => { exited = code })
    http.createServer((req, res) => {
      if (exited !== null) return res.end('child exited ' + exited)
      child.once('message', (m) => res.end('answer ' + m))
      child.send(21)
    }).listen(process.env.PORT)
  `)
  run = start([script, '-n', 'forker', '-u', `http://127.0.0.1:${port}/`], { env: env() })
  await run.waitFor((r) => r.event === 'ready')
  // the child had time to exit if the preload unref'd its channel
  await new Promise((resolve) => setTimeout(resolve, 500))
  const res = await get(port, '/')
  expect(res.body).toBe('answer 42')
  expect(run.records.filter((r) => r.event === 'ready')).toHaveLength(1)
})

test('a crash leaves no detached child behind, crash after crash', async () => {
  const port = await freePort()
  const script = app('crashgc.js', `
    const http = require('node:http')
    const { spawn } = require('node:child_process')
    const child = spawn('sleep', ['1003'], { stdio: 'ignore', detached: true })
    child.unref()
    console.log('detached ' + child.pid)
    http.createServer((req, res) => res.end('x')).listen(process.env.PORT)
    setTimeout(() => { throw new Error('boom') }, 700)
  `)
  run = start([script, '-n', 'crashgc', '-u', `http://127.0.0.1:${port}/`], { env: env() })
  await run.waitFor((r) => r.event === 'exit', { count: 3, timeout: 15000 })
  const exits = run.records.filter((r) => r.event === 'exit').length
  const detached = pidsFrom(run.records, 'detached')
  extra.push(...detached)
  // the children of every instance that has crashed by now (the newest may still run)
  const ofCrashed = detached.slice(0, exits)
  expect(ofCrashed.length).toBeGreaterThanOrEqual(3)
  expect(await waitUntil(() => ofCrashed.every((pid) => !alive(pid)), 2000)).toBe(true)
  expect(run.records.filter((r) => r.event === 'exit:orphans').length).toBeGreaterThanOrEqual(3)
})
