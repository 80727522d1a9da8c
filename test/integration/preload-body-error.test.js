'use strict'

// A body the parser refuses (a malformed chunk line after a good head) on a server's
// own port is node's socketOnError (lib/_http_server.js), as a head it refuses is: the
// server's 'clientError' listener gets it, after the request's 'request', and may
// answer as it likes or keep the socket; without one node writes its 400 unless the
// response in flight sent its head, and destroys the socket. Each app runs on node's
// stack and with the preload; the bytes the client gets and the server's events are
// compared.

const path = require('node:path')
const { both } = require('../helpers/run-preloaded')

const ROOT = path.join(__dirname, '..', '..')

const app = (mode) => `
  const http = require('http')
  const net = require('net')
  const mode = ${JSON.stringify(mode)}
  const seen = []
  const s = http.createServer((req, res) => {
    seen.push('request ' + req.method)
    req.on('aborted', () => seen.push('aborted'))
    res.on('close', () => seen.push('res close'))
    if (mode === 'answered') res.end('hello')
    if (mode === 'kept') setTimeout(() => res.end('late'), 100)
    if (mode === 'head') res.write('part')
  })
  if (mode === 'listener') {
    s.on('clientError', (err, socket) => {
      seen.push('clientError ' + err.code)
      socket.end('HTTP/1.1 400 Mine ' + err.code + '\\r\\nConnection: close\\r\\n\\r\\n')
    })
  }
  if (mode === 'kept') s.on('clientError', (err) => seen.push('clientError ' + err.code))
  s.listen(0, () => {
    const c = net.connect(s.address().port, '127.0.0.1', () => {
      const head = 'POST / HTTP/1.1\\r\\nHost: a\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n'
      // 'answered': the bad chunk line comes with the head (node's handler has ended
      // its response when the error comes); else a read later
      if (mode === 'answered') c.write(head + 'zz\\r\\n')
      else {
        c.write(head)
        setTimeout(() => c.write('zz\\r\\n'), 50)
      }
      if (mode === 'kept') setTimeout(() => c.end(), 300)
    })
    let got = ''
    c.on('data', (d) => { got += d })
    c.on('close', () => setTimeout(() => {
      console.log(JSON.stringify(got.replace(/Date: .*\\r\\n/, '')))
      console.log(JSON.stringify(seen))
      s.close()
    }, 50))
  })
`

// what each title says the client gets, checked on node's run too: a preload that
// quietly ran on node's own stack, or a node that behaved otherwise, is caught
test.each([
  ['listener', 'a \'clientError\' listener gets the body\'s error after \'request\' and writes its own answer', /^HTTP\/1\.1 400 Mine HPE_/],
  ['kept', 'a \'clientError\' listener that keeps the socket: the app\'s later answer reaches the client', /late$/],
  ['none', 'no listener, no answer: node\'s own 400 bytes, and the request is aborted', /^HTTP\/1\.1 400 Bad Request/],
  ['answered', 'no listener, the handler ended its response before the error was read: no 400 after it', /^(?![\s\S]*400)[\s\S]*hello/],
  ['head', 'no listener, the response in flight sent its head: no 400, the connection destroyed', /^(?![\s\S]*400)HTTP\/1\.1 200/]
])('a malformed chunk line on a server\'s own port (%s): %s, as node\'s', async (mode, title, client) => {
  const r = await both(app(mode), { cwd: ROOT })
  expect(r.code).toBe(0)
  expect(r.node.length).toBe(2)
  expect(r.node[0]).toMatch(client)
  expect(r.ours).toEqual(r.node)
}, 30000)
