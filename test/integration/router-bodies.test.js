'use strict'

const http = require('node:http')
const crypto = require('node:crypto')
const { RESPONSE_MORE } = require('../../src/wire/contract')
const { startWorker, reply, RawClient, until } = require('../helpers/hub-harness')
const { ROUTERS } = require('../helpers/routers')

const sha = (buf) => crypto.createHash('sha256').update(buf).digest('hex')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// Request and response bodies on the native router (router/, issue 25; the JS hub,
// src/hub, ran them too until it was removed): flow control both ways, chunked uploads, 100-continue, large
// bodies held behind a slower response, a client that leaves, a worker that cancels.

jest.setTimeout(30000)

describe.each(ROUTERS)('%s: request and response bodies', (name, start) => {
  let hub
  let port
  let n = 0
  const workers = []

  beforeAll(async () => {
    hub = await start()
  })

  afterAll(async () => {
    for (const w of workers) w.att.close()
    await hub.close()
  })

  // Each test gets its own queue and port, so no earlier worker takes its requests.
  async function worker (opts) {
    const queue = `app${++n}`
    port = (await hub.createQueue(queue, { urls: ['http://+:0/'] })).ports[0]
    const w = await startWorker(hub, { queue, ...opts })
    workers.push(w)
    return w
  }

  function echoHash (req, body, w) {
    reply(w, req, 200, `${body.length} ${sha(body)}`)
  }

  test('a 32 MB POST arrives intact, and a worker that does not read holds the client back', async () => {
    const w = await worker({ autoRead: false, handle: echoHash })
    const body = crypto.randomBytes(32 * 1024 * 1024)
    const c = new RawClient(port)
    await c.connected
    c.write(`POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`)
    // in pieces, each counted once the client's kernel took it
    let flushed = 0
    for (let o = 0; o < body.length; o += 64 * 1024) c.socket.write(body.subarray(o, o + 64 * 1024), () => { flushed += 64 * 1024 })
    await until(() => w.requests.length === 1, 5000, 'request head')
    const id = w.requests[0].id
    await sleep(300)
    // Nobody called readBody: the worker got the initial window, no more ...
    expect(w.received.get(id)).toBeLessThanOrEqual(64 * 1024)
    // ... and the router stopped reading the client instead of buffering the body: the
    // client could hand its kernel only what the socket buffers hold, and no more since
    const stalled = flushed
    expect(stalled).toBeLessThan(body.length / 2)
    await sleep(200)
    expect(flushed).toBe(stalled)

    // Now read, as a consumer does: readBody after each chunk.
    const reader = setInterval(() => w.att.readBody(id), 1)
    const [res] = await c.waitFor(1, 20000)
    clearInterval(reader)
    c.close()
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe(`${body.length} ${sha(body)}`)
  })

  test('a chunked upload arrives intact', async () => {
    const w = await worker({ handle: echoHash })
    const parts = Array.from({ length: 50 }, (_, i) => crypto.randomBytes(1000 + i * 997))
    const all = Buffer.concat(parts)
    const res = await new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'PUT', path: '/chunked', agent: false }, (r) => {
        const chunks = []
        r.on('data', (c) => chunks.push(c))
        r.on('end', () => resolve({ status: r.statusCode, body: Buffer.concat(chunks).toString() }))
      })
      req.on('error', reject)
      ;(async () => {
        for (const p of parts) {
          req.write(p)
          await sleep(1)
        }
        req.end()
      })()
    })
    expect(w.requests.at(-1).rawHeaders.map((h) => h.toLowerCase())).toContain('transfer-encoding')
    expect(res).toEqual({ status: 200, body: `${all.length} ${sha(all)}` })
  })

  test('Expect: 100-continue: the worker reading the body makes the router send 100 Continue', async () => {
    await worker({ handle: echoHash })
    const c = new RawClient(port)
    await c.connected
    c.write('POST /expect HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n')
    const [interim] = await c.waitFor(1)
    expect(interim.status).toBe(100)
    c.write('hello')
    const [, final] = await c.waitFor(2)
    expect(final.status).toBe(200)
    expect(final.body.toString()).toBe(`5 ${sha(Buffer.from('hello'))}`)
    c.close()
  })

  test('a slow-reading client applies backpressure to the worker on a large response', async () => {
    const total = 64 * 1024 * 1024
    const chunk = Buffer.alloc(64 * 1024, 'x')
    const state = { sent: 0, blocked: 0, id: 0 }
    const pump = (w) => {
      while (state.sent < total) {
        state.sent += chunk.length
        const last = state.sent >= total
        const ok = w.att.sendBody(state.id, chunk, last ? 0 : RESPONSE_MORE)
        if (!ok && !last) {
          state.blocked++
          return
        }
      }
    }
    await worker({
      onRequest (req, w) {
        state.id = req.id
        w.att.respond(req.id, 200, 'OK', ['Content-Length', String(total)], null, RESPONSE_MORE)
        pump(w)
      },
      onDrain: (id, w) => pump(w)
    })
    const c = new RawClient(port)
    await c.connected
    c.socket.pause() // the client reads nothing for now
    c.write('GET /big HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => state.blocked > 0, 5000, 'the worker to be told to wait')
    await sleep(300)
    // The worker produced only what the window and the socket buffers hold, not 64 MB.
    expect(state.sent).toBeLessThan(total / 2)
    const stalled = state.sent
    await sleep(200)
    expect(state.sent).toBe(stalled)

    let bytes = 0
    c.socket.removeAllListeners('data')
    c.socket.on('data', (d) => { bytes += d.length })
    c.socket.resume()
    await until(() => bytes >= total, 20000, 'the whole body')
    expect(state.sent).toBe(total)
    expect(bytes).toBeGreaterThan(total) // body + head
    c.close()
  })

  test('large bodies sent with the head arrive intact, in order, also when held behind a slower response', async () => {
    const sizes = { '/small': 100, '/mid': 5000, '/big': 300 * 1024, '/huge': 3 * 1024 * 1024 + 7 }
    const bodies = {}
    for (const [p, size] of Object.entries(sizes)) bodies[p] = crypto.randomBytes(size)
    await worker({
      handle (req, body, w) {
        const answer = () => w.att.respond(req.id, 200, 'OK', ['Content-Length', String(bodies[req.url].length)], bodies[req.url], 0)
        // the first answer comes last, so the others wait in the router behind it
        if (req.url === '/small') setTimeout(answer, 100)
        else answer()
      }
    })
    const c = new RawClient(port)
    await c.connected
    const order = ['/small', '/big', '/mid', '/huge', '/big']
    c.write(order.map((p) => `GET ${p} HTTP/1.1\r\nHost: a\r\n\r\n`).join(''))
    const res = await c.waitFor(order.length, 10000)
    expect(res.map((r) => sha(r.body))).toEqual(order.map((p) => sha(bodies[p])))
    c.close()
  })

  test('a client that disconnects aborts its request at the worker', async () => {
    const w = await worker({ onRequest: () => {} })
    const c = new RawClient(port)
    await c.connected
    c.write('GET /gone HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => w.requests.length === 1, 2000, 'request')
    // a reset: a FIN alone is a half-close, after which the client may still read
    // (router-rules.test.js)
    c.socket.resetAndDestroy()
    await until(() => w.aborted.length === 1, 2000, 'abort')
    expect(w.aborted).toEqual([w.requests[0].id])
  })

  test('cancel() from the worker closes the client connection at once, with no response', async () => {
    const w = await worker({ onRequest: (req, x) => x.att.cancel(req.id) })
    const c = new RawClient(port)
    await c.connected
    const t0 = Date.now()
    c.write('GET /cancel HTTP/1.1\r\nHost: a\r\n\r\n')
    await c.waitClosed(1000)
    expect(Date.now() - t0).toBeLessThan(500) // at once, not at some deadline of the router
    expect(c.responses).toHaveLength(0)
    expect(w.requests).toHaveLength(1)
  })
})
