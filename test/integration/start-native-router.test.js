'use strict'

// `HTTPSYS_ROUTER=native httpsys start`: the supervisor runs its apps behind the Go
// router (router/, issue 25) in a process of its own, which serves them, shows in ls,
// is stopped with the supervisor, and never outlives it, however the supervisor dies.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, alive, waitUntil } = require('../fixtures/apps/harness')
const { routerBin } = require('../helpers/native-router')

jest.setTimeout(60000)

let run
let runtimeDir
beforeAll(() => {
  runtimeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-native-rt-'))
  fs.chmodSync(runtimeDir, 0o700)
})
afterEach(async () => { if (run) await run.cleanup() })
afterAll(() => fs.rmSync(runtimeDir, { recursive: true, force: true }))

function startNative (port) {
  return start(['examples/hello/app.js'], {
    env: { PORT: String(port), HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin(), HTTPSYS_RUNTIME_DIR: runtimeDir }
  })
}

test('serves the hello example through the native router, and Ctrl+C stops the router too', async () => {
  const port = await freePort()
  run = startNative(port)
  const router = await run.waitFor((r) => r.event === 'router' && r.router === 'native')
  await run.waitFor((r) => r.event === 'ready')
  const res = await get(port, '/')
  expect(res.status).toBe(200)
  expect(res.body).toBe('hello world\n')
  // a terminal's Ctrl+C reaches the whole foreground process group: the router too
  process.kill(router.pid, 'SIGINT')
  run.signal('SIGINT')
  expect(await run.exited).toEqual({ code: 0, signal: null })
  // nothing failed on the way out: the router ignores the terminal's SIGINT and is closed by the supervisor
  expect(run.records.filter((r) => r.level >= 50)).toEqual([])
  expect(await waitUntil(() => !alive(router.pid), 3000)).toBe(true)
  await expect(get(port, '/', { timeout: 2000 })).rejects.toThrow(/ECONNREFUSED/)
})

test('the router dies with a supervisor killed by SIGKILL: no orphan holds the port', async () => {
  const port = await freePort()
  run = startNative(port)
  const router = await run.waitFor((r) => r.event === 'router' && r.router === 'native')
  await run.waitFor((r) => r.event === 'ready')
  expect((await get(port, '/')).status).toBe(200)
  run.signal('SIGKILL')
  await run.exited
  expect(await waitUntil(() => !alive(router.pid), 3000)).toBe(true)
})

test('the router exits at once when its stdin closes (its supervisor gone), and removes its worker socket', async () => {
  const { RouterProcess } = require('../../src/supervisor/router-process')
  const proc = new RouterProcess({ binary: routerBin(), logger: require('pino')({ level: 'silent' }), logLevel: 'silent' })
  await proc.spawn()
  try {
    const sock = path.join(runtimeDir, 'stdin-test.sock')
    await proc.call('start', { workerSocket: sock, workersMayCreate: false, limits: {} })
    const { ports: [port] } = await proc.call('createQueue', { name: 'app', urls: ['http://127.0.0.1:0/'] })
    expect(fs.existsSync(sock)).toBe(true)
    // nothing writes to its stdout meanwhile (no worker, no client): only the end of stdin ends it
    proc.child.stdin.end()
    const exit = await Promise.race([proc.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 1000))])
    expect(exit).toEqual({ code: 0, signal: null })
    expect(fs.existsSync(sock)).toBe(false)
    await expect(get(port, '/', { timeout: 2000 })).rejects.toThrow(/ECONNREFUSED/)
  } finally {
    if (proc.exitInfo === null) proc.child.kill('SIGKILL')
  }
})

test('the end of its stdin ends the router at once even in the middle of a close (its supervisor killed during a stop)', async () => {
  const { startNativeRouter } = require('../helpers/native-router')
  const { startWorker, request } = require('../helpers/hub-harness')
  // a close waits up to closeTimeout for the responses in flight
  const r = await startNativeRouter({ workersMayCreate: false, closeTimeout: 20000 })
  const { ports: [port] } = await r.createQueue('app', { urls: ['http://127.0.0.1:0/'] })
  const w = await startWorker(r, { queue: 'app' }) // takes requests, never answers
  try {
    request(port, { path: '/held' }).catch(() => {})
    expect(await waitUntil(() => w.requests.length === 1, 3000)).toBe(true)
    r.proc.call('close').catch(() => {})
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(r.proc.exitInfo).toBe(null) // closing: waiting for the response in flight
    const t0 = Date.now()
    r.proc.child.stdin.end()
    const exit = await Promise.race([r.proc.exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 2000))])
    expect(exit).toEqual({ code: 0, signal: null })
    expect(Date.now() - t0).toBeLessThan(2000)
    expect(fs.existsSync(r.socketPath)).toBe(false)
  } finally {
    w.att.close()
    if (r.proc.exitInfo === null) r.proc.child.kill('SIGKILL')
  }
})

test('a missing router binary is ERR_HTTPSYS_ROUTER_MISSING before any app starts', async () => {
  const port = await freePort()
  run = start(['examples/hello/app.js'], {
    env: { PORT: String(port), HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: path.join(runtimeDir, 'no-such-router'), HTTPSYS_RUNTIME_DIR: runtimeDir }
  })
  const { code } = await run.exited
  expect(code).toBe(1)
  const text = run.records.map((r) => JSON.stringify(r)).join('\n') + run.stderr
  expect(text).toMatch(/ERR_HTTPSYS_ROUTER_MISSING/)
  expect(text).toMatch(/npm run build:router/)
  expect(run.pids()).toEqual([])
})

test('ls, ls --json and monit show the router\'s own process as a row of its own: pid, CPU, memory', async () => {
  const port = await freePort()
  run = startNative(port)
  const router = await run.waitFor((r) => r.event === 'router' && r.router === 'native')
  await run.waitFor((r) => r.event === 'ready')
  for (let i = 0; i < 20; i++) expect((await get(port, '/')).status).toBe(200)
  const env = { HTTPSYS_RUNTIME_DIR: runtimeDir }
  const [json] = JSON.parse((await cli(['ls', '--json'], { env })).stdout)
  expect(json.router).toMatchObject({ pid: router.pid })
  expect(json.router.cpu).toBeGreaterThanOrEqual(0)
  expect(json.router.memory).toBeGreaterThan(1024 * 1024)
  expect(json.router.memory).toBeLessThan(200 * 1024 * 1024)
  expect(json.router.uptimeMs).toBeGreaterThan(0)
  // its row: the same columns as an instance's, with no instance number
  const text = (await cli(['ls'], { env })).stdout
  expect(text).toMatch(new RegExp(`^router\\s+${router.pid}\\s+ready\\s+\\d+s\\s+-\\s+[\\d.]+%\\s+[\\d.]+M\\b`, 'm'))
  const monit = (await cli(['monit'], { env })).stdout
  expect(monit).toMatch(new RegExp(`^router\\s+${router.pid}\\s+ready`, 'm'))
})
