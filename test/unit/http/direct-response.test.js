'use strict'

// A ServerResponse made outside a server and given a socket (res.assignSocket()), as
// light-my-request (fastify.inject()) and other test tools make node's: the preload's
// class must write the same bytes to that socket as node's own does. Each case runs
// the same calls against node's ServerResponse and ours, over a PassThrough, and
// compares what came out (the Date value aside).

const http = require('node:http')
const { PassThrough, Writable } = require('node:stream')
const NodeServerResponse = require('node:_http_server').ServerResponse
const NodeIncomingMessage = require('node:_http_incoming').IncomingMessage
const ours = require('../../../src/http')

function makeReq (Incoming, { method = 'GET', version = '1.1', headers = {} } = {}) {
  const req = new Incoming(null)
  req.method = method
  req.url = '/'
  req.httpVersion = version
  req.httpVersionMajor = Number(version.split('.')[0])
  req.httpVersionMinor = Number(version.split('.')[1])
  req.headers = headers
  return req
}

/** Runs `act(res)` on a response of classes { Response, Incoming }; resolves with the bytes. */
function run ({ Response, Incoming }, act, reqOpts, { assignFirst = true } = {}) {
  return new Promise((resolve, reject) => {
    const res = new Response(makeReq(Incoming, reqOpts))
    const socket = new PassThrough()
    const chunks = []
    socket.on('data', (d) => chunks.push(d))
    const events = []
    res.on('finish', () => {
      events.push('finish')
      setImmediate(() => resolve({ text: Buffer.concat(chunks).toString('latin1').replace(/Date: [^\r]*/, 'Date: X'), events, res }))
    })
    res.on('error', reject)
    if (assignFirst) res.assignSocket(socket)
    act(res)
    if (!assignFirst) res.assignSocket(socket)
  })
}

const NODE = { Response: NodeServerResponse, Incoming: NodeIncomingMessage }
const OURS = { Response: ours.ServerResponse, Incoming: ours.IncomingMessage }

const cases = [
  ['end(body)', (res) => res.end('hello')],
  ['setHeader + end(body)', (res) => { res.setHeader('Content-Type', 'text/plain'); res.end('hello') }],
  ['writeHead + end(body): chunked', (res) => { res.writeHead(201, { 'X-A': '1' }); res.end('hello') }],
  ['write + write + end', (res) => { res.write('a'); res.write(Buffer.from('bc')); res.end('d') }],
  ['end() with no body', (res) => { res.statusCode = 404; res.end() }],
  ['204 with a body', (res) => { res.statusCode = 204; res.end('ignored') }],
  ['Content-Length set by the app', (res) => { res.setHeader('Content-Length', 3); res.write('ab'); res.end('c') }],
  ['Connection: close from the app', (res) => { res.setHeader('Connection', 'close'); res.end('x') }],
  ['no Date', (res) => { res.sendDate = false; res.end('x') }],
  ['trailers', (res) => { res.setHeader('Trailer', 'X-T'); res.write('a'); res.addTrailers({ 'X-T': 'v' }); res.end() }],
  ['cookies', (res) => { res.setHeader('Set-Cookie', ['a=1', 'b=2']); res.end('x') }],
  // the `cookies` module (cookie-session, under express) calls node's own methods on a response
  ['http.OutgoingMessage.prototype.setHeader/getHeader called on it', (res) => {
    http.OutgoingMessage.prototype.setHeader.call(res, 'Set-Cookie', ['s=1'])
    res.setHeader('X-Seen', String(http.OutgoingMessage.prototype.getHeader.call(res, 'set-cookie')))
    http.OutgoingMessage.prototype.removeHeader.call(res, 'x-none')
    res.end('x')
  }]
]

describe('ServerResponse outside a server writes what node\'s writes', () => {
  test.each(cases)('%s', async (name, act) => {
    const a = await run(NODE, act)
    const b = await run(OURS, act)
    expect(b.text).toBe(a.text)
    expect(b.events).toEqual(a.events)
  })

  test('HEAD: the head only', async () => {
    const act = (res) => res.end('body')
    expect((await run(OURS, act, { method: 'HEAD' })).text).toBe((await run(NODE, act, { method: 'HEAD' })).text)
  })

  test('an HTTP/1.0 request: no chunking, the connection closes', async () => {
    const act = (res) => { res.write('a'); res.end('b') }
    expect((await run(OURS, act, { version: '1.0' })).text).toBe((await run(NODE, act, { version: '1.0' })).text)
  })

  test('what was written before assignSocket() goes out once a socket is given', async () => {
    const act = (res) => { res.setHeader('X-Early', '1'); res.end('early') }
    const a = await run(NODE, act, undefined, { assignFirst: false })
    const b = await run(OURS, act, undefined, { assignFirst: false })
    expect(b.text).toBe(a.text)
  })

  test('is an http.OutgoingMessage, emits \'socket\', and detachSocket() lets the socket go', async () => {
    const res = new ours.ServerResponse(makeReq(ours.IncomingMessage))
    expect(res).toBeInstanceOf(http.OutgoingMessage)
    const socket = new PassThrough()
    let seen = null
    res.on('socket', (s) => { seen = s })
    res.assignSocket(socket)
    expect(seen).toBe(socket)
    expect(res.socket).toBe(socket)
    expect(socket._httpMessage).toBe(res)
    expect(() => new ours.ServerResponse(makeReq(ours.IncomingMessage)).assignSocket(socket)).toThrow(expect.objectContaining({ code: 'ERR_HTTP_SOCKET_ASSIGNED' }))
    res.detachSocket(socket)
    expect(res.socket).toBe(null)
    expect(socket._httpMessage).toBe(null)
  })

  // a request whose body is not in (here node's own test's stand-in object, which has no
  // `complete`): the response still ends on its socket, as node's does; there is no
  // router to hold its end back for the body
  test('end() on a request not complete: the socket gets every write node\'s gets, the last empty one included', async () => {
    const writes = (Response) => new Promise((resolve) => {
      const res = new Response({ method: 'GET', httpVersionMajor: 1, httpVersionMinor: 1 })
      const seen = []
      const socket = new Writable({
        write (chunk, encoding, callback) {
          seen.push(chunk.toString('latin1').replace(/Date: [^\r]*/, 'Date: X'))
          setImmediate(callback)
        }
      })
      res.assignSocket(socket)
      res.on('finish', () => setImmediate(() => resolve(seen)))
      res.end('hello world')
    })
    const a = await writes(NodeServerResponse)
    const b = await writes(ours.ServerResponse)
    expect(a).toHaveLength(2)
    expect(a[0].endsWith('hello world')).toBe(true)
    expect(a[1]).toBe('')
    expect(b).toEqual(a)
  })

  test('the socket closing under it closes the response, as node\'s', async () => {
    const res = new ours.ServerResponse(makeReq(ours.IncomingMessage))
    const socket = new PassThrough()
    res.assignSocket(socket)
    const closed = new Promise((resolve) => res.on('close', resolve))
    socket.destroy()
    await closed
    expect(res.destroyed).toBe(true)
    expect(res.closed).toBe(true)
  })
})

describe('light-my-request (fastify.inject) with the preload\'s classes', () => {
  test('injects a request into a plain handler: the same response as on node\'s classes', () => {
    const { spawnSync } = require('node:child_process')
    const path = require('node:path')
    const root = path.join(__dirname, '..', '..', '..')
    const code = `
      const inject = require('light-my-request')
      inject((req, res) => {
        let body = ''
        req.on('data', (d) => { body += d })
        req.on('end', () => {
          res.setHeader('Content-Type', 'application/json')
          res.end(JSON.stringify({ url: req.url, method: req.method, body }))
        })
      }, { method: 'POST', url: '/x?y=1', payload: 'hi' }).then((res) => {
        const headers = { ...res.headers, date: res.headers.date ? 'X' : undefined }
        console.log(JSON.stringify({ status: res.statusCode, json: res.json(), headers }))
      }, (err) => console.log(JSON.stringify({ error: err.message })))
    `
    const run = (args) => spawnSync(process.execPath, [...args, '-e', code], { cwd: root, encoding: 'utf8', timeout: 10000 })
    const node = run([])
    const ours = run(['--require', path.join(root, 'src', 'register.js')])
    expect(ours.stderr).toBe('')
    expect(JSON.parse(node.stdout).json).toEqual({ url: '/x?y=1', method: 'POST', body: 'hi' })
    expect(JSON.parse(ours.stdout)).toEqual(JSON.parse(node.stdout))
  })
})
