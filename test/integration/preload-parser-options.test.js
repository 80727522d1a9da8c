'use strict'

// A standalone server's own parser options (issue 26): insecureHTTPParser (the option,
// or node's --insecure-http-parser) and maxHeaderSize (the option, or
// --max-http-header-size) hold on the port it owns, and for the streams the app hands
// it with server.emit('connection', socket), which it serves as node's does: a duplex
// stream of a server that never listened, or a socket the app accepted itself. Each app
// runs on node's stack and with the preload.

const { both: runBoth } = require('../helpers/run-preloaded')

const both = (code, flags = []) => runBoth(code, { flags })

// a request whose header value holds a control character (node's own test: \b)
const LENIENT_APP = (options) => `
  const http = require('http')
  const net = require('net')
  const s = http.createServer(${options}, (req, res) => res.end('saw ' + JSON.stringify(req.headers['x-ctl'])))
  s.listen(0, () => {
    const c = net.connect(s.address().port, '127.0.0.1', () => c.write('GET / HTTP/1.1\\r\\nHost: a\\r\\nX-Ctl: a\\bb\\r\\nConnection: close\\r\\n\\r\\n'))
    let got = ''
    c.on('data', (d) => { got += d })
    c.on('close', () => { console.log(JSON.stringify({ status: got.split('\\r\\n')[0], body: /200/.test(got) ? got.slice(got.lastIndexOf('\\r\\n') + 2) : '' })); s.close() })
  })
`

describe('insecureHTTPParser on the port the server owns', () => {
  test('createServer({ insecureHTTPParser: true }) takes a header value with a control character; the default server answers 400, as node\'s', async () => {
    const lenient = await both(LENIENT_APP('{ insecureHTTPParser: true }'))
    expect(lenient.node).toEqual([{ status: 'HTTP/1.1 200 OK', body: 'saw "a\\bb"' }])
    expect(lenient.ours).toEqual(lenient.node)
    const strict = await both(LENIENT_APP('{}'))
    expect(strict.node).toEqual([{ status: 'HTTP/1.1 400 Bad Request', body: '' }])
    expect(strict.ours).toEqual(strict.node)
  })

  test('--insecure-http-parser makes every server lenient unless it says otherwise, as node\'s', async () => {
    const r = await both(LENIENT_APP('{}'), ['--insecure-http-parser'])
    expect(r.node).toEqual([{ status: 'HTTP/1.1 200 OK', body: 'saw "a\\bb"' }])
    expect(r.ours).toEqual(r.node)
  })
})

test('--max-http-header-size is the default maxHeaderSize of the port the server owns, as node\'s', async () => {
  const code = `
    const http = require('http')
    const net = require('net')
    const s = http.createServer((req, res) => res.end(String(req.headers['x-big'].length)))
    s.listen(0, () => {
      const c = net.connect(s.address().port, '127.0.0.1', () => c.write('GET / HTTP/1.1\\r\\nHost: a\\r\\nX-Big: ' + 'b'.repeat(30000) + '\\r\\nConnection: close\\r\\n\\r\\n'))
      let got = ''
      c.on('data', (d) => { got += d })
      c.on('close', () => { console.log(JSON.stringify(got.split('\\r\\n')[0])); s.close() })
    })
  `
  const r = await both(code, ['--max-http-header-size=40000'])
  expect(r.node).toEqual(['HTTP/1.1 200 OK'])
  expect(r.ours).toEqual(r.node)
})

describe('server.emit(\'connection\', socket)', () => {
  test('a duplex stream handed to a server that never listened is served: keep-alive requests, a body, its options; garbage is \'clientError\'; the process exits, as node\'s', async () => {
    const r = await both(`
      const http = require('http')
      const { duplexPair } = require('stream')
      const out = []
      const s = http.createServer({ insecureHTTPParser: true }, (req, res) => {
        let body = ''
        req.on('data', (d) => { body += d })
        req.on('end', () => res.end(req.method + ' ' + req.url + ' ' + body + ' ' + JSON.stringify(req.headers['x-ctl'] || null)))
      })
      s.on('clientError', (err, socket) => { out.push('clientError ' + err.code); socket.destroy() })
      const [client, server] = duplexPair()
      s.emit('connection', server)
      const get = (opts, body) => new Promise((resolve) => {
        const req = http.request({ createConnection: () => client, ...opts }, (res) => {
          let b = ''
          res.on('data', (d) => { b += d })
          res.on('end', () => resolve(res.statusCode + ' ' + b))
        })
        req.shouldKeepAlive = true
        req.end(body)
      })
      ;(async () => {
        out.push(await get({ path: '/a', headers: { Connection: 'keep-alive', 'X-Ctl': 'plain' } }))
        out.push(await get({ path: '/b', method: 'PUT', headers: { Connection: 'keep-alive' } }, 'data'))
        const [c2, s2] = duplexPair()
        s.emit('connection', s2)
        c2.end('not http at all\\r\\n\\r\\n')
        await new Promise((resolve) => s2.on('close', resolve))
        console.log(JSON.stringify(out))
      })()
    `)
    expect(r.node).toEqual([['200 GET /a  "plain"', '200 PUT /b data null', 'clientError HPE_INVALID_METHOD']])
    expect(r.ours).toEqual(r.node)
    expect(r.code).toBe(0)
  })

  test('a socket the app accepted with its own net.Server (sticky sessions pass them so) is served by the http server, as node\'s', async () => {
    const r = await both(`
      const http = require('http')
      const net = require('net')
      const s = http.createServer((req, res) => res.end('via ' + req.url))
      const front = net.createServer((socket) => s.emit('connection', socket))
      front.listen(0, () => {
        http.get({ port: front.address().port, path: '/handed', agent: false }, (res) => {
          let b = ''
          res.on('data', (d) => { b += d })
          res.on('end', () => { console.log(JSON.stringify([res.statusCode, b])); front.close() })
        })
      })
    `)
    expect(r.node).toEqual([[200, 'via /handed']])
    expect(r.ours).toEqual(r.node)
    expect(r.code).toBe(0)
  })
})
