'use strict'

// When the hub closes the client connection after a response (the client asked,
// HTTP/1.0, the hub is closing) and the worker wrote its own Connection header, the
// client must read "close", never "keep-alive" followed by a closed connection. On both
// routers, the JS hub (src/hub, since removed) and the native one (router/, issue 25).

const { startWorker, reply, RawClient } = require('../helpers/hub-harness')
const { ROUTERS } = require('../helpers/routers')

describe.each(ROUTERS)('%s: the Connection header the client reads', (name, start) => {
  let hub
  let port
  let w

  beforeAll(async () => {
    hub = await start()
    port = (await hub.createQueue('app', { urls: ['http://+:0/'] })).ports[0]
    // An app that always claims keep-alive, as a framework setting headers by hand may.
    w = await startWorker(hub, { queue: 'app', handle: (req, body, x) => reply(x, req, 200, 'ok', ['Connection', 'keep-alive', 'Keep-Alive', 'timeout=5']) })
  })

  afterAll(async () => {
    w.att.close()
    await hub.close()
  })

  const connectionHeaders = (head) => head.split('\r\n').filter((l) => /^(connection|keep-alive):/i.test(l))

  test.each([
    { name: 'Connection: close from the client', text: 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n' },
    { name: 'HTTP/1.0 without keep-alive', text: 'GET / HTTP/1.0\r\n\r\n' }
  ])('$name: the router\'s close wins over the worker\'s keep-alive', async ({ text }) => {
    const c = new RawClient(port)
    await c.connected
    c.write(text)
    const [res] = await c.waitFor(1)
    expect(connectionHeaders(res.head)).toEqual(['Connection: close'])
    expect(res.body.toString()).toBe('ok')
    await c.waitClosed()
  })

  test('a keep-alive connection keeps the worker\'s headers as they are', async () => {
    const c = new RawClient(port)
    await c.connected
    c.write('GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n')
    const res = await c.waitFor(2)
    expect(connectionHeaders(res[1].head)).toEqual(['Connection: keep-alive', 'Keep-Alive: timeout=5'])
    expect(c.ended).toBe(false)
    c.close()
  })
})
