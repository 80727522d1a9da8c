'use strict'

// examples/socketio-chat under `httpsys start`: socket.io clients on both of its
// transports (a WebSocket upgrade, and long-polling: a stream of ordinary requests
// that must not be held up) chat through the router.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { io } = require('socket.io-client')
const { start, freePort, get, waitUntil } = require('../fixtures/apps/harness')

let run
let dir
const clients = []
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-sio-')) })
afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  if (run) await run.cleanup()
  run = null
  fs.rmSync(dir, { recursive: true, force: true })
})

function client (port, name, transports) {
  const c = io(`http://127.0.0.1:${port}`, { query: { name }, transports, reconnection: false, forceNew: true })
  clients.push(c)
  c.got = []
  c.on('chat', (m) => c.got.push(`${m.name}: ${m.text}`))
  return new Promise((resolve, reject) => {
    c.on('connect', () => resolve(c))
    c.on('connect_error', reject)
  })
}

test('the socket.io chat example: websocket and polling clients hear each other', async () => {
  const port = await freePort()
  run = start(['examples/socketio-chat/app.js'], { env: { PORT: String(port), HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') } })
  await run.waitFor((r) => r.event === 'ready', { timeout: 20000 })
  const page = await get(port, '/')
  expect(page.status).toBe(200)
  expect(page.body).toContain('/socket.io/socket.io.js')

  const ws = await client(port, 'ann', ['websocket'])
  const poll = await client(port, 'bob', ['polling'])
  expect(ws.io.engine.transport.name).toBe('websocket')
  expect(poll.io.engine.transport.name).toBe('polling')
  // the default client: starts polling, then upgrades to a WebSocket
  const both = await client(port, 'cy', ['polling', 'websocket'])
  await waitUntil(() => both.io.engine.transport.name === 'websocket', 10000)

  ws.emit('chat', 'hi from a websocket')
  poll.emit('chat', 'hi from long-polling')
  both.emit('chat', 'hi after an upgrade')
  const all = ['ann: hi from a websocket', 'bob: hi from long-polling', 'cy: hi after an upgrade']
  await waitUntil(() => [ws, poll, both].every((c) => c.got.length === 3), 10000)
  for (const c of [ws, poll, both]) expect(c.got.slice().sort()).toEqual(all)
  // clients leave first (a polling client says so with one more request), then a clean stop
  for (const c of clients.splice(0)) c.close()
  await new Promise((resolve) => setTimeout(resolve, 200))
  run.signal('SIGINT')
  expect((await run.exited).code).toBe(0)
}, 60000)
