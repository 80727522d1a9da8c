'use strict'

// Tunnels as node's server makes them (issue 26): a CONNECT on a port a standalone
// server owns reaches its 'connect' listener with the socket and the bytes the client
// sent after the head, and the app's 2xx opens the tunnel; the bytes after an upgrade
// request's head are the 'upgrade' listener's `head` (standalone and under a shared
// router, the JS hub and the native one), never delivered twice; a shared router still
// answers every CONNECT 400.
// Standalone cases run the same app on node's stack and with the preload.

const net = require('node:net')
const { Server } = require('../../src/http/server')
const hubClient = require('../../src/queue/hub-client')
const { until } = require('../helpers/hub-harness')
const { ROUTERS } = require('../helpers/routers')
const { both } = require('../helpers/run-preloaded')

describe('CONNECT on a port a standalone server owns', () => {
  test('\'connect\' gets the target, the bytes sent after the head as `head`, and the socket; the app\'s 200 opens the tunnel both ways, as node\'s', async () => {
    const r = await both(`
      const http = require('http')
      const net = require('net')
      const s = http.createServer((req, res) => res.end('plain'))
      const seen = []
      s.on('connect', (req, socket, head) => {
        seen.push({ method: req.method, url: req.url, head: head.toString() })
        socket.write('HTTP/1.1 200 Connection established\\r\\n\\r\\n')
        socket.on('data', (d) => socket.write(d.toString().toUpperCase()))
        socket.on('end', () => socket.end())
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port, '127.0.0.1')
        let got = ''
        let sent = false
        c.on('connect', () => c.write('CONNECT example.com:443 HTTP/1.1\\r\\nHost: example.com:443\\r\\n\\r\\nearly'))
        c.on('data', (d) => {
          got += d
          if (!sent && got.includes('\\r\\n\\r\\n')) { sent = true; c.write('late') }
          if (got.endsWith('LATE')) c.end()
        })
        c.on('end', () => { console.log(JSON.stringify({ seen, got })); s.close() })
      })
    `)
    expect(r.node).toEqual([{ seen: [{ method: 'CONNECT', url: 'example.com:443', head: 'early' }], got: 'HTTP/1.1 200 Connection established\r\n\r\nLATE' }])
    expect(r.ours).toEqual(r.node)
    expect(r.code).toBe(0)
  })

  test('without a \'connect\' listener the connection is closed unanswered, as node\'s', async () => {
    const r = await both(`
      const http = require('http')
      const net = require('net')
      const s = http.createServer((req, res) => res.end('plain'))
      s.listen(0, () => {
        const c = net.connect(s.address().port, '127.0.0.1', () => c.write('CONNECT example.com:443 HTTP/1.1\\r\\nHost: example.com:443\\r\\n\\r\\n'))
        let got = ''
        c.on('data', (d) => { got += d })
        c.on('error', () => {})
        c.on('close', () => { console.log(JSON.stringify({ got })); s.close() })
      })
    `)
    expect(r.node).toEqual([{ got: '' }])
    expect(r.ours).toEqual(r.node)
  })
})

describe('the upgrade head (standalone)', () => {
  test('the bytes sent with the upgrade request are the listener\'s `head` and do not come again as \'data\', as node\'s', async () => {
    const r = await both(`
      const http = require('http')
      const net = require('net')
      const s = http.createServer((req, res) => res.end('plain'))
      const heads = []
      s.on('upgrade', (req, socket, head) => {
        heads.push(head.toString())
        socket.write('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: echo\\r\\n\\r\\n')
        socket.on('data', (d) => socket.write('[' + d + ']'))
        socket.on('end', () => socket.end())
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port, '127.0.0.1')
        let got = ''
        let sent = false
        c.on('connect', () => c.write('GET /chat HTTP/1.1\\r\\nHost: a\\r\\nConnection: Upgrade\\r\\nUpgrade: echo\\r\\n\\r\\nfirst'))
        c.on('data', (d) => {
          got += d
          if (!sent && got.includes('\\r\\n\\r\\n')) { sent = true; c.write('second') }
          if (got.endsWith('[second]')) c.end()
        })
        c.on('end', () => { console.log(JSON.stringify({ heads, got })); s.close() })
      })
    `)
    expect(r.node).toEqual([{ heads: ['first'], got: 'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n[second]' }])
    expect(r.ours).toEqual(r.node)
  })
})

// the routers of helpers/routers.js: the native one (issue 25)
describe.each(ROUTERS)('under a shared router: %s', (_, startRouter) => {
  let hub
  const servers = []
  beforeAll(async () => { hub = await startRouter() })
  afterAll(async () => {
    for (const s of servers) {
      s.on('error', () => {})
      s.close()
    }
    await hub.close()
  })

  async function serve (setup, prefix = 'http://+:0/') {
    const queue = `tun${servers.length}`
    const port = (await hub.createQueue(queue, { urls: [prefix] })).ports[0]
    const backend = { attach: (o) => hubClient.attach({ ...o, socketPath: hub.socketPath, queue }) }
    const server = new Server({ queueBackend: backend }, (req, res) => res.end('plain'))
    setup(server)
    await new Promise((resolve) => server.listen(port, resolve))
    servers.push(server)
    return port
  }

  function send (port, bytes) {
    const c = { socket: net.connect(port, '127.0.0.1'), text: '', closed: false }
    c.socket.on('data', (d) => { c.text += d.toString('latin1') })
    c.socket.on('error', () => {})
    c.socket.on('close', () => { c.closed = true })
    c.socket.write(bytes)
    return c
  }

  test('a CONNECT is 400 whatever the app listens for', async () => {
    let connects = 0
    const port = await serve((s) => s.on('connect', () => { connects++ }))
    const c = send(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    await until(() => c.closed)
    expect(c.text).toMatch(/^HTTP\/1\.1 400 /)
    expect(connects).toBe(0)
  })

  test('an upgrade the router answers itself (404) is followed by the requests pipelined after it, each answered once', async () => {
    const urls = []
    const port = await serve((s) => s.on('request', (req) => urls.push(req.url)), 'http://+:0/app/')
    const c = send(port, 'GET /other HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n' +
      'GET /app/x HTTP/1.1\r\nHost: a\r\n\r\nGET /app/y HTTP/1.1\r\nHost: a\r\n\r\n')
    await until(() => (c.text.match(/HTTP\/1\.1 \d+/g) || []).length >= 3)
    await new Promise((resolve) => setTimeout(resolve, 100))
    c.socket.destroy()
    expect(c.text.match(/HTTP\/1\.1 \d+/g)).toEqual(['HTTP/1.1 404', 'HTTP/1.1 200', 'HTTP/1.1 200'])
    expect(urls).toEqual(['/app/x', '/app/y'])
  })

  test('an upgrade\'s `head` holds the bytes sent after its head, and the tunnel starts after them', async () => {
    const heads = []
    const port = await serve((s) => s.on('upgrade', (req, socket, head) => {
      heads.push(head.toString())
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n')
      socket.on('data', (d) => socket.write('[' + d + ']'))
    }))
    const c = send(port, 'GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\nfirst')
    await until(() => c.text.includes('\r\n\r\n'))
    c.socket.write('second')
    await until(() => c.text.endsWith('[second]'))
    c.socket.destroy()
    expect(heads).toEqual(['first'])
    expect(c.text).toBe('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n[second]')
  })
})
