'use strict'

// An app whose request listener throws while it has an 'uncaughtException' listener
// keeps running under node, and so must it under the hub: the throw may cost that one
// request, never the requests that arrived in the same read, the read's ACK (the
// receive window) or the frame the read ended in the middle of. On the native router
// (router/, issue 25; the JS hub, src/hub, ran it too until it was removed); the read
// boundaries, below, with a hand-written peer.

const net = require('node:net')
const path = require('node:path')
const { fork } = require('node:child_process')
const P = require('../../src/wire/protocol')
const { T } = P
const { RawClient, until, socketPath } = require('../helpers/hub-harness')
const { ROUTERS, eventually } = require('../helpers/routers')

const WORKER = path.join(__dirname, '..', 'helpers', 'hub-throwing-worker.js')

function startWorkerProcess (sock, queue, mode = 'handler') {
  const child = fork(WORKER, [sock, queue, mode], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] })
  const w = { child, urls: [], caught: [], attached: false, stderr: '', exit: null }
  child.stderr.on('data', (d) => { w.stderr += d })
  child.on('message', (m) => {
    if (m.type === 'request') w.urls.push(m.url)
    else if (m.type === 'caught') w.caught.push(m.message)
    else if (m.type === 'attached') w.attached = true
  })
  child.on('exit', (code, signal) => { w.exit = { code, signal } })
  return w
}

function stop (w) {
  if (w.exit === null) w.child.kill('SIGKILL')
}

const requestText = (p) => `GET ${p} HTTP/1.1\r\nHost: a\r\n\r\n`

describe.each(ROUTERS)('%s: a worker whose request handler throws', (name, start) => {
  const workers = []
  let hub

  beforeAll(async () => {
    hub = await start()
  })

  afterAll(async () => {
    for (const w of workers) stop(w)
    await hub.close()
  })

  test('requests in the same read as the throwing one are all answered; the throwing one is left to the app', async () => {
    const { ports: [port] } = await hub.createQueue('batch', { urls: ['http://+:0/'] })
    // Sent before any worker is attached, so they wait and reach the worker in one write.
    const paths = ['/a', '/throw', '/c', '/d', '/e']
    const clients = paths.map(() => new RawClient(port))
    await Promise.all(clients.map((c) => c.connected))
    clients.forEach((c, i) => c.write(requestText(paths[i])))
    await eventually(async () => (await hub.queueStats('batch')).waiting === paths.length, 3000, 'requests waiting')

    const w = startWorkerProcess(hub.socketPath, 'batch')
    workers.push(w)
    const others = clients.filter((_, i) => paths[i] !== '/throw')
    const answers = await Promise.all(others.map((c) => c.waitFor(1)))
    expect(answers.map(([r]) => r.body.toString())).toEqual(['ok /a', 'ok /c', 'ok /d', 'ok /e'])
    expect(w.urls.sort()).toEqual([...paths].sort())
    await until(() => w.caught.length === 1, 2000, 'the error at the app\'s uncaughtException listener')
    expect(w.caught).toEqual(['boom /throw'])
    // As under node: the app never answered it, so the client still waits.
    expect(clients[1].responses).toHaveLength(0)
    expect(clients[1].ended).toBe(false)
    for (const c of clients) c.close()
  })

  test('200 throws later the worker still receives and answers requests', async () => {
    const { ports: [port] } = await hub.createQueue('many', { urls: ['http://+:0/'] })
    const w = startWorkerProcess(hub.socketPath, 'many')
    workers.push(w)
    await until(() => w.attached, 5000, 'attached')
    for (let round = 0; round < 10; round++) {
      const clients = Array.from({ length: 20 }, () => new RawClient(port))
      await Promise.all(clients.map((c) => c.connected))
      clients.forEach((c, i) => c.write(requestText(`/throw${round}-${i}`)))
      await until(() => w.caught.length === (round + 1) * 20, 5000, `throws of round ${round}`)
      for (const c of clients) c.close()
    }
    const c = new RawClient(port)
    await c.connected
    c.write(requestText('/still-there') + requestText('/and-again'))
    const res = await c.waitFor(2, 3000)
    expect(res.map((r) => r.body.toString())).toEqual(['ok /still-there', 'ok /and-again'])
    c.close()
  })

  test('without an uncaughtException listener the process still crashes with the app\'s error', async () => {
    const { ports: [port] } = await hub.createQueue('crash', { urls: ['http://+:0/'] })
    const w = startWorkerProcess(hub.socketPath, 'crash', 'nohandler')
    workers.push(w)
    await until(() => w.attached, 5000, 'attached')
    const c = new RawClient(port)
    await c.connected
    c.write(requestText('/throw'))
    await until(() => w.exit !== null, 5000, 'the worker process to exit')
    expect(w.exit.code).not.toBe(0)
    expect(w.stderr).toContain('boom /throw')
    // The worker saw the request, so the router answers 502 rather than re-queueing it.
    const [res] = await c.waitFor(1)
    expect(res.status).toBe(502)
    c.close()
  })
})

// The read boundaries are under the test's control here: a hand-written hub sends the
// worker one write holding three whole REQUEST frames and the first half of a fourth.
describe('a throwing handler inside one read (hand-written hub)', () => {
  let server
  let w
  let hubSide
  const sock = socketPath()

  afterAll(async () => {
    if (w) stop(w)
    if (hubSide) hubSide.destroy()
    if (server) await new Promise((resolve) => server.close(resolve))
  })

  test('the frames after the throw, the partial frame and the ACK all survive', async () => {
    const frames = []
    const acks = []
    let acked0 = false
    server = net.createServer((s) => {
      hubSide = s
      const reader = new P.FrameReader((type, id, b, start, end) => {
        frames.push({ type, id })
        if (type === T.HELLO) {
          const out = new P.FrameWriter()
          out.json(T.HELLO_OK, 0, { queue: 'q', urls: [], ports: [], workerId: 1 }, true)
          for (const part of out.take()) s.write(part)
        } else if (type === T.ACK) {
          const n = b.readUInt32LE(start)
          if (n === 0) acked0 = true
          else acks.push(n)
        }
      })
      s.on('data', (d) => reader.push(d))
      s.on('error', () => {})
    })
    await new Promise((resolve) => server.listen(sock, resolve))
    w = startWorkerProcess(sock, 'q')
    await until(() => acked0, 5000, 'the first ACK')

    const conn = { remoteAddress: '127.0.0.1', remotePort: 1, localAddress: '127.0.0.1', localPort: 2, family: 4, id: 1 }
    const out = new P.FrameWriter()
    const urls = ['/a', '/throw', '/c', '/d']
    urls.forEach((url, i) => out.request(i + 1, { method: 'GET', url, versionMajor: 1, versionMinor: 1, rawHeaders: ['Host', 'a'] }, conn, 0))
    const bytes = Buffer.concat(out.take())
    const cut = bytes.length - 10
    hubSide.write(bytes.subarray(0, cut))
    await until(() => w.urls.length === 3, 3000, 'the three whole requests')
    hubSide.write(bytes.subarray(cut))

    await until(() => frames.filter((f) => f.type === T.RESPONSE).length === 3, 3000, 'three responses')
    expect(w.urls).toEqual(urls)
    expect(frames.filter((f) => f.type === T.RESPONSE).map((f) => f.id).sort()).toEqual([1, 3, 4])
    await until(() => acks.includes(4), 3000, 'ACK 4')
    expect(w.caught).toEqual(['boom /throw'])
  })
})
