'use strict'

const { EventEmitter } = require('node:events')
const { ClientConnection } = require('../../../src/hub/client-connection')
const { FrameWriter } = require('../../../src/wire/protocol')
const { RESPONSE_MORE, RESPONSE_CLOSE } = require('../../../src/wire/contract')

// A client connection over a fake socket, with requests "dispatched" to a fake worker,
// so the order of bytes on the socket can be checked against the order of answers.
class FakeSocket extends EventEmitter {
  constructor () {
    super()
    this.localAddress = '127.0.0.1'
    this.remoteAddress = '127.0.0.1'
    this.remotePort = 1234
    this.remoteFamily = 'IPv4'
    this.out = []
    this.raw = [] // the buffers as written, to tell views from copies
    this.corked = 0
    this.paused = false
    this.ended = false
    this.destroyed = false
    this.writableFinished = false
  }

  write (buf) {
    this.raw.push(buf)
    this.out.push(Buffer.from(buf).toString('latin1'))
    return true
  }

  cork () { this.corked++ }
  uncork () { this.corked-- }

  pause () { this.paused = true }
  resume () { this.paused = false }
  end () { this.ended = true }
  destroy () { this.destroyed = true }
  text () { return this.out.join('') }
}

function setup () {
  const routed = []
  const hub = {
    maxHeaderSize: 16384,
    maxBodySize: 1e9,
    keepAliveTimeout: 5000,
    headersTimeout: 60000,
    closing: false,
    log: { debug () {}, warn () {} },
    route (conn, req) {
      req.attachment = worker
      routed.push(req)
    },
    connectionClosed () {}
  }
  const worker = {
    released: [],
    windows: [],
    aborted: [],
    release (req) { this.released.push(req) },
    sendWindow (req, n) { this.windows.push(n) },
    sendAbort (req) { this.aborted.push(req) }
  }
  const socket = new FakeSocket()
  const conn = new ClientConnection(hub, socket, 1, 8080)
  return { conn, socket, routed, worker }
}

// Feeds a RESPONSE / RES_BODY frame to the request as the worker connection would.
function respond (req, status, body, flags = 0, headers = ['Content-Length', String(body.length)]) {
  const w = new FrameWriter()
  w.response(1, status, flags, 0, 'OK', headers, body)
  const b = Buffer.concat(w.take())
  req.onResponse(b, 9, b.length)
  return b
}

function resBody (req, text, flags) {
  const w = new FrameWriter()
  w.resBody(1, flags, text)
  const b = Buffer.concat(w.take())
  req.onResBody(b, 9, b.length)
}

const bodies = (text) => text.split('HTTP/1.1 200 OK').slice(1).map((r) => r.slice(r.indexOf('\r\n\r\n') + 4))

describe('pipelined responses', () => {
  test('are written in request order whatever order the workers answer in', () => {
    const { socket, routed } = setup()
    socket.emit('data', Buffer.from('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HTTP/1.1\r\nHost: a\r\n\r\n'))
    expect(routed.map((r) => r.head.url)).toEqual(['/1', '/2', '/3'])
    respond(routed[2], 200, 'three')
    respond(routed[1], 200, 'two')
    expect(socket.text()).toBe('') // /1 is not answered yet: nothing may go out
    respond(routed[0], 200, 'one')
    expect(bodies(socket.text())).toEqual(['one', 'two', 'three'])
  })

  test('a later response is held while an earlier one is still streaming', () => {
    const { socket, routed } = setup()
    socket.emit('data', Buffer.from('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n'))
    const w = new FrameWriter()
    w.response(1, 200, RESPONSE_MORE, 0, 'OK', ['Transfer-Encoding', 'chunked'], null)
    const b = Buffer.concat(w.take())
    routed[0].onResponse(b, 9, b.length)
    respond(routed[1], 200, 'second')
    resBody(routed[0], '5\r\nfirst\r\n', RESPONSE_MORE)
    expect(socket.text()).not.toContain('second')
    resBody(routed[0], '0\r\n\r\n', 0)
    const text = socket.text()
    expect(text.indexOf('first')).toBeLessThan(text.indexOf('second'))
    expect(text.endsWith('second')).toBe(true)
  })

  test('a close response ends the connection and aborts the requests behind it', () => {
    const { socket, routed, worker } = setup()
    socket.emit('data', Buffer.from('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n'))
    respond(routed[0], 200, 'bye', RESPONSE_CLOSE)
    expect(socket.text()).toContain('Connection: close\r\n')
    expect(socket.ended).toBe(true)
    expect(worker.aborted).toEqual([routed[1]])
  })

  test('HTTP/1.0 keep-alive gets Connection: keep-alive; a HEAD response never carries a body', () => {
    const { socket, routed } = setup()
    socket.emit('data', Buffer.from('GET /1 HTTP/1.0\r\nConnection: keep-alive\r\n\r\nHEAD /2 HTTP/1.1\r\nHost: a\r\n\r\n'))
    respond(routed[0], 200, 'one')
    respond(routed[1], 200, 'not sent')
    const text = socket.text()
    expect(text).toContain('Connection: keep-alive\r\n')
    expect(text).not.toContain('not sent')
    expect(text.endsWith('Content-Length: 8\r\n\r\n')).toBe(true)
  })

  test('too many requests in flight on one connection stop the reading', () => {
    const { socket, routed } = setup()
    let text = ''
    for (let i = 0; i < 40; i++) text += `GET /${i} HTTP/1.1\r\nHost: a\r\n\r\n`
    socket.emit('data', Buffer.from(text))
    expect(routed.length).toBe(32)
    expect(socket.paused).toBe(true)
    for (const r of routed.slice()) respond(r, 200, 'x')
    expect(routed.length).toBe(40)
    expect(socket.paused).toBe(false)
  })

  test('a large body is written from the frame under cork, never copied; a small one rides in the head', () => {
    const { socket, routed } = setup()
    socket.emit('data', Buffer.from('GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nGET /3 HTTP/1.1\r\nHost: a\r\n\r\n'))
    const big = Buffer.alloc(65536, 'b')
    const frame1 = respond(routed[0], 200, big)
    expect(socket.raw).toHaveLength(2)
    expect(socket.raw[1].buffer).toBe(frame1.buffer)
    expect(socket.raw[1].equals(big)).toBe(true)
    expect(socket.corked).toBe(0)
    // held behind /3's predecessor: still the frame's bytes once it is /3's turn
    const big3 = Buffer.alloc(10000, 'c')
    const frame3 = respond(routed[2], 200, big3)
    respond(routed[1], 200, 'small')
    expect(socket.raw.some((x) => x.buffer === frame3.buffer && x.equals(big3))).toBe(true)
    expect(socket.raw.filter((x) => x.toString('latin1').endsWith('\r\n\r\nsmall'))).toHaveLength(1)
    expect(bodies(socket.text())).toEqual([big.toString(), 'small', big3.toString()])
  })
})

describe('the hub\'s decision to close wins over the worker\'s Connection header', () => {
  const workerHeaders = ['Content-Length', '2', 'Connection', 'keep-alive', 'Keep-Alive', 'timeout=5', 'X-After', 'yes']
  const connectionLines = (text) => text.split('\r\n').filter((l) => /^(connection|keep-alive):/i.test(l))

  test.each([
    { name: 'the client asked to close', request: 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n' },
    { name: 'an HTTP/1.0 client without keep-alive', request: 'GET / HTTP/1.0\r\n\r\n' }
  ])('$name: one Connection: close, the worker\'s keep-alive lines dropped', ({ request }) => {
    const { socket, routed } = setup()
    socket.emit('data', Buffer.from(request))
    respond(routed[0], 200, 'ok', 0, workerHeaders)
    const text = socket.text()
    expect(connectionLines(text)).toEqual(['Connection: close'])
    expect(text).toContain('\r\nX-After: yes\r\n')
    expect(text.endsWith('\r\n\r\nok')).toBe(true)
    expect(socket.ended).toBe(true)
  })

  test('the hub is closing: the same', () => {
    const { conn, socket, routed } = setup()
    socket.emit('data', Buffer.from('GET / HTTP/1.1\r\nHost: a\r\n\r\n'))
    conn.shutdown()
    respond(routed[0], 200, 'ok', 0, ['CONNECTION', 'Keep-Alive', 'Content-Length', '2'])
    expect(connectionLines(socket.text())).toEqual(['Connection: close'])
  })

  test('a connection the hub keeps: the worker\'s header is left as it is', () => {
    const { socket, routed } = setup()
    socket.emit('data', Buffer.from('GET / HTTP/1.1\r\nHost: a\r\n\r\n'))
    respond(routed[0], 200, 'ok', 0, workerHeaders)
    expect(connectionLines(socket.text())).toEqual(['Connection: keep-alive', 'Keep-Alive: timeout=5'])
    expect(socket.ended).toBe(false)
  })
})
