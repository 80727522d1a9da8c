'use strict'

// A worker that sends malformed frames is dropped as if it had died, and nothing it
// sent reaches a client: the client gets the hub's own 502 (or its request goes to
// another worker), and the router logs ERR_HTTPSYS_PROTOCOL. On the native router
// (router/, issue 25; the JS hub, src/hub, ran it too until it was removed).

const pino = require('pino')
const { T } = require('../../src/wire/protocol')
const { RESPONSE_MORE } = require('../../src/wire/contract')
const { startWorker, reply, RawClient, until } = require('../helpers/hub-harness')
const { ROUTERS, eventually } = require('../helpers/routers')
const { EvilWorker, responsePayload } = require('../helpers/hub-evil-worker')

describe.each(ROUTERS)('%s against a worker that breaks the protocol', (name, start) => {
  let hub
  let port
  const logs = []
  let good = null

  beforeAll(async () => {
    const logger = pino({ level: 'warn' }, { write (line) { logs.push(JSON.parse(line)) } })
    hub = await start({ logger })
    port = (await hub.createQueue('q', { urls: ['http://+:0/'] })).ports[0]
  })

  afterEach(() => {
    if (good !== null) good.att.close()
    good = null
  })

  afterAll(async () => {
    await hub.close()
  })

  async function evil () {
    await eventually(async () => (await hub.queueStats('q')).workers.length === 0, 3000, 'the last test\'s workers gone')
    const e = new EvilWorker(hub.socketPath, 'q')
    await until(() => e.attached, 3000, 'the evil worker attached')
    await eventually(async () => (await hub.queueStats('q')).workers.length === 1, 3000, 'the worker in the queue')
    return e
  }

  const protocolLogs = () => logs.filter((l) => l.code === 'ERR_HTTPSYS_PROTOCOL')

  async function expectDropped (e, before, remaining = 0) {
    await until(() => e.closed, 3000, 'the hub to drop the worker')
    await until(() => protocolLogs().length > before, 3000, 'the protocol error in the log')
    const entry = protocolLogs()[before]
    expect(entry.err.code).toBe('ERR_HTTPSYS_PROTOCOL')
    expect((await hub.queueStats('q')).workers).toHaveLength(remaining)
  }

  test.each([
    { name: 'a header block longer than the frame', payload: () => responsePayload({ block: '', body: '', blockLength: 60000 }) },
    { name: 'a header block length of 2^32-1', payload: () => responsePayload({ block: '', body: '', blockLength: 0xffffffff }) },
    { name: 'a reason longer than the frame', payload: () => responsePayload({ reason: 'OK', reasonLength: 5000, block: '', body: '' }) },
    { name: 'a payload shorter than the fixed fields', payload: () => Buffer.from([200]) },
    { name: 'status 65535', payload: () => responsePayload({ status: 65535 }) },
    { name: 'status 99', payload: () => responsePayload({ status: 99 }) },
    { name: 'status 150 (1xx other than through CONTINUE)', payload: () => responsePayload({ status: 150 }) },
    { name: 'status 100 as a final response', payload: () => responsePayload({ status: 100 }) },
    { name: 'a reason with CR LF in it (response splitting)', payload: () => responsePayload({ reason: 'OK\r\nSet-Cookie: x=1' }) },
    { name: 'a header block that does not end in CR LF', payload: () => responsePayload({ block: 'Content-Length: 2' }) },
    { name: 'a header block that starts with the blank line', payload: () => responsePayload({ block: '\r\nX: y\r\n' }) }
  ])('a RESPONSE with $name: the client gets the hub\'s 502, nothing of the frame', async ({ payload }) => {
    const before = protocolLogs().length
    const e = await evil()
    const c = new RawClient(port)
    await c.connected
    c.write('GET /x HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => e.requests.length === 1, 3000, 'the request at the evil worker')
    e.ack(1)
    e.send(T.RESPONSE, e.requests[0].id, payload())
    const [res] = await c.waitFor(1)
    expect(res.status).toBe(502)
    expect(res.head.startsWith('HTTP/1.1 502 Bad Gateway\r\n')).toBe(true)
    expect(res.body.toString()).toContain('HTTP Error 502')
    await expectDropped(e, before)
    // Nothing beyond the hub's own page arrived (no bytes of the bad frame, no garbage).
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(c.responses).toHaveLength(1)
    expect(c.buf.length).toBe(0)
    c.close()
  })

  test('a RES_BODY without its flags byte is a protocol error too', async () => {
    const before = protocolLogs().length
    const e = await evil()
    const c = new RawClient(port)
    await c.connected
    c.write('GET /x HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => e.requests.length === 1, 3000, 'the request at the evil worker')
    e.ack(1)
    const id = e.requests[0].id
    e.send(T.RESPONSE, id, responsePayload({ flags: RESPONSE_MORE, block: 'Transfer-Encoding: chunked\r\n', body: '' }))
    e.send(T.RES_BODY, id, Buffer.alloc(0))
    await expectDropped(e, before)
    // The head had gone out: the client's connection is cut, as for a dead worker.
    await c.waitClosed()
    expect(c.responses).toHaveLength(0)
  })

  test('101 is refused with the 501 of opaque mode, the worker is not at fault', async () => {
    const e = await evil()
    const c = new RawClient(port)
    await c.connected
    c.write('GET /x HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => e.requests.length === 1, 3000, 'the request at the evil worker')
    e.ack(1)
    e.send(T.RESPONSE, e.requests[0].id, responsePayload({ status: 101, reason: 'Switching Protocols', block: 'Upgrade: x\r\n', body: '' }))
    const [res] = await c.waitFor(1)
    expect(res.status).toBe(501)
    expect(e.closed).toBe(false)
    e.close()
    c.close()
  })

  test('what the bad worker acknowledged gets 502; what it did not is served by another worker', async () => {
    const before = protocolLogs().length
    const e = await evil()
    const c1 = new RawClient(port)
    const c2 = new RawClient(port)
    await Promise.all([c1.connected, c2.connected])
    c1.write('GET /first HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => e.requests.length === 1, 3000, 'the first request')
    c2.write('GET /second HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => e.requests.length === 2, 3000, 'the second request')
    e.ack(1)
    good = await startWorker(hub, { queue: 'q', handle: (req, body, w) => reply(w, req, 200, `good ${req.url}`) })
    e.send(T.RESPONSE, e.requests[0].id, responsePayload({ blockLength: 1 << 20 }))
    const [[r1], [r2]] = await Promise.all([c1.waitFor(1), c2.waitFor(1)])
    expect(r1.status).toBe(502)
    expect(r2.status).toBe(200)
    expect(r2.body.toString()).toBe('good /second')
    expect(good.requests.map((r) => r.url)).toEqual(['/second'])
    await expectDropped(e, before, 1)
    c1.close()
    c2.close()
  })

  test.each([
    { name: 'an ACK for more requests than were sent', send: (e) => e.ack(5) },
    { name: 'an ACK without its u32', send: (e) => e.send(T.ACK, 0, Buffer.alloc(2)) },
    { name: 'a READ without its u32', send: (e) => e.send(T.READ, e.requests[0].id, Buffer.alloc(0)) }
  ])('$name drops the worker; its unacknowledged request goes to another worker', async ({ send }) => {
    const before = protocolLogs().length
    const e = await evil()
    const c = new RawClient(port)
    await c.connected
    c.write('GET /again HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => e.requests.length === 1, 3000, 'the request at the evil worker')
    send(e)
    await expectDropped(e, before)
    good = await startWorker(hub, { queue: 'q', handle: (req, body, w) => reply(w, req, 200, 'served') })
    const [res] = await c.waitFor(1)
    expect(res.status).toBe(200)
    expect(res.body.toString()).toBe('served')
    c.close()
  })

  test('a well-formed response still goes through untouched', async () => {
    const e = await evil()
    const c = new RawClient(port)
    await c.connected
    c.write('GET /x HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => e.requests.length === 1, 3000, 'the request at the evil worker')
    e.ack(1)
    e.send(T.RESPONSE, e.requests[0].id, responsePayload({ status: 299, reason: 'Fine', block: 'Content-Length: 2\r\nX-A: b\r\n' }))
    const [res] = await c.waitFor(1)
    expect(res.status).toBe(299)
    expect(res.head.split('\r\n')[0]).toBe('HTTP/1.1 299 Fine')
    expect(res.headers['x-a']).toBe('b')
    expect(res.body.toString()).toBe('ok')
    expect(e.closed).toBe(false)
    e.close()
    c.close()
  })

  test('CONN_END ends only a client connection the worker had requests of; others are left alone', async () => {
    const e = await evil()
    const mine = new RawClient(port)
    const other = new RawClient(port)
    await Promise.all([mine.connected, other.connected])
    // `other` has a request at a well-behaved worker only (the evil one never sees it)
    mine.write('GET /mine HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => e.requests.length === 1, 3000, 'the request at the evil worker')
    e.ack(1)
    e.send(T.RESPONSE, e.requests[0].id, responsePayload({ status: 200, reason: 'OK', block: 'Content-Length: 2\r\n' }))
    await mine.waitFor(1)
    // the evil worker asks to end every connection the router has, by guessing ids
    // (both count them from 1)
    for (let id = 0; id <= 1000; id++) e.send(T.CONN_END, id, Buffer.alloc(0))
    await mine.waitClosed()
    await new Promise((resolve) => setTimeout(resolve, 100))
    expect(other.socket.destroyed).toBe(false)
    e.close()
    mine.close()
    other.close()
  })
})
