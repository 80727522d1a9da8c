'use strict'

// A response written to req.socket around res (fastify's reply.hijack(), hand-written
// HTTP): read back as a response and sent through the queue.

const { RESPONSE_MORE, RESPONSE_CLOSE } = require('../../../src/wire/contract')
const { start, stopAll, settle } = require('./start')

afterEach(stopAll)

/** Serves one request with `handler`; resolves { mq, h, events } once settled. */
async function serve (handler, request = {}) {
  const events = []
  const { mq } = await start((req, res) => {
    res.on('finish', () => events.push('res finish'))
    res.on('close', () => events.push('res close'))
    handler(req, res, events)
  })
  const h = mq.request(request)
  await settle()
  return { mq, h, events }
}

const sends = (mq, id) => mq.calls.filter((c) => (c.op === 'respond' || c.op === 'sendBody') && c.id === id)

describe('a raw response written to req.socket', () => {
  test('close-delimited: the head becomes respond() (MORE, CLOSE), the bytes go as written, socket.end() ends it; res never says "finish"', async () => {
    const { mq, h, events } = await serve((req, res) => {
      req.socket.write('HTTP/1.1 200 OK\r\nX-Raw: yes\r\n\r\n')
      req.socket.write('hello ')
      req.socket.end('from raw')
    })
    const s = sends(mq, h.id)
    expect(s.map((c) => [c.op, c.flags])).toEqual([
      ['respond', RESPONSE_MORE | RESPONSE_CLOSE], ['sendBody', RESPONSE_MORE], ['sendBody', RESPONSE_MORE], ['sendBody', RESPONSE_CLOSE]
    ])
    expect(s[0]).toMatchObject({ statusCode: 200, statusMessage: 'OK', rawHeaders: ['X-Raw', 'yes'], body: null })
    expect(h.response.ended).toBe(true)
    expect(h.text).toBe('hello from raw')
    expect(events).toEqual(['res close'])
  })

  test('with Content-Length it ends after that many bytes and the connection is kept; bytes past it are not sent', async () => {
    let socket
    const { mq, h, events } = await serve((req) => {
      socket = req.socket
      req.socket.write('HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nhel')
      setImmediate(() => req.socket.write('lo and more'))
    })
    await settle()
    const s = sends(mq, h.id)
    expect(s.map((c) => [c.op, c.flags])).toEqual([['respond', RESPONSE_MORE], ['sendBody', 0]])
    expect(h.response.statusCode).toBe(201)
    expect(h.response.raw.toString()).toBe('hello')
    expect(events).toEqual(['res close'])
    expect(socket.writable).toBe(true) // kept for the next request
  })

  test('HEAD, 204 and 304 end with the head', async () => {
    const head = await serve((req) => req.socket.write('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n'), { method: 'HEAD' })
    expect(sends(head.mq, head.h.id).map((c) => [c.op, c.flags])).toEqual([['respond', 0]])
    const noContent = await serve((req) => req.socket.write('HTTP/1.1 204 No Content\r\n\r\n'))
    expect(sends(noContent.mq, noContent.h.id).map((c) => [c.op, c.flags])).toEqual([['respond', 0]])
  })

  test('a head split across writes is put together; res.end() after it sends nothing', async () => {
    const { mq, h, events } = await serve((req, res) => {
      req.socket.write('HTTP/1.1 200 O')
      req.socket.write('K\r\nContent-Length: 2\r\n')
      req.socket.write('\r\nok')
      res.end('ignored')
    })
    expect(sends(mq, h.id).map((c) => [c.op, c.statusCode, c.flags])).toEqual([['respond', 200, 0]])
    expect(h.text).toBe('ok')
    expect(events).toEqual(['res close'])
  })

  test('bytes that are not a response head: the connection is reset and the socket hears ERR_HTTPSYS_SOCKET_WRITE', async () => {
    const errors = []
    const { mq, h } = await serve((req) => {
      req.socket.on('error', (err) => errors.push(err.code))
      req.socket.write('hello\r\n\r\n')
    })
    expect(errors).toEqual(['ERR_HTTPSYS_SOCKET_WRITE'])
    expect(mq.calls.filter((c) => c.op === 'cancel' && c.id === h.id)).toHaveLength(1)
    expect(sends(mq, h.id)).toEqual([])
  })

  test('once res has begun, or on HTTP/2, a write fails with ERR_HTTPSYS_SOCKET_WRITE (callback and \'error\', which resets the connection, as a failed write on node\'s socket) and sends nothing', async () => {
    const seen = []
    const begun = await serve((req, res) => {
      res.writeHead(200)
      res.write('a')
      req.socket.write('HTTP/1.1 200 OK\r\n\r\n', (err) => seen.push(err && err.code))
      setImmediate(() => res.end())
    })
    await begun.h.done
    expect(seen).toEqual(['ERR_HTTPSYS_SOCKET_WRITE'])
    expect(begun.h.response.raw.toString()).toBe('1\r\na\r\n')
    expect(begun.mq.calls.filter((c) => c.op === 'cancel')).toHaveLength(1)
    const h2 = await serve((req) => {
      req.socket.write('HTTP/1.1 200 OK\r\n\r\n', (err) => seen.push(err && err.message))
    }, { httpVersion: '2.0' })
    expect(seen[1]).toMatch(/HTTP\/2\.0 carries no raw HTTP\/1\.1 bytes/)
    expect(sends(h2.mq, h2.h.id)).toEqual([])
  })
})
