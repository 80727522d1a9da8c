'use strict'

const { once } = require('node:events')
const http = require('../../../src/http')
const { createMemoryQueue } = require('../../helpers/memory-queue')
const { codes } = require('../../../src/errors')
const { start, stopAll, settle } = require('./start')

afterEach(stopAll)

function newServer (handler, mqOpts, serverOpts) {
  const mq = createMemoryQueue(mqOpts)
  const server = http.createServer({ queueBackend: mq.backend, ...serverOpts }, handler)
  return { mq, server }
}

describe('Server object', () => {
  test('http.Server works with and without new, and createServer returns one', () => {
    expect(http.createServer()).toBeInstanceOf(http.Server)
    expect(http.Server()).toBeInstanceOf(http.Server)
    class Mine extends http.Server {}
    expect(new Mine()).toBeInstanceOf(http.Server)
  })

  test('node\'s settable properties and defaults', () => {
    const s = http.createServer()
    expect(s.listening).toBe(false)
    expect(s.address()).toBe(null)
    expect(s.timeout).toBe(0)
    expect(s.keepAliveTimeout).toBe(5000)
    expect(s.requestTimeout).toBe(300000)
    expect(s.headersTimeout).toBe(60000)
    expect(s.maxHeadersCount).toBe(null)
    expect(s.maxRequestsPerSocket).toBe(0)
    expect(s.setTimeout(10)).toBe(s)
    expect(s.timeout).toBe(10)
    expect(s.ref()).toBe(s)
    expect(s.unref()).toBe(s)
    s.keepAliveTimeout = 1
    expect(s.keepAliveTimeout).toBe(1)
  })

  test('options.IncomingMessage / options.ServerResponse subclasses are used', async () => {
    class MyReq extends http.IncomingMessage { get who () { return 'mine' } }
    class MyRes extends http.ServerResponse { hello () { this.end('hello from subclass') } }
    let seen
    const { mq } = await start((req, res) => {
      seen = [req instanceof MyReq, res instanceof MyRes, req.who]
      res.hello()
    }, { server: { IncomingMessage: MyReq, ServerResponse: MyRes } })
    const h = mq.request()
    await h.done
    expect(seen).toEqual([true, true, 'mine'])
    expect(h.text).toBe('hello from subclass')
  })

  test('the default backend is used when no queueBackend is given', async () => {
    const mq = createMemoryQueue()
    http.setDefaultBackend(mq.backend)
    try {
      const server = http.createServer((req, res) => res.end('via default'))
      server.listen(0)
      await once(server, 'listening')
      const h = mq.request()
      await h.done
      expect(h.text).toBe('via default')
      await new Promise((resolve) => server.close(resolve))
    } finally {
      http.setDefaultBackend(null)
    }
  })
})

describe('listen()', () => {
  test('listen(0, cb): "listening", callback, address() from attachment.info', async () => {
    const { mq, server } = newServer(null, { ports: [43210] })
    const order = []
    server.on('listening', () => order.push('event'))
    expect(server.listen(0, () => order.push('cb'))).toBe(server)
    expect(server.listening).toBe(false) // attaching is asynchronous, as node's 'listening'
    await once(server, 'listening')
    expect(order).toEqual(['event', 'cb']) // the callback is a 'listening' listener added by listen()
    expect(server.listening).toBe(true)
    expect(server.address()).toEqual({ address: '::', family: 'IPv6', port: 43210 })
    expect(mq.attachOptions.urls).toEqual(['http://+:0/'])
    expect(mq.attachOptions.queue).toBeUndefined()
    expect(typeof mq.attachOptions.handlers.onRequest).toBe('function')
    await new Promise((resolve) => server.close(resolve))
    expect(server.address()).toBe(null)
  })

  test.each([
    [[8080], ['http://+:8080/'], { address: '::', family: 'IPv6' }],
    [['8080'], ['http://+:8080/'], { address: '::', family: 'IPv6' }],
    [[8080, '127.0.0.1'], ['http://127.0.0.1:8080/'], { address: '127.0.0.1', family: 'IPv4' }],
    [[8080, 'localhost', 511], ['http://127.0.0.1:8080/'], { address: '127.0.0.1', family: 'IPv4' }],
    [[{ port: 8080, host: '::1' }], ['http://[::1]:8080/'], { address: '::1', family: 'IPv6' }],
    [['http://+:8080/api'], ['http://+:8080/api/'], { address: '::', family: 'IPv6' }],
    [[], ['http://+:0/'], { address: '::', family: 'IPv6' }]
  ])('listen(%j) registers %j', async (args, urls, address) => {
    const { mq, server } = newServer(null, { ports: [8080] })
    server.listen(...args)
    await once(server, 'listening')
    expect(mq.attachOptions.urls).toEqual(urls)
    expect(server.address()).toEqual({ ...address, port: 8080 })
    await new Promise((resolve) => server.close(resolve))
  })

  test('under the supervisor the app\'s queue is used', async () => {
    const saved = process.env.HTTPSYS_QUEUE
    process.env.HTTPSYS_QUEUE = 'app-queue'
    try {
      const { mq, server } = newServer()
      server.listen(3000)
      await once(server, 'listening')
      expect(mq.attachOptions.queue).toBe('app-queue')
      expect(mq.attachOptions.urls).toEqual(['http://+:3000/'])
      await new Promise((resolve) => server.close(resolve))
    } finally {
      if (saved === undefined) delete process.env.HTTPSYS_QUEUE
      else process.env.HTTPSYS_QUEUE = saved
    }
  })

  test('bad arguments throw synchronously with node codes', () => {
    const { server } = newServer()
    expect(() => server.listen(70000)).toThrow(expect.objectContaining({ code: 'ERR_SOCKET_BAD_PORT' }))
    expect(() => server.listen(-1)).toThrow(expect.objectContaining({ code: 'ERR_SOCKET_BAD_PORT' }))
    expect(() => server.listen({})).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }))
    expect(() => server.listen({ _handle: {} })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }))
    expect(() => server.listen({ fd: 3 })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }))
    // a backend that cannot listen on a path (this one: HTTP.SYS standalone too)
    expect(() => server.listen('/tmp/app.sock')).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_LISTEN_PATH' }))
    expect(() => server.listen('http://+:8080/?q')).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_BAD_PREFIX' }))
    expect(server.listening).toBe(false)
  })

  test('listen() twice: ERR_SERVER_ALREADY_LISTEN', async () => {
    const { server } = await start(null)
    expect(() => server.listen(0)).toThrow(expect.objectContaining({ code: 'ERR_SERVER_ALREADY_LISTEN' }))
  })

  test('an attach failure is an "error" event; a taken port reads EADDRINUSE as on node', async () => {
    const taken = new codes.ERR_HTTPSYS_PORT_IN_USE({ port: 8080, owner: 'pid 42 (nginx)' })
    const { server } = newServer(null, { attachError: taken })
    server.listen(8080)
    const [err] = await once(server, 'error')
    expect(err.code).toBe('EADDRINUSE')
    expect(err.httpsysCode).toBe('ERR_HTTPSYS_PORT_IN_USE')
    expect(err.syscall).toBe('listen')
    expect(err.port).toBe(8080)
    expect(err.message).toMatch(/pid 42 \(nginx\)/)
    expect(server.listening).toBe(false)

    const other = new codes.ERR_HTTPSYS_QUEUE_NOT_FOUND({ queue: 'nope' })
    const second = newServer(null, { attachError: other }).server
    second.listen(0)
    const [err2] = await once(second, 'error')
    expect(err2.code).toBe('ERR_HTTPSYS_QUEUE_NOT_FOUND')
  })

  test('after a failed listen the server can listen again', async () => {
    const mq = createMemoryQueue({ attachError: new codes.ERR_HTTPSYS_URL_CONFLICT({ prefix: 'http://+:80/' }) })
    const server = http.createServer({ queueBackend: mq.backend })
    server.listen(80)
    const [err] = await once(server, 'error')
    expect(err.code).toBe('EADDRINUSE')
    mq.backend.attach = createMemoryQueue().backend.attach
    server.listen(81)
    await once(server, 'listening')
    expect(server.listening).toBe(true)
    await new Promise((resolve) => server.close(resolve))
  })

  test('options.signal closes the server', async () => {
    const { server } = newServer()
    const ac = new AbortController()
    server.listen({ port: 0, signal: ac.signal })
    await once(server, 'listening')
    const closed = once(server, 'close')
    ac.abort()
    await closed
    expect(server.listening).toBe(false)
  })
})

describe('close()', () => {
  test('detaches at once, waits for requests in flight, then closes the attachment', async () => {
    let resRef
    const { mq, server } = await start((req, res) => { resRef = res })
    const h = mq.request()
    let closed = false
    server.close(() => { closed = true })
    expect(server.listening).toBe(false)
    await settle()
    expect(mq.callsOf('detach')).toHaveLength(1)
    expect(mq.callsOf('close')).toHaveLength(0)
    expect(closed).toBe(false)
    resRef.end('last one')
    await h.done
    await settle()
    expect(closed).toBe(true)
    expect(mq.callsOf('close')).toHaveLength(1)
    expect(h.text).toBe('last one')
  })

  test('a request received between detach() and its confirmation is still served', async () => {
    const { mq, server } = await start((req, res) => setTimeout(() => res.end('ok'), 5))
    const closed = once(server, 'close')
    server.close()
    const h = mq.request() // the router had already sent it
    await closed
    expect((await h.done).ended).toBe(true)
    expect(h.text).toBe('ok')
  })

  test('close() calls this.closeIdleConnections() once, listening or not, as node\'s (an override of it runs: fastify counts the calls)', async () => {
    const { server } = await start(null)
    let called = 0
    server.closeIdleConnections = function () {
      expect(this).toBe(server)
      called++
    }
    await new Promise((resolve) => server.close(resolve))
    expect(called).toBe(1)
    await new Promise((resolve) => server.close(resolve))
    expect(called).toBe(2)
  })

  test('close() when not listening: ERR_SERVER_NOT_RUNNING to the callback, "close" emitted', async () => {
    const { server } = newServer()
    const events = []
    server.on('close', () => events.push('close'))
    const err = await new Promise((resolve) => server.close(resolve))
    expect(err.code).toBe('ERR_SERVER_NOT_RUNNING')
    expect(events).toEqual(['close'])
  })

  test('closeAllConnections() cancels the requests in flight', async () => {
    const { mq, server } = await start(() => {})
    const a = mq.request()
    const b = mq.request()
    const closed = new Promise((resolve) => server.close(resolve))
    server.closeAllConnections()
    expect((await a.done).cancelled).toBe(true)
    expect((await b.done).cancelled).toBe(true)
    expect(await closed).toBeUndefined()
  })

  test('the router going away: requests aborted, "error" with its code, then "close"', async () => {
    const { mq, server } = await start(() => {})
    const h = mq.request()
    const events = []
    server.on('error', (err) => events.push('error ' + err.code))
    server.on('close', () => events.push('close'))
    mq.fail(new codes.ERR_HTTPSYS_QUEUE_CLOSED({ queue: 'q' }))
    await settle()
    expect(h.response.aborted).toBe(true)
    expect(events).toEqual(['error ERR_HTTPSYS_QUEUE_CLOSED', 'close'])
    expect(server.listening).toBe(false)
  })

  test('listeningServers() lists what listens, for the preload\'s graceful stop', async () => {
    const { server } = await start(null)
    expect(http.listeningServers()).toContain(server)
    await new Promise((resolve) => server.close(resolve))
    expect(http.listeningServers()).not.toContain(server)
  })
})

describe('Expect', () => {
  test('100-continue without a checkContinue listener: writeContinue, then "request"', async () => {
    const { mq } = await start((req, res) => req.pipe(res))
    const h = mq.request({ method: 'POST', rawHeaders: ['Host', 'a', 'Expect', '100-continue'], body: 'data' })
    await h.done
    expect(h.response.continues).toBe(1)
    const ops = mq.calls.filter((c) => c.id === h.id).map((c) => c.op)
    expect(ops[0]).toBe('writeContinue')
    expect(h.text).toBe('data')
  })

  test('a checkContinue listener decides', async () => {
    const { mq, server } = await start(() => { throw new Error('not "request"') })
    server.removeAllListeners('request')
    server.on('checkContinue', (req, res) => {
      if (req.url === '/no') {
        res.writeHead(417).end()
        return
      }
      res.writeContinue()
      req.pipe(res)
    })
    const denied = mq.request({ url: '/no', method: 'POST', rawHeaders: ['Expect', '100-Continue'], body: 'x' })
    await denied.done
    expect(denied.response.statusCode).toBe(417)
    expect(denied.response.continues).toBe(0)
    const ok = mq.request({ url: '/yes', method: 'POST', rawHeaders: ['Expect', '100-continue'], body: 'y' })
    await ok.done
    expect(ok.response.continues).toBe(1)
    expect(ok.text).toBe('y')
  })

  test('another expectation: 417 unless checkExpectation is listened for', async () => {
    const { mq, server } = await start(() => { throw new Error('not reached') })
    const h = mq.request({ rawHeaders: ['Expect', 'something-else'] })
    await h.done
    expect(h.response.statusCode).toBe(417)
    server.on('checkExpectation', (req, res) => res.end('handled ' + req.headers.expect))
    const h2 = mq.request({ rawHeaders: ['Expect', 'something-else'] })
    await h2.done
    expect(h2.text).toBe('handled something-else')
  })

  test('HTTP/1.0 ignores Expect, as node', async () => {
    const { mq } = await start((req, res) => res.end('plain'))
    const h = mq.request({ httpVersion: '1.0', rawHeaders: ['Expect', '100-continue'] })
    await h.done
    expect(h.response.continues).toBe(0)
    expect(h.text).toBe('plain')
  })
})

describe('errors in the app', () => {
  test('a rejected async handler is answered 500 without leaking headers, and the server keeps serving', async () => {
    const { mq } = await start(async (req, res) => {
      if (req.url === '/boom') {
        res.setHeader('X-Secret', 'leak')
        await new Promise((resolve) => setImmediate(resolve))
        throw new Error('rejected on purpose')
      }
      res.end('fine')
    })
    const h = mq.request({ url: '/boom' })
    await h.done
    expect(h.response.statusCode).toBe(500)
    expect(h.text).toBe('Internal Server Error')
    expect(h.response.headers['x-secret']).toBeUndefined()
    const next = mq.request({ url: '/' })
    await next.done
    expect(next.text).toBe('fine')
  })

  test('a rejection after the head was sent resets the request', async () => {
    const { mq } = await start(async (req, res) => {
      res.write('partial')
      await new Promise((resolve) => setImmediate(resolve))
      throw new Error('late failure')
    })
    const h = mq.request()
    await h.done
    expect(h.response.cancelled).toBe(true)
  })

  test('a synchronous throw is not caught (node\'s behaviour: the process would crash)', async () => {
    const { mq } = await start(() => { throw new Error('sync throw') })
    expect(() => mq.request()).toThrow('sync throw')
  })
})

describe('client disconnect', () => {
  test('req "aborted" + res "close" without "finish", socket "close"', async () => {
    let got
    const { mq } = await start((req, res) => { got = { req, res } })
    const h = mq.request({ method: 'POST', manualBody: true, body: [] })
    const events = []
    got.req.on('aborted', () => events.push('req aborted'))
    got.req.on('error', (err) => events.push('req error ' + err.code + ' ' + err.message))
    got.req.on('close', () => events.push('req close'))
    got.res.on('finish', () => events.push('res finish'))
    got.res.on('close', () => events.push('res close'))
    got.req.socket.on('close', () => events.push('socket close'))
    h.abort()
    await settle()
    expect(events).toEqual(['req aborted', 'res close', 'socket close', 'req error ECONNRESET aborted', 'req close'])
    expect(got.req.aborted).toBe(true)
    expect(got.res.destroyed).toBe(true)
    expect(got.req.socket.destroyed).toBe(true)
    // writing to a response whose client left is harmless
    got.res.end('nobody listens')
    await settle()
    expect(mq.callsOf('respond')).toHaveLength(0)
  })

  test('no "error" listener on req: nothing is thrown', async () => {
    let got
    const { mq } = await start((req, res) => { got = res })
    const h = mq.request()
    h.abort()
    await settle()
    expect(got.destroyed).toBe(true)
  })

  test('normal completion: res "finish" then "close", then req "close"', async () => {
    const events = []
    const { mq } = await start((req, res) => {
      req.on('close', () => events.push('req close'))
      res.on('finish', () => events.push('res finish'))
      res.on('close', () => events.push('res close'))
      res.end()
    })
    const h = mq.request()
    await h.done
    await settle()
    expect(events).toEqual(['res finish', 'res close', 'req close'])
  })
})

describe('timeouts', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }))
  afterEach(() => jest.useRealTimers())

  test('server.setTimeout: "timeout" on the server with the socket; the request is kept', async () => {
    const { mq, server } = await start(() => {})
    const seen = []
    server.setTimeout(1000, (socket) => seen.push(socket.remoteAddress))
    const h = mq.request()
    jest.advanceTimersByTime(1001)
    expect(seen).toEqual(['127.0.0.1'])
    expect(h.live).toBe(true)
  })

  test('socket timeout nobody listens for resets the connection', async () => {
    let got
    const { mq } = await start((req, res) => { got = res })
    const h = mq.request()
    got.socket.setTimeout(500)
    jest.advanceTimersByTime(501)
    await h.done
    expect(h.response.cancelled).toBe(true)
  })

  test('res.setTimeout fires "timeout" on the response', async () => {
    let fired = 0
    const { mq } = await start((req, res) => res.setTimeout(200, () => { fired++; res.end('late') }))
    const h = mq.request()
    jest.advanceTimersByTime(201)
    await h.done
    expect(fired).toBe(1)
    expect(h.text).toBe('late')
  })

  test('requestTimeout: a body that does not arrive in time is answered 408', async () => {
    const { mq } = await start(() => {}, { server: { requestTimeout: 1000, connectionsCheckingInterval: 500 } })
    const h = mq.request({ method: 'POST', manualBody: true, body: [] })
    jest.advanceTimersByTime(1600)
    await h.done
    expect(h.response.statusCode).toBe(408)
    const done = mq.request()
    jest.advanceTimersByTime(5000)
    expect(done.live).toBe(true) // complete requests never time out this way
  })
})
