'use strict'

// A connection's pipelined responses, seen from its client and its worker, on both
// routers: the JS hub (src/hub, since removed) and the native one (router/, issue 25). Ported from
// test/unit/hub/pipeline-order.test.js, which drives the hub's ClientConnection over a
// fake socket: what of it a client or an app can notice runs here against both.

const { RESPONSE_MORE, RESPONSE_CLOSE } = require('../../src/wire/contract')
const { startWorker, reply, RawClient, until } = require('../helpers/hub-harness')
const { ROUTERS } = require('../helpers/routers')

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(ROUTERS)('%s: pipelined responses', (name, start) => {
  const routers = []
  const workers = []
  const clients = []

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close()
    for (const w of workers.splice(0)) w.att.close()
    for (const r of routers.splice(0)) await r.close()
  })

  async function setup (opts) {
    const r = await start()
    routers.push(r)
    const port = (await r.createQueue('app', { urls: ['http://+:0/'] })).ports[0]
    const w = await startWorker(r, { queue: 'app', onRequest: () => {}, ...opts })
    workers.push(w)
    // a worker takes requests once its first ACK is in (wire-protocol.md "Lifecycle")
    await sleep(50)
    const c = new RawClient(port)
    clients.push(c)
    await c.connected
    // every byte the client reads, as it came (RawClient splits responses, not HEAD's)
    c.raw = ''
    c.socket.on('data', (d) => { c.raw += d.toString('latin1') })
    return { r, w, c }
  }

  test('a later response is held while an earlier one is still streaming', async () => {
    const { w, c } = await setup()
    c.write('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => w.requests.length === 2, 2000, 'both requests at the worker')
    const [first, second] = w.requests
    w.att.respond(first.id, 200, 'OK', ['Transfer-Encoding', 'chunked'], null, RESPONSE_MORE)
    reply(w, second, 200, 'second')
    w.att.sendBody(first.id, Buffer.from('5\r\nfirst\r\n'), RESPONSE_MORE)
    await until(() => c.raw.includes('first'), 2000, 'the first piece')
    await sleep(100)
    expect(c.raw).not.toContain('second')
    w.att.sendBody(first.id, Buffer.from('0\r\n\r\n'), 0)
    const res = await c.waitFor(2)
    expect(res.map((x) => x.body.toString())).toEqual(['first', 'second'])
    expect(c.raw.indexOf('first')).toBeLessThan(c.raw.indexOf('second'))
    expect(c.raw.endsWith('second')).toBe(true)
  })

  test('a close response ends the connection and aborts the requests behind it', async () => {
    const { w, c } = await setup()
    c.write('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => w.requests.length === 2, 2000, 'both requests at the worker')
    const body = Buffer.from('bye')
    w.att.respond(w.requests[0].id, 200, 'OK', ['Content-Length', '3'], body, RESPONSE_CLOSE)
    await c.waitClosed()
    expect(c.raw).toContain('Connection: close\r\n')
    expect(c.responses.map((x) => x.body.toString())).toEqual(['bye'])
    await until(() => w.aborted.length === 1, 2000, 'the abort of the request behind it')
    expect(w.aborted).toEqual([w.requests[1].id])
  })

  test('HTTP/1.0 keep-alive gets Connection: keep-alive; a HEAD response never carries a body', async () => {
    const { w, c } = await setup({ onRequest: (req, x) => reply(x, req, 200, req.url === '/1' ? 'one' : 'not sent') })
    c.write('GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nHEAD /2 HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => c.raw.endsWith('\r\n\r\n') && c.raw.includes('one'), 2000, 'both answers')
    await sleep(100)
    expect(c.raw).toContain('Connection: keep-alive\r\n')
    expect(c.raw).not.toContain('not sent')
    expect(c.raw.endsWith('Content-Length: 8\r\n\r\n')).toBe(true)
    expect(w.requests.map((x) => x.method)).toEqual(['GET', 'HEAD'])
  })

  test('the router is closing: one Connection: close, the worker\'s lines dropped', async () => {
    const { r, w, c } = await setup()
    c.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => w.requests.length === 1, 2000, 'the request at the worker')
    const closed = r.close()
    await sleep(100)
    w.att.respond(w.requests[0].id, 200, 'OK', ['CONNECTION', 'Keep-Alive', 'Content-Length', '2'], Buffer.from('ok'), 0)
    const [res] = await c.waitFor(1)
    expect(res.head.split('\r\n').filter((l) => /^(connection|keep-alive):/i.test(l))).toEqual(['Connection: close'])
    await closed
  })
})
