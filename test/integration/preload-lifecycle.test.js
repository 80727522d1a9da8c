'use strict'

// Request lifecycles node's own tests found different through the preload (issue 26),
// on a port a standalone server owns: interim responses written raw (res._writeRaw(),
// what node's writeProcessing() and writeEarlyHints() use, or req.socket.write()),
// pipelined requests that all reach the app before one of them destroys the socket,
// and a request whose body turns out malformed, which the app still gets (node emitted
// 'request' at its head) while nothing smuggled behind it reaches the app. Each app
// runs on node's stack and with the preload.

const { both } = require('../helpers/run-preloaded')

test('an interim head written raw (res._writeRaw, req.socket.write) reaches the client as \'information\', and res then sends the final response, as node\'s', async () => {
  const r = await both(`
    const http = require('http')
    const s = http.createServer((req, res) => {
      res._writeRaw('HTTP/1.1 102 Processing\\r\\n')
      res._writeRaw('Foo: Bar\\r\\n')
      res._writeRaw('\\r\\n', () => {
        req.socket.write('HTTP/1.1 103 Early Hints\\r\\nLink: </a.css>; rel=preload\\r\\n\\r\\n')
        res.writeHead(200, { 'Content-Type': 'text/plain' })
        res.end('done')
      })
    })
    s.listen(0, () => {
      const seen = []
      const req = http.get({ port: s.address().port, agent: false })
      req.on('information', (i) => seen.push([i.statusCode, i.statusMessage, i.rawHeaders]))
      req.on('response', (res) => {
        let b = ''
        res.on('data', (d) => { b += d })
        res.on('end', () => { seen.push([res.statusCode, b]); console.log(JSON.stringify(seen)); s.close() })
      })
    })
  `)
  expect(r.node).toEqual([[[102, 'Processing', ['Foo', 'Bar']], [103, 'Early Hints', ['Link', '</a.css>; rel=preload']], [200, 'done']]])
  expect(r.ours).toEqual(r.node)
})

test('pipelined requests all reach the app before a handler destroys the connection, as node\'s', async () => {
  const r = await both(`
    const http = require('http')
    const net = require('net')
    const urls = []
    const s = http.createServer((req, res) => {
      urls.push(req.url)
      if (req.url === '/1') setImmediate(() => req.socket.destroy())
      else res.write('part')
    })
    s.listen(0, () => {
      const c = net.connect(s.address().port, '127.0.0.1')
      let wrote = ''
      for (let i = 0; i < 10; i++) wrote += 'GET /' + i + ' HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n'
      c.on('connect', () => c.write(wrote))
      c.on('data', () => {})
      c.on('error', () => {})
      c.on('close', () => setTimeout(() => { console.log(JSON.stringify(urls)); s.close() }, 50))
    })
  `)
  expect(r.node).toEqual([['/0', '/1', '/2', '/3', '/4', '/5', '/6', '/7', '/8', '/9']])
  expect(r.ours).toEqual(r.node)
})

test('a chunked body with a malformed chunk line: the app still gets its request, the request smuggled after it never reaches the app, the connection closes, as node\'s', async () => {
  const r = await both(`
    const http = require('http')
    const net = require('net')
    const urls = []
    const s = http.createServer((req, res) => { urls.push(req.url); req.on('error', () => {}); res.end('hello') })
    s.listen(0, () => {
      const c = net.connect(s.address().port, '127.0.0.1')
      c.on('connect', () => c.write('GET / HTTP/1.1\\r\\nHost: a\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n2;\\nxx\\r\\n4c\\r\\n0\\r\\n\\r\\nGET /admin HTTP/1.1\\r\\nHost: a\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n'))
      let got = ''
      c.on('data', (d) => { got += d })
      c.on('close', () => setTimeout(() => { console.log(JSON.stringify({ urls, heads: got.match(/HTTP\\/1\\.1 \\d+/g) })); s.close() }, 100))
    })
  `)
  // node's parser fails in the read that brought the head, after the app's listener
  // answered: that answer goes out and node closes without its 400 (socketOnError: the
  // response in flight sent its headers). The router waits for the worker's ACK of the
  // head to know, the server attaching first (the client connects as listen() returns)
  expect(r.node).toEqual([{ urls: ['/'], heads: ['HTTP/1.1 200'] }])
  expect(r.ours).toEqual(r.node)
})

test('a \'clientError\' listener that leaves the connection open gets each later read as the error again, with its bytes as rawPacket, as node\'s', async () => {
  const r = await both(`
    const http = require('http')
    const net = require('net')
    const seen = []
    let c
    const s = http.createServer(() => seen.push('request'))
    s.on('clientError', (err) => {
      seen.push(err.code + ' ' + err.rawPacket.toString())
      if (seen.length < 3) c.write('*' + seen.length)
      else c.end()
    })
    s.listen(0, () => {
      c = net.connect(s.address().port, '127.0.0.1', () => c.write('*'))
      c.on('close', () => { console.log(JSON.stringify(seen)); s.close() })
    })
  `)
  expect(r.node).toEqual([['HPE_INVALID_METHOD *', 'HPE_INVALID_METHOD *1', 'HPE_INVALID_METHOD *2']])
  expect(r.ours).toEqual(r.node)
})
