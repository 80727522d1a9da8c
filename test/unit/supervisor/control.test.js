'use strict'

// The control channel between `httpsys ls|reload|...` and a running supervisor: found by
// config, private to the user, a stale socket from a crashed supervisor replaced, the
// same config not run twice.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const pino = require('pino')
const { validate } = require('../../../src/config')
const { ControlServer } = require('../../../src/supervisor/control-server')
const client = require('../../../src/supervisor/control-client')
const paths = require('../../../src/supervisor/control-path')

const APPS = path.join(__dirname, '..', '..', 'fixtures', 'apps')
const logger = pino({ level: 'silent' })

let dir
const servers = []
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-ctl-')) })
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
  fs.rmSync(dir, { recursive: true, force: true })
})

const configFile = () => path.join(dir, 'httpsys.config.js')
function config () {
  return validate({ apps: [{ name: 'api', script: 'graceful.js' }, { name: 'web', script: 'graceful.js' }] },
    { baseDir: APPS, source: { configFile: configFile() } })
}

function handler (calls = []) {
  const subscribers = new Set()
  return {
    calls,
    subscribers,
    ls: async () => ({ pid: process.pid, apps: [{ name: 'api' }, { name: 'web' }] }),
    reload: async (app) => { calls.push(['reload', app]); return [{ app, ok: true }] },
    restart: async (app) => { calls.push(['restart', app]); return [{ app, ok: true }] },
    stop: async (app) => { calls.push(['stop', app]); return [{ app, ok: true }] },
    checkApp: (app) => {
      if (app !== undefined && app !== 'api' && app !== 'web') throw Object.assign(new Error(`no app ${app}`), { code: 'ERR_HTTPSYS_APP_NOT_FOUND' })
    },
    logs: ({ app, lines }) => ['{"app":"api","msg":"one"}\n', '{"app":"web","msg":"two"}\n', '{"app":"api","msg":"three"}\n']
      .filter((l) => app === undefined || l.includes(`"app":"${app}"`)).slice(lines === 0 ? 3 : -lines),
    subscribe: (fn) => { subscribers.add(fn); return () => subscribers.delete(fn) }
  }
}

async function startServer (h = handler()) {
  const server = new ControlServer({ handler: h, config: config(), logger, dir: path.join(dir, 'run') })
  await server.start()
  servers.push(server)
  return server
}

test('a second terminal lists and commands the supervisor of a config; files are private to the user', async () => {
  const h = handler()
  const server = await startServer(h)
  const run = path.join(dir, 'run')
  if (process.platform !== 'win32') {
    expect(fs.statSync(run).mode & 0o777).toBe(0o700)
    expect(fs.statSync(server.endpoint).mode & 0o077).toBe(0)
    expect(fs.statSync(server.stateFile).mode & 0o777).toBe(0o600)
  }
  const [listed] = await client.list({ dir: run })
  expect(listed).toMatchObject({ pid: process.pid, config: configFile(), apps: [{ name: 'api' }, { name: 'web' }] })
  expect(await client.list({ dir: run, config: configFile() })).toHaveLength(1)
  await expect(client.list({ dir: run, config: path.join(dir, 'other.config.js') })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_NOT_RUNNING' })

  // commands act on this folder's supervisor: here, the one of ./httpsys.config.js
  fs.writeFileSync(configFile(), 'module.exports = { apps: [] }\n')
  expect(await client.command('reload', 'api', { dir: run, cwd: dir })).toEqual([{
    pid: process.pid, id: paths.identity(config()), label: 'httpsys.config.js', config: configFile(), result: [{ app: 'api', ok: true }]
  }])
  await client.command('stop', 'all', { dir: run, config: configFile() })
  expect(h.calls).toEqual([['reload', 'api'], ['stop', 'all']])
  await expect(client.command('reload', 'nope', { dir: run, cwd: dir })).rejects.toMatchObject({
    code: 'ERR_HTTPSYS_APP_NOT_FOUND', message: expect.stringContaining('(running: api, web)')
  })
})

test('a request without the token is refused', async () => {
  const server = await startServer()
  const state = JSON.parse(fs.readFileSync(server.stateFile, 'utf8'))
  await expect(client.request({ ...state, token: 'guess' }, { cmd: 'ls' })).rejects.toMatchObject({ code: 'ERR_HTTPSYS_CONTROL_DENIED' })
})

test('the same config cannot be started twice', async () => {
  await startServer()
  const second = new ControlServer({ handler: handler(), config: config(), logger, dir: path.join(dir, 'run') })
  await expect(second.start()).rejects.toMatchObject({ code: 'ERR_HTTPSYS_ALREADY_RUNNING', pid: process.pid })
})

test('the socket of a supervisor that crashed is detected as stale and replaced', async () => {
  const run = paths.ensureRuntimeDir(path.join(dir, 'run'))
  const id = paths.identity(config())
  const endpoint = paths.endpoint(id, run)
  const crashed = spawn(process.execPath, ['-e', `require('node:net').createServer().listen(${JSON.stringify(endpoint)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise((resolve) => crashed.stdout.once('data', resolve))
  paths.writeState(paths.statePath(id, run), { pid: crashed.pid, id, token: 't', endpoint, config: configFile(), apps: ['api'] })
  crashed.kill('SIGKILL')
  await new Promise((resolve) => crashed.once('exit', resolve))
  if (process.platform !== 'win32') expect(fs.existsSync(endpoint)).toBe(true)

  expect(await client.list({ dir: run })).toEqual([]) // `ls` with nothing running: empty, not an error
  expect(fs.existsSync(paths.statePath(id, run))).toBe(false)
  const server = await startServer()
  expect(server.endpoint).toBe(endpoint)
  expect((await client.list({ dir: run }))[0].pid).toBe(process.pid)
})

test('logs: the recent lines of one app, then new ones while following', async () => {
  const h = handler()
  await startServer(h)
  const run = path.join(dir, 'run')
  const [state] = await client.findSupervisors({ dir: run })
  const lines = []
  await client.stream(state, { app: 'api', lines: 5 }, (l) => lines.push(l)).done
  expect(lines).toEqual(['{"app":"api","msg":"one"}', '{"app":"api","msg":"three"}'])

  const followed = []
  const s = client.stream(state, { app: 'web', lines: 0, follow: true }, (l) => followed.push(l))
  while (h.subscribers.size === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  for (const fn of h.subscribers) {
    fn('{"app":"api","msg":"not mine"}\n', 'api')
    fn('{"app":"web","msg":"new"}\n', 'web')
  }
  while (followed.length === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  s.close()
  await s.done
  expect(followed).toEqual(['{"app":"web","msg":"new"}'])
})

test('logs -f: a reader that stops reading costs the supervisor at most ~1 MB, then learns how many records it missed', async () => {
  const net = require('node:net')
  const h = handler()
  const server = await startServer(h)
  const [state] = await client.findSupervisors({ dir: path.join(dir, 'run') })
  const socket = net.connect(state.endpoint)
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(JSON.stringify({ token: state.token, cmd: 'logs', lines: 0, follow: true }) + '\n')
  socket.pause()
  while (h.subscribers.size === 0) await new Promise((resolve) => setTimeout(resolve, 10))
  const [serverSide] = server.sockets
  const record = (i) => `{"app":"api","n":${i},"pad":"${'p'.repeat(1000)}"}\n`
  const sent = 20000 // 20 MB the reader does not read
  let maxBacklog = 0
  for (let i = 0; i < sent; i++) {
    for (const fn of h.subscribers) fn(record(i), 'api')
    maxBacklog = Math.max(maxBacklog, serverSide.writableLength)
    if (i % 1000 === 0) await new Promise((resolve) => setImmediate(resolve))
  }
  expect(maxBacklog).toBeLessThan(1024 * 1024 + 4096)

  // the reader comes back: it gets what was kept, then one record counting the rest
  const messages = []
  let text = ''
  socket.setEncoding('utf8')
  socket.on('data', (chunk) => {
    text += chunk
    let nl
    while ((nl = text.indexOf('\n')) !== -1) {
      messages.push(JSON.parse(JSON.parse(text.slice(0, nl)).line))
      text = text.slice(nl + 1)
    }
  })
  socket.resume()
  for (let i = 0; i < 500 && !messages.some((m) => m.event === 'logs:skipped'); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  socket.destroy()
  const notice = messages.find((m) => m.event === 'logs:skipped')
  expect(notice).toMatchObject({ level: 40, count: expect.any(Number) })
  const received = messages.filter((m) => m.n !== undefined)
  expect(received.length + notice.count).toBe(sent)
  // what arrived is in order, with nothing cut
  expect(received.map((m) => m.n)).toEqual(received.map((m) => m.n).slice().sort((a, b) => a - b))
})
