'use strict'

const crypto = require('node:crypto')
const http = require('node:http')
const hubClient = require('../../src/queue/hub-client')
const { RawClient, until } = require('../helpers/hub-harness')
const { ROUTERS } = require('../helpers/routers')

const sha = (buf) => crypto.createHash('sha256').update(buf).digest('hex')

// How a worker reads its socket to the router (src/queue/hub-client.js,
// src/queue/read-slabs.js): into slabs of its own, a few large reads per upload, with
// the body chunks handed to the app as views of them. What the app is given must stay
// as it was given while the worker reads on, a large upload must not cost an
// allocation per 64 KiB read, and a small body the app keeps must not keep a slab.

jest.setTimeout(30000)

// the Unix socket path only: Windows keeps node's own reads (hub-client.js)
const onUnix = process.platform === 'win32' ? describe.skip : describe

onUnix.each(ROUTERS)('%s: the worker\'s reads of request bodies', (name, start) => {
  let hub
  let n = 0
  const attachments = []

  beforeAll(async () => {
    hub = await start()
  })

  afterAll(async () => {
    for (const a of attachments) a.close()
    await hub.close()
  })

  // A worker that keeps every body chunk exactly as it was handed over (no copy), and
  // answers each request with its body's length and hash once the body is complete.
  async function worker () {
    const queue = `reads${++n}`
    const port = (await hub.createQueue(queue, { urls: ['http://+:0/'] })).ports[0]
    const chunks = new Map()
    const kept = [] // every chunk of every request, as given
    const att = await hubClient.attach({
      socketPath: hub.socketPath,
      queue,
      handlers: {
        onRequest (req) {
          chunks.set(req.id, [])
          if (req.hasBody) att.readBody(req.id)
          else answer(req.id)
        },
        onBody (id, chunk) {
          chunks.get(id).push(chunk)
          kept.push(chunk)
          att.readBody(id)
        },
        onBodyEnd (id) { answer(id) }
      }
    })
    attachments.push(att)
    function answer (id) {
      const body = Buffer.concat(chunks.get(id))
      const text = Buffer.from(`${body.length} ${sha(body)}`)
      att.respond(id, 200, 'OK', ['Content-Length', String(text.length)], text, 0)
    }
    return { port, kept, chunks }
  }

  test('body chunks the app keeps as given stay intact while the worker reads on: three 4 MB uploads at once, with small requests between', async () => {
    const { port, kept, chunks } = await worker()
    const bodies = [0, 1, 2].map(() => crypto.randomBytes(4 * 1024 * 1024))
    const clients = bodies.map((body) => {
      const c = new RawClient(port)
      c.write(`POST /up HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`)
      for (let o = 0; o < body.length; o += 256 * 1024) c.socket.write(body.subarray(o, o + 256 * 1024))
      return c
    })
    const small = new RawClient(port)
    for (let i = 0; i < 20; i++) small.write('POST /s HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello')
    const answers = await Promise.all(clients.map((c) => c.waitFor(1, 20000)))
    const smallAnswers = await small.waitFor(20, 20000)
    for (const c of [...clients, small]) c.close()
    // the app hashed each body as it completed; the chunks it kept are still those bytes
    answers.forEach(([res], i) => expect(res.body.toString()).toBe(`${bodies[i].length} ${sha(bodies[i])}`))
    for (const res of smallAnswers) expect(res.body.toString()).toBe(`5 ${sha(Buffer.from('hello'))}`)
    expect(kept.reduce((s, c) => s + c.length, 0)).toBe(3 * 4 * 1024 * 1024 + 20 * 5)
    // each upload's chunks, in the order given, are still its body
    const now = [...chunks.values()].filter((list) => list.length > 1).map((list) => sha(Buffer.concat(list))).sort()
    expect(now).toEqual(bodies.map(sha).sort())
  })

  test('a 1 MB upload arrives in a few large buffers, not in one per 64 KiB read', async () => {
    const { port, kept } = await worker()
    const body = crypto.randomBytes(1024 * 1024)
    const res = await post(port, body)
    expect(res).toBe(`${body.length} ${sha(body)}`)
    // node's own reads are 64 KiB at most, each into a buffer of its own (16 or more for
    // 1 MB); the worker reads into 256 KiB slabs and hands the body on as views of them
    // (chunks under 16 KiB are copied out, the last test)
    const large = kept.filter((c) => c.length >= 16 * 1024)
    expect(large.reduce((s, c) => s + c.length, 0)).toBeGreaterThan(900 * 1024)
    expect(new Set(large.map((c) => c.buffer)).size).toBeLessThanOrEqual(6)
    expect(large.every((c) => c.buffer.byteLength >= 256 * 1024)).toBe(true)
  })

  test('a small body the app keeps holds its own bytes, not the buffer it was read into', async () => {
    const { port, kept } = await worker()
    const body = crypto.randomBytes(100)
    expect(await post(port, body)).toBe(`100 ${sha(body)}`)
    await until(() => kept.length === 1, 5000, 'the chunk')
    expect(kept[0].equals(body)).toBe(true)
    // at most node's own pool slab (Buffer.poolSize), never a read slab
    expect(kept[0].buffer.byteLength).toBeLessThanOrEqual(Buffer.poolSize)
  })
})

function post (port, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ port, method: 'POST', path: '/', agent: false, headers: { 'Content-Length': body.length } }, (res) => {
      let text = ''
      res.on('data', (d) => { text += d })
      res.on('end', () => resolve(text))
    })
    req.on('error', reject)
    req.end(body)
  })
}
