'use strict'

const { Writable } = require('node:stream')
const { ServerResponse } = require('../../../src/http')
const { RESPONSE_MORE, RESPONSE_CLOSE } = require('../../../src/wire/contract')
const { start, stopAll, settle } = require('./start')

afterEach(stopAll)

/** One request through a fresh server; resolves with the handle once answered. */
async function serve (handler, request = {}, opts) {
  const { mq } = await start(handler, opts)
  const h = mq.request(request)
  await h.done
  await settle()
  return { mq, h, r: h.response }
}

describe('framing', () => {
  test('writeHead + end(body) is ONE respond() call: head and body together, chunked as node frames it after writeHead', async () => {
    const { mq, r, h } = await serve((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' })
      res.end('hello world')
    })
    expect(mq.callsOf('respond')).toHaveLength(1)
    expect(mq.callsOf('sendBody')).toHaveLength(0)
    expect(r.statusCode).toBe(200)
    expect(r.statusMessage).toBe('OK')
    expect(r.headers['content-type']).toBe('text/plain')
    // node decides the framing when the head is made: writeHead() does not know the
    // body yet, so it is chunked; only end() making the head gives a Content-Length
    expect(r.headers['content-length']).toBeUndefined()
    expect(r.headers['transfer-encoding']).toBe('chunked')
    expect(r.headers.date).toMatch(/^[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/)
    expect(r.flags).toEqual([0])
    expect(r.raw.toString()).toBe('b\r\nhello world\r\n0\r\n\r\n')
    expect(h.text).toBe('hello world')
  })

  test('node\'s head order and keep-alive headers: the app\'s, Date, Connection, Keep-Alive, framing', async () => {
    const { r } = await serve((req, res) => {
      res.setHeader('X-App', '1')
      res.end('abc')
    })
    const names = []
    for (let i = 0; i < r.rawHeaders.length; i += 2) names.push(r.rawHeaders[i])
    expect(names).toEqual(['X-App', 'Date', 'Connection', 'Keep-Alive', 'Content-Length'])
    expect(r.headers.connection).toBe('keep-alive')
    expect(r.headers['keep-alive']).toBe('timeout=5')
    const closing = await serve((req, res) => { res.shouldKeepAlive = false; res.end('x') })
    expect(closing.r.headers.connection).toBe('close')
    expect(closing.r.headers['keep-alive']).toBeUndefined()
    expect(closing.r.flags).toEqual([RESPONSE_CLOSE])
    const own = await serve((req, res) => { res.setHeader('Connection', 'keep-alive'); res.end('x') })
    expect(own.r.rawHeaders.filter((x) => /^connection$/i.test(x))).toHaveLength(1)
    expect(own.r.headers['keep-alive']).toBeUndefined()
  })

  test('end(body) alone, and end() with no body, also go out in one call', async () => {
    const a = await serve((req, res) => res.end('abc'))
    expect(a.mq.callsOf('respond')).toHaveLength(1)
    expect(a.r.headers['content-length']).toBe('3')
    const b = await serve((req, res) => { res.statusCode = 404; res.end() })
    expect(b.mq.callsOf('respond')).toHaveLength(1)
    expect(b.r.statusCode).toBe(404)
    expect(b.r.statusMessage).toBe('Not Found')
    expect(b.r.headers['content-length']).toBe('0')
  })

  test('Content-Length counts bytes, not characters', async () => {
    const { r, h } = await serve((req, res) => res.end('héllo €'))
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength('héllo €')))
    expect(h.text).toBe('héllo €')
  })

  test('writes in the same tick as end() still make one respond(), chunked as node frames a write() before end()', async () => {
    const { mq, r, h } = await serve((req, res) => {
      res.write('a')
      res.write(Buffer.from('b'))
      res.end('c')
    })
    expect(mq.callsOf('respond')).toHaveLength(1)
    expect(r.headers['content-length']).toBeUndefined()
    expect(r.headers['transfer-encoding']).toBe('chunked')
    expect(h.text).toBe('abc')
  })

  test('streaming without Content-Length is chunked, framed byte-exactly by src/http', async () => {
    const { mq, r } = await serve((req, res) => {
      res.write('hello')
      setTimeout(() => {
        res.write(Buffer.from('wörld'))
        setTimeout(() => res.end(), 5)
      }, 5)
    })
    expect(r.headers['transfer-encoding']).toBe('chunked')
    expect(r.headers['content-length']).toBeUndefined()
    const respond = mq.callsOf('respond')[0]
    expect(respond.flags & RESPONSE_MORE).toBe(RESPONSE_MORE)
    expect(r.raw.toString('latin1')).toBe(
      '5\r\nhello\r\n' + '6\r\n' + Buffer.from('wörld').toString('latin1') + '\r\n' + '0\r\n\r\n'
    )
    const last = mq.calls.filter((c) => c.op === 'sendBody').pop()
    expect(last.flags & RESPONSE_MORE).toBe(0)
  })

  test('writes within one tick are coalesced into one backend call', async () => {
    const { mq, h } = await serve((req, res) => {
      res.write('a')
      res.write('b')
      res.write('c')
      setTimeout(() => res.end(), 5)
    })
    const first = mq.callsOf('respond')[0]
    expect(first.body).toBe('1\r\na\r\n1\r\nb\r\n1\r\nc\r\n')
    expect(mq.callsOf('sendBody')).toHaveLength(1)
    expect(h.text).toBe('abc')
  })

  test('trailers go after the last chunk', async () => {
    const { r } = await serve((req, res) => {
      res.setHeader('Trailer', 'Content-MD5')
      res.write('x')
      res.addTrailers({ 'Content-MD5': 'abc' })
      setTimeout(() => res.end(), 5)
    })
    expect(r.raw.toString()).toBe('1\r\nx\r\n0\r\nContent-MD5: abc\r\n\r\n')
  })

  test('several trailer values go on a line each; the server\'s uniqueHeaders join them (and header values) with "; ", as node\'s', async () => {
    const handler = (req, res) => {
      res.setHeader('X-Multi', ['a', 'b'])
      res.writeHead(200, { Trailer: 'X-T' })
      res.write('x')
      res.addTrailers({ 'X-T': ['1', '2'] })
      res.end()
    }
    const plain = await serve(handler)
    expect(plain.r.raw.toString()).toBe('1\r\nx\r\n0\r\nX-T: 1\r\nX-T: 2\r\n\r\n')
    expect(plain.r.rawHeaders.filter((x, i) => i % 2 === 0 && x === 'X-Multi')).toHaveLength(2)
    const unique = await serve(handler, {}, { server: { uniqueHeaders: ['x-t', 'X-MULTI'] } })
    expect(unique.r.raw.toString()).toBe('1\r\nx\r\n0\r\nX-T: 1; 2\r\n\r\n')
    expect(unique.r.headers['x-multi']).toBe('a; b')
    // a Trailer header on a response that cannot be chunked: node throws, the head is
    // not made, and the app can go on without it
    let code = null
    const invalid = await serve((req, res) => {
      res.setHeader('Trailer', 'X-T')
      try { res.writeHead(200, { 'Content-Length': '2' }) } catch (err) { code = err.code }
      res.removeHeader('Trailer')
      res.end('ok')
    })
    expect(code).toBe('ERR_HTTP_TRAILER_INVALID')
    expect(invalid.r.statusCode).toBe(200)
    expect(invalid.h.text).toBe('ok')
  })

  test('an app-set Content-Length streams the raw body (no chunked framing)', async () => {
    const { r } = await serve((req, res) => {
      res.setHeader('Content-Length', 10)
      res.write('01234')
      setTimeout(() => res.end('56789'), 5)
    })
    expect(r.headers['content-length']).toBe('10')
    expect(r.headers['transfer-encoding']).toBeUndefined()
    expect(r.raw.toString()).toBe('0123456789')
  })

  test('HTTP/1.0 streaming: no chunked encoding, raw body, connection closed after it', async () => {
    const { mq, r } = await serve((req, res) => {
      res.write('part1 ')
      setTimeout(() => res.end('part2'), 5)
    }, { httpVersion: '1.0', keepAlive: false })
    expect(r.headers['transfer-encoding']).toBeUndefined()
    expect(r.raw.toString()).toBe('part1 part2')
    expect(mq.callsOf('respond')[0].flags & RESPONSE_CLOSE).toBe(RESPONSE_CLOSE)
  })

  test('HTTP/2 (HTTP.SYS on an https binding): streamed without chunked framing or Connection headers, never closing the connection', async () => {
    const { mq, r } = await serve((req, res) => {
      expect(req.httpVersion).toBe('2.0')
      res.setHeader('Connection', 'close')
      res.setHeader('Keep-Alive', 'timeout=5')
      res.setHeader('Transfer-Encoding', 'chunked')
      res.setHeader('X-Kept', 'yes')
      res.write('part1 ')
      setTimeout(() => res.end('part2'), 5)
    }, { httpVersion: '2.0' })
    expect(r.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase()).sort()).toEqual(['date', 'x-kept'])
    // the body pieces go out as they are: the router makes DATA frames of them
    expect(r.raw.toString()).toBe('part1 part2')
    expect(r.flags.every((f) => (f & RESPONSE_CLOSE) === 0)).toBe(true)
    expect(mq.callsOf('respond')[0].flags & RESPONSE_MORE).toBe(RESPONSE_MORE)
  })

  test('HTTP/2: a whole body known at end() still gets its Content-Length', async () => {
    const { r } = await serve((req, res) => res.end('hello'), { httpVersion: '2.0' })
    expect(r.headers['content-length']).toBe('5')
    expect(r.headers.connection).toBeUndefined()
  })

  test.each([
    ['HEAD', 200, 'HEAD'],
    ['204', 204, 'GET'],
    ['304', 304, 'GET']
  ])('%s: headers but no body', async (_, status, method) => {
    const { r } = await serve((req, res) => {
      res.statusCode = status
      res.setHeader('Content-Length', '5')
      res.end('hello')
    }, { method })
    expect(r.statusCode).toBe(status)
    expect(r.raw.length).toBe(0)
    expect(r.headers['content-length']).toBe('5')
    expect(r.headers['transfer-encoding']).toBeUndefined()
  })

  test('HEAD without an app Content-Length: no framing headers at all, like node', async () => {
    const { r } = await serve((req, res) => res.end('body'), { method: 'HEAD' })
    expect(r.headers['content-length']).toBeUndefined()
    expect(r.raw.length).toBe(0)
  })

  test('Connection: close from the app sets RESPONSE_CLOSE', async () => {
    const { r } = await serve((req, res) => {
      res.setHeader('Connection', 'close')
      res.end('bye')
    })
    expect(r.flags[0] & RESPONSE_CLOSE).toBe(RESPONSE_CLOSE)
    expect(r.headers.connection).toBe('close')
  })

  test('a keep-alive response has no close flag', async () => {
    const { r } = await serve((req, res) => res.end('x'))
    expect(r.flags[0] & RESPONSE_CLOSE).toBe(0)
  })

  test('several Set-Cookie headers stay separate pairs; a cookie array is joined', async () => {
    const { r } = await serve((req, res) => {
      res.setHeader('Set-Cookie', ['a=1; Path=/', 'b=2'])
      res.appendHeader('Set-Cookie', 'c=3')
      res.end()
    })
    const pairs = []
    for (let i = 0; i < r.rawHeaders.length; i += 2) if (r.rawHeaders[i] === 'Set-Cookie') pairs.push(r.rawHeaders[i + 1])
    expect(pairs).toEqual(['a=1; Path=/', 'b=2', 'c=3'])
    const w = await serve((req, res) => {
      res.writeHead(200, { 'Set-Cookie': ['x=1', 'y=2'] })
      res.end()
    })
    expect(w.r.headers['set-cookie']).toEqual(['x=1', 'y=2'])
  })

  test('sendDate = false and removeHeader("date") drop the Date header', async () => {
    const a = await serve((req, res) => { res.sendDate = false; res.end() })
    expect(a.r.headers.date).toBeUndefined()
    const b = await serve((req, res) => { res.removeHeader('Date'); res.end() })
    expect(b.r.headers.date).toBeUndefined()
  })

  test('flushHeaders() sends the head before any body', async () => {
    let sentAtOnce
    const { mq } = await start((req, res) => {
      res.flushHeaders()
      sentAtOnce = mq.callsOf('respond').length
      setTimeout(() => res.end('later'), 5)
    })
    const h = mq.request()
    await h.done
    expect(sentAtOnce).toBe(1)
    expect(mq.callsOf('respond')[0].body).toBe(null)
    expect(h.text).toBe('later')
  })
})

describe('headers API', () => {
  test('setHeader/getHeader/getHeaders/getHeaderNames/getRawHeaderNames/hasHeader/removeHeader', async () => {
    let seen
    await serve((req, res) => {
      expect(res.setHeader('X-Foo', 'bar')).toBe(res)
      res.setHeader('x-num', 42)
      res.setHeader('X-List', ['a', 'b'])
      res.appendHeader('x-foo', 'baz')
      seen = {
        foo: res.getHeader('x-FOO'),
        num: res.getHeader('X-Num'),
        headers: res.getHeaders(),
        names: res.getHeaderNames(),
        raw: res.getRawHeaderNames(),
        has: res.hasHeader('x-list'),
        proto: Object.getPrototypeOf(res.getHeaders())
      }
      res.removeHeader('X-List')
      seen.hasAfter = res.hasHeader('x-list')
      res.end()
    })
    expect(seen.foo).toEqual(['bar', 'baz'])
    expect(seen.num).toBe(42)
    expect({ ...seen.headers }).toEqual({ 'x-foo': ['bar', 'baz'], 'x-num': 42, 'x-list': ['a', 'b'] })
    expect(seen.proto).toBe(null)
    expect(seen.names).toEqual(['x-foo', 'x-num', 'x-list'])
    expect(seen.raw).toEqual(['X-Foo', 'x-num', 'X-List'])
    expect(seen.has).toBe(true)
    expect(seen.hasAfter).toBe(false)
  })

  test('header names that are Object.prototype members are ordinary names', async () => {
    const { r } = await serve((req, res) => {
      res.setHeader('__proto__', 'p')
      res.setHeader('constructor', 'c')
      expect(res.getHeader('__proto__')).toBe('p')
      expect(res.hasHeader('hasOwnProperty')).toBe(false)
      expect(res.getHeaderNames()).toEqual(['__proto__', 'constructor'])
      res.end()
    })
    expect(r.rawHeaders.slice(0, 4)).toEqual(['__proto__', 'p', 'constructor', 'c'])
  })

  test('_header: what middleware such as compression tests before _implicitHeader()', async () => {
    const { h } = await serve((req, res) => {
      expect(res._header).toBe(null)
      res.setHeader('X-A', '1')
      const origWrite = res.write
      res.write = function (chunk, enc) {
        if (!this._header) this._implicitHeader()
        return origWrite.call(this, chunk, enc)
      }
      res.write('a')
      expect(res._header).toMatch(/^HTTP\/1\.1 200 OK\r\nX-A: 1\r\n/)
      res.write('b')
      res.end()
    })
    expect(h.text).toBe('ab')
  })

  test('writeHead merges with setHeader values and its own win', async () => {
    const { r } = await serve((req, res) => {
      res.setHeader('X-A', 'from-set')
      res.setHeader('X-B', 'kept')
      expect(res.writeHead(201, 'Made', { 'X-A': 'from-writeHead' })).toBe(res)
      expect(res.getHeader('x-a')).toBe('from-writeHead')
      res.end()
    })
    expect(r.statusCode).toBe(201)
    expect(r.statusMessage).toBe('Made')
    expect(r.headers['x-a']).toBe('from-writeHead')
    expect(r.headers['x-b']).toBe('kept')
  })

  test('writeHead accepts a flat [k, v, ...] array and [[k, v]] pairs', async () => {
    const a = await serve((req, res) => res.writeHead(200, ['X-A', '1', 'X-A', '2']).end())
    expect(a.r.headers['x-a']).toEqual(['1', '2'])
    const b = await serve((req, res) => res.writeHead(200, [['X-B', '1']]).end())
    expect(b.r.headers['x-b']).toBe('1')
  })

  test('setHeaders() takes a Headers or a Map, keeping every set-cookie', async () => {
    const { r } = await serve((req, res) => {
      const h = new Headers()
      h.append('set-cookie', 'a=1')
      h.append('set-cookie', 'b=2')
      h.set('x-h', 'y')
      res.setHeaders(h)
      res.setHeaders(new Map([['x-m', 'z']]))
      expect(() => res.setHeaders({ a: 1 })).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_TYPE' }))
      res.end()
    })
    expect(r.headers['set-cookie']).toEqual(['a=1', 'b=2'])
    expect(r.headers['x-h']).toBe('y')
    expect(r.headers['x-m']).toBe('z')
  })

  test('statusMessage defaults from STATUS_CODES and can be set', async () => {
    const a = await serve((req, res) => { res.statusCode = 418; res.end() })
    expect(a.r.statusMessage).toBe("I'm a Teapot")
    const b = await serve((req, res) => { res.statusMessage = 'Fine'; res.end() })
    expect(b.r.statusMessage).toBe('Fine')
  })
})

describe('errors with node codes', () => {
  async function inHandler (fn) {
    let out
    await serve((req, res) => {
      try { fn(req, res) } catch (err) { out = err }
      if (!res.writableEnded) res.destroy()
    })
    return out
  }

  test('setHeader/removeHeader/writeHead after the head was sent: ERR_HTTP_HEADERS_SENT', async () => {
    const set = await inHandler((req, res) => { res.writeHead(200); res.setHeader('a', 'b') })
    expect(set.code).toBe('ERR_HTTP_HEADERS_SENT')
    expect(set.message).toBe('Cannot set headers after they are sent to the client')
    const rem = await inHandler((req, res) => { res.end(); res.removeHeader('a') })
    expect(rem.code).toBe('ERR_HTTP_HEADERS_SENT')
    const wh = await inHandler((req, res) => { res.writeHead(200); res.writeHead(201) })
    expect(wh.code).toBe('ERR_HTTP_HEADERS_SENT')
  })

  test('invalid header name, value and status', async () => {
    const name = await inHandler((req, res) => res.setHeader('bad name', 'x'))
    expect(name).toBeInstanceOf(TypeError)
    expect(name.code).toBe('ERR_INVALID_HTTP_TOKEN')
    expect(name.message).toBe('Header name must be a valid HTTP token ["bad name"]')
    const value = await inHandler((req, res) => res.setHeader('x', 'a\nb'))
    expect(value.code).toBe('ERR_INVALID_CHAR')
    expect(value.message).toBe('Invalid character in header content ["x"]')
    const undef = await inHandler((req, res) => res.setHeader('x'))
    expect(undef.code).toBe('ERR_HTTP_INVALID_HEADER_VALUE')
    const low = await inHandler((req, res) => res.writeHead(99))
    expect(low).toBeInstanceOf(RangeError)
    expect(low.code).toBe('ERR_HTTP_INVALID_STATUS_CODE')
    const high = await inHandler((req, res) => { res.statusCode = 1000; res.end() })
    expect(high.code).toBe('ERR_HTTP_INVALID_STATUS_CODE')
    const msg = await inHandler((req, res) => res.writeHead(200, 'bad\r\nmessage'))
    expect(msg.code).toBe('ERR_INVALID_CHAR')
    const given = await inHandler((req, res) => res.writeHead(200, { 'bad:name': 'x' }))
    expect(given.code).toBe('ERR_INVALID_HTTP_TOKEN')
    const odd = await inHandler((req, res) => res.writeHead(200, ['a']))
    expect(odd.code).toBe('ERR_INVALID_ARG_VALUE')
  })

  test('write(null) and write(number)', async () => {
    const nul = await inHandler((req, res) => res.write(null))
    expect(nul.code).toBe('ERR_STREAM_NULL_VALUES')
    const num = await inHandler((req, res) => res.write(1))
    expect(num.code).toBe('ERR_INVALID_ARG_TYPE')
    const get = await inHandler((req, res) => res.getHeader(1))
    expect(get.code).toBe('ERR_INVALID_ARG_TYPE')
  })

  test('write after end: callback gets ERR_STREAM_WRITE_AFTER_END, then an "error" event', async () => {
    const order = []
    await serve((req, res) => {
      res.on('error', (err) => order.push('error ' + err.code))
      res.end('done')
      expect(res.write('late', (err) => order.push('cb ' + err.code))).toBe(false)
    })
    expect(order).toEqual(['cb ERR_STREAM_WRITE_AFTER_END', 'error ERR_STREAM_WRITE_AFTER_END'])
  })

  test('end(cb) after finish: ERR_STREAM_ALREADY_FINISHED to the callback', async () => {
    let got
    await serve((req, res) => {
      res.end()
      res.end((err) => { got = err })
    })
    expect(got.code).toBe('ERR_STREAM_ALREADY_FINISHED')
  })

  test('strictContentLength: a body longer than Content-Length throws', async () => {
    const err = await inHandler((req, res) => {
      res.strictContentLength = true
      res.setHeader('Content-Length', 2)
      res.write('abc')
    })
    expect(err.code).toBe('ERR_HTTP_CONTENT_LENGTH_MISMATCH')
    const short = await inHandler((req, res) => {
      res.strictContentLength = true
      res.setHeader('Content-Length', 5)
      res.end('abc')
    })
    expect(short.code).toBe('ERR_HTTP_CONTENT_LENGTH_MISMATCH')
  })
})

describe('events and callbacks', () => {
  test('"finish" then "close", write and end callbacks called, flags as node', async () => {
    const events = []
    const { r } = await serve((req, res) => {
      res.on('finish', () => events.push('finish'))
      res.on('close', () => events.push('close'))
      res.write('a', () => events.push('write cb'))
      res.end('b', () => events.push('end cb'))
      events.push(`ended=${res.writableEnded} finished=${res.writableFinished} headersSent=${res.headersSent}`)
    })
    await settle()
    expect(events).toEqual(['ended=true finished=true headersSent=true', 'write cb', 'finish', 'end cb', 'close'])
    expect(r.raw.toString()).toBe('1\r\na\r\n1\r\nb\r\n0\r\n\r\n')
  })

  test('writableLength counts what is not out yet as node does: the unsent head, each chunk with its framing; 0 once finished', async () => {
    const seen = []
    await serve((req, res) => {
      seen.push(res.writableLength)
      res.writeHead(200, { 'X-A': 'b' })
      const head = res.writableLength
      seen.push(head > 0)
      res.write('asd')
      seen.push(res.writableLength - head)
      res.write(Buffer.alloc(300))
      seen.push(res.writableLength - head)
      res.end()
      res.on('finish', () => seen.push(res.writableLength))
    })
    await settle()
    // "3\r\nasd\r\n" is 8 bytes; "12c\r\n" + 300 + "\r\n" is 307 more
    expect(seen).toEqual([0, true, 8, 8 + 307, 0])
  })

  test('writableEnded/writableFinished/headersSent before and after', async () => {
    const seen = []
    await serve((req, res) => {
      seen.push([res.headersSent, res.writableEnded, res.writableFinished, res.writable])
      res.writeHead(200)
      seen.push([res.headersSent, res.writableEnded, res.writableFinished])
      res.end()
      res.on('close', () => seen.push([res.destroyed, res.socket]))
    })
    await settle()
    expect(seen).toEqual([[false, false, false, true], [true, false, false], [true, null]])
  })

  test('destroy(err) after the head resets the request and gives the socket the error, as node destroys the socket', async () => {
    const seen = []
    const { mq, h } = await start((req, res) => {
      res.socket.on('error', (err) => seen.push(['socket error', err.message]))
      res.on('close', () => seen.push(['close', res.destroyed]))
      res.writeHead(200)
      res.write('part')
      res.destroy(new Error('boom'))
    }).then(async ({ mq }) => {
      const h = mq.request({})
      await h.done
      await settle()
      return { mq, h }
    })
    expect(mq.calls.filter((c) => c.op === 'cancel')).toHaveLength(1)
    expect(h.response.cancelled).toBe(true)
    // (node emits res 'close' from the socket's 'close', after the error; here the
    // cancelled request closes res first; both are seen exactly once)
    expect(seen).toHaveLength(2)
    expect(seen).toEqual(expect.arrayContaining([['socket error', 'boom'], ['close', true]]))
  })

  test('res is not a stream.Writable (as on node) but can be piped into', async () => {
    const { Readable } = require('node:stream')
    let isWritable
    const { h } = await serve((req, res) => {
      isWritable = res instanceof Writable
      Readable.from(['x', 'y', 'z']).pipe(res)
    })
    expect(isWritable).toBe(false)
    expect(h.text).toBe('xyz')
  })

  test('backpressure: write() returns false while the window is closed, "drain" when it reopens', async () => {
    let resRef
    const { mq } = await start((req, res) => { resRef = res })
    mq.window = false
    const h = mq.request()
    await settle()
    expect(resRef.write('first')).toBe(true) // coalesced, not yet sent
    await settle()
    expect(mq.callsOf('respond')).toHaveLength(1) // sent; the backend said "full"
    expect(resRef.writableNeedDrain).toBe(false)
    expect(resRef.write('second')).toBe(false)
    expect(resRef.writableNeedDrain).toBe(true)
    await settle()
    expect(mq.callsOf('sendBody')).toHaveLength(0) // nothing sent while the window is closed
    const drained = new Promise((resolve) => resRef.once('drain', resolve))
    mq.window = true
    h.drain()
    await drained
    expect(mq.callsOf('sendBody')).toHaveLength(1)
    resRef.end()
    await h.done
    expect(h.text).toBe('firstsecond')
  })

  test('end() while the window is closed completes on drain', async () => {
    let resRef
    const { mq } = await start((req, res) => { resRef = res })
    mq.window = false
    const h = mq.request()
    await settle()
    resRef.write('a')
    await settle()
    let finished = false
    resRef.end('b', () => { finished = true })
    await settle()
    expect(finished).toBe(false)
    expect(resRef.writableFinished).toBe(false)
    h.drain()
    await h.done
    await settle()
    expect(finished).toBe(true)
    expect(h.text).toBe('ab')
  })

  test('cork/uncork batch writes', async () => {
    const seen = []
    const { mq } = await start((req, res) => {
      res.cork()
      res.write('a')
      res.write('b')
      seen.push(res.writableCorked)
      setTimeout(() => {
        seen.push(mq.callsOf('respond').length)
        res.uncork()
        seen.push(mq.callsOf('respond').length)
        res.end()
      }, 5)
    })
    const h = mq.request()
    await h.done
    expect(seen).toEqual([1, 0, 1])
    expect(h.text).toBe('ab')
  })

  test('a response object can be made standalone (subclassing, util.inherits)', () => {
    const fakeReq = { method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1, headers: {} }
    const res = new ServerResponse(fakeReq)
    res.setHeader('x', 'y')
    expect(res.getHeader('x')).toBe('y')
    function Legacy (req) { ServerResponse.call(this, req) }
    Object.setPrototypeOf(Legacy.prototype, ServerResponse.prototype)
    const legacy = new Legacy(fakeReq)
    expect(legacy.statusCode).toBe(200)
    expect(legacy instanceof ServerResponse).toBe(true)
  })
})
