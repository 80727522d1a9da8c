'use strict'

// WebSocket apps under `httpsys start`, with the ws package on both ends: many clients
// echo through two instances of one app, a worker that dies takes only its own
// connections along, and a rolling reload lets open connections finish until the old
// process's kill_timeout (the app hears their close) while new ones reach the new
// process.

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const WebSocket = require('ws')
const { start, cli, freePort, waitUntil, APPS } = require('../fixtures/apps/harness')

const APP = path.join(APPS, 'ws-echo.js')
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-ws-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  run = null
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = () => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') })

/** Opens a client; resolves once the server said which pid serves it. */
function connect (port) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`, { perMessageDeflate: false })
    const c = { ws, pid: 0, messages: [], closed: null }
    ws.on('message', (data, isBinary) => {
      if (c.pid === 0) {
        c.pid = JSON.parse(data.toString()).pid
        return resolve(c)
      }
      c.messages.push({ data, isBinary })
    })
    ws.on('close', (code) => { c.closed = code })
    ws.on('error', (err) => { if (c.pid === 0) reject(err) })
  })
}

async function startEcho (port, extra = []) {
  run = start([APP, '-u', `http://+:${port}/`, '-i', '2', ...extra], { env: env() })
  return run.waitFor((r) => r.event === 'ready', { count: 2, timeout: 20000 })
}

test('200 clients each echo 1 MB through two instances, text and binary', async () => {
  const port = await freePort()
  await startEcho(port)
  const clients = await Promise.all(Array.from({ length: 200 }, () => connect(port)))
  expect(new Set(clients.map((c) => c.pid)).size).toBe(2)
  const sent = clients.map((c, i) => {
    const binary = i % 2 === 0
    const bytes = crypto.randomBytes(binary ? 1024 * 1024 : 768 * 1024)
    // a text message: 1 MB of UTF-8 (base64 of 768 KiB)
    const payload = binary ? bytes : bytes.toString('base64')
    c.ws.send(payload, { binary })
    return { binary, hash: sha(Buffer.from(payload)) }
  })
  await waitUntil(() => clients.every((c) => c.messages.length === 1), 60000)
  clients.forEach((c, i) => {
    const m = c.messages[0]
    expect(m.isBinary).toBe(sent[i].binary)
    expect(m.data.length).toBe(1024 * 1024)
    expect(sha(m.data)).toBe(sent[i].hash)
  })
  for (const c of clients) c.ws.close(1000)
  await waitUntil(() => clients.every((c) => c.closed !== null), 10000)
  expect(clients.every((c) => c.closed === 1000)).toBe(true)
}, 90000)

test("a worker that dies takes its own connections along; the other instance's keep echoing", async () => {
  const port = await freePort()
  await startEcho(port)
  // whichever instance is free takes the next upgrade (one queue, as on HTTP.SYS): one
  // that keeps up may take a whole batch, so batches are opened until both serve some
  const clients = []
  let pids = []
  while (pids.length < 2 && clients.length < 200) {
    clients.push(...await Promise.all(Array.from({ length: 20 }, () => connect(port))))
    pids = [...new Set(clients.map((c) => c.pid))]
  }
  expect(pids.length).toBe(2)
  process.kill(pids[0], 'SIGKILL')
  const mine = clients.filter((c) => c.pid === pids[0])
  const others = clients.filter((c) => c.pid === pids[1])
  await waitUntil(() => mine.every((c) => c.closed !== null), 10000)
  expect(mine.every((c) => c.closed === 1006)).toBe(true) // gone without a close frame
  for (const c of others) c.ws.send('still here')
  await waitUntil(() => others.every((c) => c.messages.length === 1), 10000)
  expect(others.every((c) => c.closed === null && c.messages[0].data.toString() === 'still here')).toBe(true)
}, 60000)

test('a reload lets open connections go on until kill_timeout, then closes them; new ones reach the new processes', async () => {
  const port = await freePort()
  await startEcho(port, ['--kill-timeout', '3s'])
  const old = await Promise.all(Array.from({ length: 6 }, () => connect(port)))
  const oldPids = new Set(old.map((c) => c.pid))
  for (const c of old) c.ws.on('close', () => { c.closedAt = Date.now() })
  const reloading = cli(['reload', 'ws-echo'], { env: env() })
  const drain = await run.waitFor((r) => r.event === 'stop:drain', { timeout: 30000 })
  const drainAt = Date.now()
  // the old processes are draining (no new requests), and their connections go on
  for (const c of old) c.ws.send('during')
  await waitUntil(() => old.every((c) => c.messages.length === 1), 5000)
  expect(old.every((c) => c.closed === null)).toBe(true)
  await run.waitFor((r) => r.event === 'reload:done', { timeout: 30000 })
  expect((await reloading).code).toBe(0)
  // closed just before the stop's deadline (kill_timeout 3 s), with a close the app heard
  await waitUntil(() => old.every((c) => c.closed !== null), 5000)
  const first = old.filter((c) => c.pid === drain.pid)
  for (const c of first) expect(c.closedAt - drainAt).toBeGreaterThanOrEqual(2000)
  const heard = run.records.filter((r) => typeof r.msg === 'string' && /^ws-echo \d+ closed/.test(r.msg) && oldPids.has(r.pid))
  expect(heard.length).toBe(old.length)
  // nothing died by force: each old process exited by itself before the deadline
  expect(run.records.filter((r) => r.event === 'stop:kill')).toEqual([])
  const fresh = await Promise.all(Array.from({ length: 4 }, () => connect(port)))
  expect(fresh.some((c) => oldPids.has(c.pid))).toBe(false)
  for (const c of fresh) c.ws.close()
}, 90000)
