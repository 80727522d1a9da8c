'use strict'

const crypto = require('node:crypto')
const { startWorker, reply, RawClient, until } = require('../helpers/hub-harness')
const { ROUTERS } = require('../helpers/routers')

const sha = (buf) => crypto.createHash('sha256').update(buf).digest('hex')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

// The request-body credit a reading worker keeps granted (src/queue/hub-client.js
// BODY_TARGET, docs/wire-protocol.md "Flow control"): one readBody() lets 512 KiB of an
// upload come beyond what arrived without another round trip, and not a byte more until it reads again.

jest.setTimeout(30000)

describe.each(ROUTERS)('%s: the request-body window a worker grants', (name, start) => {
  let hub
  let n = 0
  const workers = []

  beforeAll(async () => {
    hub = await start()
  })

  afterAll(async () => {
    for (const w of workers) w.att.close()
    await hub.close()
  })

  async function worker (opts) {
    const queue = `win${++n}`
    const port = (await hub.createQueue(queue, { urls: ['http://+:0/'] })).ports[0]
    const w = await startWorker(hub, { queue, ...opts })
    workers.push(w)
    return { w, port }
  }

  test('after the first 64 KiB, one readBody() brings 512 KiB more, no more; reading on brings it all intact', async () => {
    const { w, port } = await worker({ autoRead: false, handle: (req, body, x) => reply(x, req, 200, `${body.length} ${sha(body)}`) })
    const body = crypto.randomBytes(2 * 1024 * 1024)
    const c = new RawClient(port)
    await c.connected
    c.write(`POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`)
    c.socket.write(body)
    await until(() => w.requests.length === 1, 5000, 'request head')
    const id = w.requests[0].id
    await until(() => w.received.get(id) === 64 * 1024, 5000, 'the initial 64 KiB')
    w.att.readBody(id)
    await until(() => w.received.get(id) >= (64 + 512) * 1024, 5000, '512 KiB more after one readBody')
    await sleep(200)
    expect(w.received.get(id)).toBe((64 + 512) * 1024)

    const reader = setInterval(() => w.att.readBody(id), 1)
    const [res] = await c.waitFor(1, 20000)
    clearInterval(reader)
    c.close()
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe(`${body.length} ${sha(body)}`)
  })

  test('a worker that dies mid-upload: its client gets 502, and the next upload, to another worker, arrives intact', async () => {
    const { w: dying, port } = await worker({})
    const body = crypto.randomBytes(2 * 1024 * 1024)
    const c1 = new RawClient(port)
    await c1.connected
    c1.write(`POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`)
    c1.socket.write(body)
    await until(() => dying.requests.length === 1 && dying.received.get(dying.requests[0].id) >= 256 * 1024, 5000, 'part of the body at the worker')
    dying.att.socket.destroy()
    // (it had acknowledged the request: nothing is replayed to another worker)
    const [first] = await c1.waitFor(1, 10000)
    expect(first.status).toBe(502)
    c1.close()

    const queue = `win${n}`
    const next = await startWorker(hub, { queue, handle: (req, b, x) => reply(x, req, 200, `${b.length} ${sha(b)}`) })
    workers.push(next)
    const c2 = new RawClient(port)
    await c2.connected
    c2.write(`POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`)
    c2.socket.write(body)
    const [res] = await c2.waitFor(1, 20000)
    c2.close()
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe(`${body.length} ${sha(body)}`)
  })
})
