'use strict'

// What node's 'clientError' listener and the client see for bytes node's parser refuses,
// on a server's own port: the error's code, message and bytesParsed (llhttp's, which
// the preload names from the router parser's reason: src/http/client-error.js), the
// socket object's 'error' when no listener takes it (node's socketOnError destroys the
// socket with the error), and the chunk extension limit counted per chunk. Each app
// runs on node's stack and with the preload; what they print is compared.

const path = require('node:path')
const { both, runPreloaded } = require('../helpers/run-preloaded')

const ROOT = path.join(__dirname, '..', '..')

// sends each request on a connection of its own; the 'clientError' listener records
// the error and answers 400 itself
const listenerApp = (requests) => `
  const http = require('http')
  const net = require('net')
  const requests = ${JSON.stringify(requests)}
  const seen = []
  const s = http.createServer((req, res) => { req.resume(); req.on('end', () => res.end('ok')) })
  s.on('clientError', (err, socket) => {
    seen.push([err.code, err.message, err.bytesParsed, err.rawPacket && err.rawPacket.toString('latin1')])
    socket.end('HTTP/1.1 400 Mine\\r\\nConnection: close\\r\\n\\r\\n')
  })
  s.listen(0, async () => {
    for (const text of requests) {
      const got = await new Promise((resolve) => {
        let got = ''
        const c = net.connect(s.address().port, '127.0.0.1', () => c.end(text))
        c.on('data', (d) => { got += d })
        c.on('close', () => resolve(got.split('\\r\\n')[0]))
      })
      seen.push(got)
    }
    console.log(JSON.stringify(seen))
    s.close()
  })
`

const H = 'Host: a\r\n'
const CHUNKED = 'POST / HTTP/1.1\r\n' + H + 'Transfer-Encoding: chunked\r\n\r\n'

test.each([
  ['an unknown method', ['FOO /\r\n', 'Oopsie-doopsie\r\n', 'GETX / HTTP/1.1\r\n', 'GET_X / HTTP/1.1\r\n']],
  ['Content-Length and Transfer-Encoding, either order', [
    'POST / HTTP/1.1\r\n' + H + 'Content-Length: 10\r\nTransfer-Encoding: eee, chunked\r\n\r\n',
    'POST / HTTP/1.1\r\n' + H + 'Transfer-Encoding: chunked\r\nContent-Length: 10\r\n\r\n'
  ]],
  ['framing headers', [
    'POST / HTTP/1.1\r\n' + H + 'Transfer-Encoding: gzip\r\n\r\n',
    'POST / HTTP/1.1\r\n' + H + 'Content-Length: 1\r\nContent-Length: 2\r\n\r\n',
    'POST / HTTP/1.1\r\n' + H + 'Content-Length: x\r\n\r\n'
  ]],
  ['a chunked body', [CHUNKED + 'zz\r\n', CHUNKED + '1;\r\nx\r\n0\r\n\r\n', CHUNKED + '2\r\nAAxx']]
])('%s: the \'clientError\' listener gets node\'s code and message', async (name, requests) => {
  const r = await both(listenerApp(requests), { cwd: ROOT })
  // bytesParsed is llhttp's offset, known to the preload for a method only; a chunked
  // body's rawPacket is the whole read on node, the bytes from the body's start here
  const body = name === 'a chunked body'
  const view = (lines) => lines.map((l) => l.map((e) => {
    if (!Array.isArray(e)) return e
    if (e[0] === 'HPE_INVALID_METHOD') return e
    return body ? [e[0], e[1]] : [e[0], e[1], e[3]]
  }))
  expect(r.code).toBe(0)
  expect(r.node.length).toBe(1)
  // node's listener got one error per request, each an llhttp code: what ours must match
  const errors = r.node[0].filter(Array.isArray)
  expect(errors.length).toBe(requests.length)
  for (const e of errors) expect(e[0]).toMatch(/^HPE_/)
  expect(view(r.ours)).toEqual(view(r.node))
}, 30000)

test('no \'clientError\' listener: node\'s 400, the connection closed at once, and the socket object the app has says \'error\' with the error', async () => {
  const app = `
    const http = require('http')
    const net = require('net')
    const seen = []
    const s = http.createServer()
    s.on('connection', (socket) => {
      socket.on('error', (err) => seen.push(['error', err.code, err.message, err.bytesParsed, err.rawPacket.toString()]))
      socket.on('close', () => seen.push('close'))
    })
    s.listen(0, () => {
      let got = ''
      const c = net.connect({ port: s.address().port, host: '127.0.0.1', allowHalfOpen: true }, () => c.write('FOO /\\r\\n'))
      c.on('data', (d) => { got += d })
      c.on('end', () => setTimeout(() => {
        console.log(JSON.stringify(got))
        console.log(JSON.stringify(seen))
        c.destroy()
        s.close()
      }, 100))
    })
  `
  const node = await runPreloaded(app, { cwd: ROOT, preload: false })
  const ours = await runPreloaded(app, { cwd: ROOT })
  expect(node.lines.length).toBe(2)
  expect(ours.lines).toEqual(node.lines)
  // the connection is closed at once, as node's socket.destroy(): the process exits
  // with the server's close(), not after the router's wait for the client to close
  // (5 s)
  expect(ours.ms).toBeLessThan(3000)
}, 30000)

test('chunk extensions are limited per chunk: three chunks of 10 KB extensions pass, one of 17 KB is 413', async () => {
  const app = `
    const http = require('http')
    const net = require('net')
    const s = http.createServer((req, res) => { req.resume(); req.on('end', () => res.end('bye')) })
    const send = (text) => new Promise((resolve) => {
      let got = ''
      const c = net.connect(s.address().port, '127.0.0.1', () => c.end(text))
      c.on('data', (d) => { got += d })
      c.on('close', () => resolve(got.split('\\r\\n')[0]))
    })
    s.listen(0, async () => {
      const head = 'POST / HTTP/1.1\\r\\nHost: a\\r\\nConnection: close\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n'
      const chunk = (n) => '2;' + 'A'.repeat(n) + '=bar\\r\\nAA\\r\\n'
      console.log(JSON.stringify(await send(head + chunk(10000) + chunk(10000) + chunk(10000) + '0\\r\\n\\r\\n')))
      console.log(JSON.stringify(await send(head + chunk(17000) + '0\\r\\n\\r\\n')))
      s.close()
    })
  `
  const r = await both(app, { cwd: ROOT })
  expect(r.node).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 413 Payload Too Large'])
  expect(r.ours).toEqual(r.node)
}, 30000)
