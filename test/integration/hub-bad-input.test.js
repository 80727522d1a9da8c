'use strict'

const { startHub, startWorker, reply, RawClient, until } = require('../helpers/hub-harness')

// Bad input is answered by the hub itself, with Connection: close, and never reaches a
// worker (HTTP.SYS does the same: the app only ever sees well-formed requests).
describe('hub rejects bad input itself', () => {
  let hub
  let w
  let port

  beforeAll(async () => {
    hub = await startHub({ maxHeaderSize: 4096 })
    port = (await hub.createQueue('app', { urls: ['http://+:0/'] })).ports[0]
    w = await startWorker(hub, { queue: 'app', handle: (req, body, x) => reply(x, req, 200, 'ok') })
  })

  afterAll(async () => {
    w.att.close()
    await hub.close()
  })

  async function send (text) {
    const c = new RawClient(port)
    await c.connected
    c.write(text)
    const [res] = await c.waitFor(1)
    await c.waitClosed()
    return res
  }

  test.each([
    { name: 'a malformed request line', text: 'GARBAGE\r\n\r\n', status: 400 },
    { name: 'Content-Length with Transfer-Encoding', text: 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', status: 400 },
    { name: 'oversized headers', text: `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'x'.repeat(8000)}\r\n\r\n`, status: 431 },
    { name: 'an unsupported HTTP version', text: 'GET / HTTP/2.0\r\nHost: a\r\n\r\n', status: 505 },
    { name: 'HTTP/1.1 without Host', text: 'GET / HTTP/1.1\r\n\r\n', status: 400 },
    // a 2xx to CONNECT means "tunnel up" to a proxy in front: it must never reach an app
    { name: 'CONNECT with an origin-form target', text: 'CONNECT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello', status: 400 }
  ])('$name -> $status, connection closed, no worker sees it', async ({ text, status }) => {
    const res = await send(text)
    expect(res.status).toBe(status)
    expect(res.headers.connection).toBe('close')
    expect(w.requests).toHaveLength(0)
  })

  test('a bad request after good ones: the good ones are answered first, in order', async () => {
    const c = new RawClient(port)
    await c.connected
    c.write('GET /one HTTP/1.1\r\nHost: a\r\n\r\nGET /two HTTP/1.1\r\nHost: a\r\n\r\nBAD\r\n\r\n')
    const res = await c.waitFor(3)
    expect(res.map((r) => r.status)).toEqual([200, 200, 400])
    await c.waitClosed()
    expect(w.requests.map((r) => r.url)).toEqual(['/one', '/two'])
  })

  test('a malformed chunk after the head was dispatched: the worker gets an abort, the client 400', async () => {
    const hub2 = await startHub()
    const p = (await hub2.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
    const x = await startWorker(hub2, { queue: 'q', handle: (req, body, y) => reply(y, req, 200, 'ok') })
    try {
      const c = new RawClient(p)
      await c.connected
      c.write('POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n')
      await until(() => x.requests.length === 1, 2000, 'dispatched')
      c.write('zz\r\n')
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(400)
      await c.waitClosed()
      await until(() => x.aborted.length === 1, 2000, 'abort at the worker')
      expect(x.aborted).toEqual([x.requests[0].id])
    } finally {
      x.att.close()
      await hub2.close()
    }
  })

  test('a body above the queue\'s maxBodySize is 413 and never dispatched', async () => {
    const small = await startHub()
    const p = (await small.createQueue('small', { urls: ['http://+:0/'], maxBodySize: 10 })).ports[0]
    const x = await startWorker(small, { queue: 'small', handle: (req, body, y) => reply(y, req, 200, 'ok') })
    try {
      const c = new RawClient(p)
      await c.connected
      c.write('POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world')
      const [res] = await c.waitFor(1)
      expect(res.status).toBe(413)
      expect(x.requests).toHaveLength(0)
    } finally {
      x.att.close()
      await small.close()
    }
  })
})
