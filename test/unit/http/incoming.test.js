'use strict'

const { Readable, Writable, pipeline } = require('node:stream')
const { IncomingMessage } = require('../../../src/http')
const { start, stopAll, settle } = require('./start')
const { RESPONSE_MORE } = require('../../../src/wire/contract')

afterEach(stopAll)

/** Starts a server and injects one request; resolves with { req, res, h, mq }. */
async function receive (request, opts) {
  let got
  const { mq } = await start((req, res) => { got = { req, res } }, opts)
  const h = mq.request(request)
  await settle(1)
  return { ...got, h, mq }
}

describe('request line and headers', () => {
  test('method, url, version and rawHeaders exactly as received', async () => {
    const raw = ['Host', 'example.com', 'X-Dup', 'a', 'x-dup', 'b', 'User-Agent', 'ua']
    const { req, res } = await receive({ method: 'PATCH', url: '/a%20b?q=1&q=2', rawHeaders: raw })
    expect(req).toBeInstanceOf(IncomingMessage)
    expect(req).toBeInstanceOf(Readable)
    expect(req.method).toBe('PATCH')
    expect(req.url).toBe('/a%20b?q=1&q=2')
    expect(req.httpVersion).toBe('1.1')
    expect(req.httpVersionMajor).toBe(1)
    expect(req.httpVersionMinor).toBe(1)
    expect(req.rawHeaders).toEqual(raw)
    expect(req.trailers).toEqual({})
    expect(req.rawTrailers).toEqual([])
    res.end()
  })

  test("headers follow node's rules: lower case, drop / join / set-cookie array / cookie '; '", async () => {
    const raw = [
      'Content-Type', 'text/plain', 'content-type', 'text/html',
      'Host', 'a', 'HOST', 'b',
      'User-Agent', 'u1', 'User-Agent', 'u2',
      'Authorization', 'x', 'Authorization', 'y',
      'Referer', 'r1', 'Referer', 'r2',
      'Set-Cookie', 's1', 'set-cookie', 's2',
      'Cookie', 'c=1', 'Cookie', 'd=2',
      'Accept', 'text/html', 'Accept', 'application/json',
      'X-Custom', '1', 'x-custom', '2',
      'Date', 'd1', 'Date', 'd2'
    ]
    const { req, res } = await receive({ rawHeaders: raw })
    expect(req.headers).toEqual({
      'content-type': 'text/plain',
      host: 'a',
      'user-agent': 'u1',
      authorization: 'x',
      referer: 'r1',
      'set-cookie': ['s1', 's2'],
      cookie: 'c=1; d=2',
      accept: 'text/html, application/json',
      'x-custom': '1, 2',
      date: 'd1, d2'
    })
    expect(Object.getPrototypeOf(req.headers)).toBe(Object.prototype)
    expect(req.headersDistinct.host).toEqual(['a', 'b'])
    expect(req.headersDistinct['x-custom']).toEqual(['1', '2'])
    res.end()
  })

  test('every single-valued header of node\'s list keeps its first value', async () => {
    const names = ['age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from',
      'host', 'if-modified-since', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards',
      'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent']
    const raw = []
    for (const n of names) raw.push(n, 'first', n, 'second')
    const { req, res } = await receive({ rawHeaders: raw })
    for (const n of names) expect(req.headers[n]).toBe('first')
    res.end()
  })

  test('joinDuplicateHeaders joins even those', async () => {
    const { req, res } = await receive({ rawHeaders: ['Host', 'a', 'Host', 'b'] }, { server: { joinDuplicateHeaders: true } })
    expect(req.headers.host).toBe('a, b')
    res.end()
  })

  test('headers is built on first access and can be replaced', async () => {
    const { req, res } = await receive({ rawHeaders: ['X-A', '1'] })
    req.headers = { replaced: 'yes' }
    expect(req.headers).toEqual({ replaced: 'yes' })
    res.end()
  })

  test('maxHeadersCount limits the header pairs kept, as node', async () => {
    const { req, res } = await receive({ rawHeaders: ['A', '1', 'B', '2', 'C', '3'] }, {})
    expect(req.rawHeaders).toHaveLength(6)
    res.end()
    let limited
    const { mq, server } = await start((r, s) => { limited = r; s.end() })
    server.maxHeadersCount = 2
    mq.request({ rawHeaders: ['A', '1', 'B', '2', 'C', '3'] })
    expect(limited.rawHeaders).toEqual(['A', '1', 'B', '2'])
  })

  test('HTTP/1.0', async () => {
    const { req, res } = await receive({ httpVersion: '1.0' })
    expect(req.httpVersion).toBe('1.0')
    expect(req.httpVersionMinor).toBe(0)
    res.end()
  })
})

describe('the body is a real Readable with backpressure', () => {
  test('a request without body ends as soon as someone reads', async () => {
    const { req, res } = await receive({ method: 'GET' })
    expect(req.complete).toBe(true)
    const chunks = []
    for await (const c of req) chunks.push(c)
    expect(chunks).toEqual([])
    res.end()
  })

  test('for await collects the body; readBody is what pulls it', async () => {
    const { req, res, h, mq } = await receive({ method: 'POST', body: ['hello ', 'big ', 'world'] })
    expect(mq.callsOf('readBody')).toHaveLength(0) // nobody asked yet
    let text = ''
    for await (const c of req) text += c
    expect(text).toBe('hello big world')
    expect(req.complete).toBe(true)
    expect(h.readBodyCalls).toBeGreaterThanOrEqual(3)
    res.end()
  })

  test('pipe() into a Writable and setEncoding', async () => {
    const { req, res } = await receive({ method: 'POST', body: [Buffer.from('é').subarray(0, 1), Buffer.concat([Buffer.from('é').subarray(1), Buffer.from('té')])] })
    req.setEncoding('utf8')
    const got = []
    await new Promise((resolve, reject) => {
      pipeline(req, new Writable({
        decodeStrings: false,
        write (chunk, enc, cb) { got.push(chunk); cb() }
      }), (err) => err ? reject(err) : resolve())
    })
    expect(got.join('')).toBe('été')
    expect(typeof got[0]).toBe('string')
    res.end()
  })

  test('pause() holds the data back; resume() delivers it; no busy asking meanwhile', async () => {
    const { req, res, h } = await receive({ method: 'POST', manualBody: true, body: [] })
    const seen = []
    req.on('data', (c) => {
      seen.push(String(c))
      req.pause()
    })
    await settle()
    expect(h.readBodyCalls).toBe(1) // flowing: the stream asked for the first piece
    h.body('one')
    await settle()
    expect(seen).toEqual(['one'])
    const calls = h.readBodyCalls
    await settle(5)
    expect(h.readBodyCalls).toBe(calls) // one outstanding request for more, not a loop
    h.body('two')
    await settle()
    expect(seen).toEqual(['one']) // paused: buffered
    expect(req.readableLength).toBe(3)
    req.resume()
    await settle()
    expect(seen).toEqual(['one', 'two'])
    h.end()
    req.resume()
    await new Promise((resolve) => req.on('end', resolve))
    res.end()
  })

  test('a consumer that stops reading stops the readBody calls at the high water mark', async () => {
    const { req, res, h } = await receive({ method: 'POST', manualBody: true, body: [] })
    req.read(0) // start pulling, then never read again
    await settle()
    const big = Buffer.alloc(8 * 1024, 1)
    let calls = h.readBodyCalls
    for (let i = 0; i < 10; i++) {
      h.body(big)
      await settle()
    }
    calls = h.readBodyCalls
    // the buffer passed 16 KiB after 2 pieces: no more asking until someone reads
    expect(req.readableLength).toBe(80 * 1024)
    expect(calls).toBeLessThanOrEqual(3)
    req.resume()
    await settle()
    expect(h.readBodyCalls).toBeGreaterThan(calls)
    h.end()
    res.end()
  })

  test('an unread body is discarded after the response, and "end" and "close" still come', async () => {
    const { req, res, h } = await receive({ method: 'POST', manualBody: true, body: [] })
    const events = []
    req.on('end', () => events.push('end'))
    req.on('close', () => events.push('close'))
    h.body('ignored')
    res.end('early answer')
    await settle()
    expect(events).toEqual(['end', 'close'])
    expect(req.aborted).toBe(false)
  })

  test('an unread body: the response\'s end reaches the router at "finish" (sent with MORE, then ended), nothing waits for the body', async () => {
    const { res, h, mq } = await receive({ method: 'POST', manualBody: true, body: [] })
    res.end('early answer')
    await settle()
    const sends = mq.calls.filter((c) => (c.op === 'respond' || c.op === 'sendBody') && c.id === h.id)
    expect(sends.map((c) => [c.op, c.flags & RESPONSE_MORE])).toEqual([['respond', RESPONSE_MORE], ['sendBody', 0]])
  })

  test('answered first, then read: the body still arrives whole, "end" comes, and the router hears the response ended only after the body', async () => {
    const { req, res, h, mq } = await receive({ method: 'POST', manualBody: true, body: [] })
    res.writeHead(202, { 'Content-Length': '2' })
    res.end('ok')
    const got = []
    const events = []
    req.on('data', (c) => got.push(String(c)))
    req.on('end', () => events.push('end'))
    req.on('close', () => events.push('close'))
    res.on('finish', () => events.push('finish'))
    await settle()
    expect(events).toEqual(['finish'])
    const ended = () => mq.calls.filter((c) => (c.op === 'respond' || c.op === 'sendBody') && c.id === h.id && (c.flags & RESPONSE_MORE) === 0)
    expect(ended()).toHaveLength(0) // the response bytes are out; its end waits for the body
    h.body('late ')
    h.body('body')
    await settle()
    h.end()
    await settle()
    expect(got.join('')).toBe('late body')
    expect(events).toEqual(['finish', 'end', 'close'])
    expect(req.aborted).toBe(false)
    expect(ended()).toHaveLength(1)
    expect(h.text).toBe('ok')
  })

  test('req.setTimeout sets the socket timeout and listens for "timeout"', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] })
    try {
      const { req, res } = await receive({ method: 'POST', manualBody: true, body: [] })
      const timeouts = []
      expect(req.setTimeout(1000, () => timeouts.push('req'))).toBe(req)
      expect(req.socket.timeout).toBe(1000)
      jest.advanceTimersByTime(1100)
      expect(timeouts).toEqual(['req'])
      expect(req.socket.destroyed).toBe(false) // handled: not reset
      res.end()
    } finally {
      jest.useRealTimers()
    }
  })
})

describe('socket', () => {
  test('req.socket/req.connection/res.socket: addresses and the calls frameworks make', async () => {
    const { req, res } = await receive({ remoteAddress: '10.1.2.3', remotePort: 5555 })
    const s = req.socket
    expect(req.connection).toBe(s)
    expect(res.socket).toBe(s)
    expect(s.remoteAddress).toBe('10.1.2.3')
    expect(s.remotePort).toBe(5555)
    expect(s.remoteFamily).toBe('IPv4')
    expect(s.localPort).toBe(41234)
    expect(s.encrypted).toBeUndefined()
    expect(s.writable).toBe(true)
    expect(s.destroyed).toBe(false)
    expect(s.setNoDelay(true)).toBe(s)
    expect(s.setKeepAlive(true)).toBe(s)
    expect(s.setTimeout(0)).toBe(s)
    expect(s.address()).toEqual({ address: '127.0.0.1', family: 'IPv4', port: 41234 })
    res.end('x')
    await settle()
    expect(res.socket).toBe(null) // detached after finish, as node
    expect(req.socket).toBe(s)
  })

  test('encrypted is true for TLS connections (req.protocol in express)', async () => {
    const { req, res } = await receive({ encrypted: true })
    expect(req.socket.encrypted).toBe(true)
    res.end()
  })

  test('the router\'s TLS session answers as tls.TLSSocket: certificate, cipher, protocol, ALPN, SNI, authorization', async () => {
    const der = require('node:fs').readFileSync(require('node:path').join(__dirname, '..', '..', 'fixtures', 'tls', 'client.der'))
    const tls = {
      protocol: 'TLSv1.3',
      cipher: { name: 'TLS_AES_256_GCM_SHA384', standardName: 'TLS_AES_256_GCM_SHA384', version: 'TLSv1.3' },
      alpnProtocol: 'h2',
      servername: 'shop.example',
      authorized: false,
      authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      peerCertificate: der
    }
    const { req, res } = await receive({ encrypted: true, tls })
    const s = req.socket
    expect(s).toMatchObject({ encrypted: true, authorized: false, authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', alpnProtocol: 'h2', servername: 'shop.example' })
    expect(s.getProtocol()).toBe('TLSv1.3')
    expect(s.getCipher()).toEqual(tls.cipher)
    // a fresh object per call, as node's: changing one does not change the session
    s.getCipher().name = 'changed'
    expect(s.getCipher().name).toBe('TLS_AES_256_GCM_SHA384')
    const cert = s.getPeerCertificate()
    expect(cert.subject).toEqual({ C: 'DE', O: 'httpsys tests', CN: 'test client' })
    expect(cert.subjectaltname).toBe('DNS:client.test')
    expect(cert.fingerprint256).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/)
    expect(cert.raw.equals(der)).toBe(true)
    expect(new Date(cert.valid_to).getTime()).toBeGreaterThan(Date.now())
    res.end()
  })

  test('without a client certificate getPeerCertificate() is {} as on node', async () => {
    const { req, res } = await receive({ encrypted: true, tls: { protocol: 'TLSv1.2', cipher: null, alpnProtocol: false, servername: null, authorized: false, authorizationError: null, peerCertificate: null } })
    expect(req.socket.getPeerCertificate()).toEqual({})
    expect(req.socket.alpnProtocol).toBe(false)
    res.end()
  })

  test('requests of one connection share one socket while in flight', async () => {
    const reqs = []
    const { mq } = await start((req) => reqs.push(req))
    mq.request({ connectionId: 7 })
    mq.request({ connectionId: 7 })
    mq.request({ connectionId: 8 })
    expect(reqs[0].socket).toBe(reqs[1].socket)
    expect(reqs[0].socket).not.toBe(reqs[2].socket)
    for (const r of reqs) r[Object.getOwnPropertySymbols(r).find((s) => s.description === 'httpsys.response')].end()
  })

  test('socket.destroy() cancels the request on the router', async () => {
    const { req, res, h, mq } = await receive({})
    const events = []
    res.on('close', () => events.push('res close'))
    res.on('finish', () => events.push('res finish'))
    req.on('aborted', () => events.push('req aborted'))
    req.socket.on('close', () => events.push('socket close'))
    req.socket.destroy()
    await settle()
    expect(mq.callsOf('cancel', h.id)).toHaveLength(1)
    expect(h.response.cancelled).toBe(true)
    expect(events).toEqual(['req aborted', 'res close', 'socket close'])
  })
})
