'use strict'

// node's http server contract under the preload (standalone: the process's own router;
// and under httpsys start), as apps and their test tools rely on it: the port is bound
// when listen() returns, close() frees it at once and lets the process exit,
// listen(port, host) binds that address only, a client that goes away is heard of.
// Each case is a small app run with `node --require src/register.js`; what it prints
// is compared with what node does.

const path = require('node:path')
const net = require('node:net')
const { routerBin } = require('../helpers/native-router')
const { runPreloaded, lines } = require('../helpers/run-preloaded')

const hasIPv6Loopback = new Promise((resolve) => {
  const s = net.createServer()
  s.once('error', () => resolve(false))
  s.listen(0, '::1', () => s.close(() => resolve(true)))
})

describe('listen() binds before it returns (standalone)', () => {
  test('address(), listening and _handle are set at once, and a request sent right away is served', async () => {
    const r = await runPreloaded(`
      const http = require('http')
      const s = http.createServer((req, res) => res.end('ok'))
      s.listen(0)
      const a = s.address()
      console.log(JSON.stringify({ listening: s.listening, handle: Boolean(s._handle), address: a }))
      let events = 0
      s.on('listening', () => { events++ })
      http.get({ port: a.port, agent: false }, (res) => {
        let body = ''
        res.on('data', (d) => { body += d })
        res.on('end', () => { console.log(JSON.stringify({ status: res.statusCode, body, events })); s.close() })
      })
    `)
    expect(r.err).toBe('')
    const [sync, reply] = lines(r.out)
    expect(sync).toEqual({ listening: true, handle: true, address: { address: '::', family: 'IPv6', port: expect.any(Number) } })
    expect(sync.address.port).toBeGreaterThan(0)
    expect(reply).toEqual({ status: 200, body: 'ok', events: 1 })
    expect(r.code).toBe(0)
  })

  test('listen({ port: undefined }) and listen({ port: null }) pick a port; listen({}) throws as node does', async () => {
    const code = `
      const http = require('http')
      const out = {}
      for (const [k, o] of [['undef', { port: undefined }], ['null', { port: null }], ['empty', {}]]) {
        const s = http.createServer()
        try { s.listen(o); out[k] = s.address() && s.address().port > 0; s.close() } catch (e) { out[k] = e.code }
      }
      console.log(JSON.stringify(out))
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual({ undef: true, null: true, empty: 'ERR_INVALID_ARG_VALUE' })
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })

  test('a port taken by another program: address() is null, then \'error\' EADDRINUSE', async () => {
    const blocker = net.createServer().listen(0)
    await new Promise((resolve) => blocker.once('listening', resolve))
    try {
      const r = await runPreloaded(`
        const s = require('http').createServer()
        s.on('error', (e) => { console.log(JSON.stringify({ code: e.code, listening: s.listening })) })
        s.listen(${blocker.address().port})
        console.log(JSON.stringify({ address: s.address() }))
      `)
      expect(lines(r.out)).toEqual([{ address: null }, { code: 'EADDRINUSE', listening: false }])
    } finally {
      blocker.close()
    }
  })
})

describe('close()', () => {
  test('frees the port before its callback: the same port listens again in it; listen() right after close() is allowed', async () => {
    const r = await runPreloaded(`
      const http = require('http')
      const s = http.createServer((req, res) => res.end('one'))
      s.listen(0)
      const port = s.address().port
      http.get({ port }, (res) => {
        res.resume()
        res.on('end', () => {
          s.close(() => {
            const s2 = http.createServer((req, res) => res.end('two')).listen(port)
            s2.on('error', (e) => console.log(JSON.stringify({ error: e.code })))
            http.get({ port, agent: false }, (r2) => {
              let b = ''
              r2.on('data', (d) => { b += d })
              r2.on('end', () => {
                const s3 = http.createServer()
                s3.listen(0)
                s3.close()
                let again = 'ok'
                try { s3.listen(0); s3.close() } catch (e) { again = e.code }
                console.log(JSON.stringify({ second: b, again }))
                s2.close()
              })
            })
          })
        })
      })
    `)
    expect(r.err).toBe('')
    expect(lines(r.out)).toEqual([{ second: 'two', again: 'ok' }])
    expect(r.code).toBe(0)
  })

  test('an idle keep-alive connection does not keep the process alive after close()', async () => {
    // node's default agent keeps the connection open; the server's close() must end it
    const r = await runPreloaded(`
      const http = require('http')
      const agent = new http.Agent({ keepAlive: true })
      const s = http.createServer((req, res) => res.end('ok'))
      s.listen(0, () => {
        http.get({ port: s.address().port, agent }, (res) => {
          res.resume()
          res.on('end', () => setTimeout(() => { console.log(JSON.stringify({ closing: Date.now() })); s.close() }, 50))
        })
      })
    `)
    expect(r.code).toBe(0)
    const [{ closing }] = lines(r.out)
    expect(closing).toBeGreaterThan(0)
    // the router's keep-alive timeout is 5 s: exiting well before it means close() ended the connection
    expect(r.ms).toBeLessThan(3000)
  })

  test('close() in a handler still serves the requests that come on that connection while it is busy, then calls back, as node\'s', async () => {
    // the first response is under way when close() is called; the client sends three
    // more on the same connection after its first bytes: node reads and serves them
    const code = `
      const http = require('http')
      const net = require('net')
      let n = 0
      const s = http.createServer((req, res) => {
        n++
        if (n === 1) {
          s.close(() => console.log(JSON.stringify({ closed: n })))
          res.write('first')
          setTimeout(() => res.end(), 200)
        } else {
          res.end('r' + n)
        }
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port)
        c.write('GET /1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')
        let got = ''
        const count = () => got.split('HTTP/1.1 200').length - 1
        c.on('data', (d) => {
          if (got === '') c.write('GET /2 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'.repeat(3))
          got += d
          if (/r4\\r\\n0\\r\\n\\r\\n$|r4$/.test(got)) c.end()
        })
        c.on('close', () => console.log(JSON.stringify({ responses: count() })))
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)).toEqual(expect.arrayContaining([{ responses: 4 }, { closed: 4 }]))
    expect(lines(ours.out)).toEqual(expect.arrayContaining([{ responses: 4 }, { closed: 4 }]))
    expect(ours.code).toBe(0)
  })

  test.each([
    ['in the request\'s listener', 'closeNow()'],
    ['from a timer while the response is still to come', 'setTimeout(closeNow, 50)']
  ])('close() %s: the busy connection stays the server\'s once its response is out, and the next request on it reaches the app (fastify answers it 503), as node\'s', async (name, call) => {
    const code = `
      const http = require('http')
      const net = require('net')
      const out = []
      const closeNow = () => s.close(() => { out.push(['closed']); console.log(JSON.stringify(out)) })
      const s = http.createServer((req, res) => {
        out.push(['request', req.url, s.listening])
        if (req.url === '/1') {
          ${call}
          setTimeout(() => res.end('one'), 250)
        } else {
          res.end('two')
        }
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port, () => c.write('GET /1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'))
        c.once('data', (d) => {
          out.push(['response', String(d).endsWith('one')])
          c.write('GET /2 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')
          c.once('data', (d) => { out.push(['response', String(d).endsWith('two')]); c.end() })
        })
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual([['request', '/1', true], ['response', true], ['request', '/2', false], ['response', true], ['closed']])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
    expect(ours.code).toBe(0)
  })

  test('close() soon after end(): the connection counts as idle though its response may still be going out; the response arrives, the request after it is not served; close() inside the \'request\' listener keeps it, as node\'s', async () => {
    // node's closeIdleConnections() skips a connection while a request on it is being
    // read (its 'request' listener still running counts) or a response is not ended
    const code = (closeNow) => `
      const http = require('http')
      const net = require('net')
      const out = []
      const s = http.createServer((req, res) => {
        out.push(['request', req.url])
        res.end(req.url === '/1' ? 'one' : 'two')
        if (req.url === '/1') ${closeNow ? 's.close()' : 'setImmediate(() => s.close())'}
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port, () => c.write('GET /1 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'))
        c.on('error', () => {})
        c.once('data', (d) => {
          out.push(['response', String(d).endsWith('one')])
          c.write('GET /2 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n', () => {})
          c.on('data', () => out.push(['more']))
        })
        c.on('close', () => { out.push(['client closed']); console.log(JSON.stringify(out)) })
      })
    `
    const node = await runPreloaded(code(false), { preload: false })
    const ours = await runPreloaded(code(false))
    expect(lines(node.out)[0]).toEqual([['request', '/1'], ['response', true], ['client closed']])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
    expect(ours.code).toBe(0)
    // (the connection stays until the client ends it: node waits for its keepAliveTimeout)
    const nodeNow = await runPreloaded(code(true).replace("out.push(['more'])", "{ out.push(['more']); c.end() }"), { preload: false })
    const oursNow = await runPreloaded(code(true).replace("out.push(['more'])", "{ out.push(['more']); c.end() }"))
    expect(lines(nodeNow.out)[0]).toEqual([['request', '/1'], ['response', true], ['request', '/2'], ['more'], ['client closed']])
    expect(lines(oursNow.out)[0]).toEqual(lines(nodeNow.out)[0])
  })

  test('close() while a request\'s head is half-sent: that request is served once the rest comes, as node\'s', async () => {
    // node's parser is in that request at close(): not idle. (The native router tells
    // the worker it kept the connection, CONN_KEPT, so the request after that is not
    // taken for one unread at close(): wire-protocol.md)
    const code = `
      const http = require('http')
      const net = require('net')
      const out = []
      const s = http.createServer((req, res) => { out.push(['request', req.url]); res.end('ok ' + req.url) })
      s.listen(0, () => {
        const slow = net.connect(s.address().port, () => slow.write('GET /slow HTTP/1.1\\r\\nHo'))
        slow.on('error', () => {})
        let got = ''
        slow.on('data', (d) => {
          got += d
          if (got.endsWith('ok /slow')) slow.end()
        })
        slow.on('close', () => { out.push(['slow answered', got.endsWith('ok /slow')]); console.log(JSON.stringify(out)) })
        setTimeout(() => {
          s.close()
          setTimeout(() => slow.write('st: x\\r\\n\\r\\n'), 100)
        }, 200)
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual([['request', '/slow'], ['slow answered', true]])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
    expect(ours.code).toBe(0)
  })

  test('after close(): an idle connection is ended, one with a head still coming stays until closeAllConnections(), as node\'s', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const s = http.createServer({ headersTimeout: 0, requestTimeout: 0 }, (req, res) => res.end('ok'))
      const closed = []
      s.listen(0, () => {
        const port = s.address().port
        const partial = net.connect(port, () => partial.write('GET / HTTP/1.1'))
        partial.on('close', () => closed.push('partial'))
        partial.on('error', () => {})
        const idle = net.connect(port, () => idle.write('GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'))
        idle.once('data', () => {
          s.close(() => console.log(JSON.stringify({ closeCallback: closed.slice() })))
          setTimeout(() => {
            console.log(JSON.stringify({ before: closed.slice() }))
            s.closeAllConnections()
          }, 300)
        })
        idle.on('close', () => closed.push('idle'))
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    const expected = [{ before: ['idle'] }, { closeCallback: expect.any(Array) }]
    expect(lines(node.out)).toEqual(expected)
    expect(lines(ours.out)).toEqual(expected)
    expect(ours.code).toBe(0)
  })

  test('closeIdleConnections() and close() while a client is still reading a large response: it gets all of it, then the connection ends, as node\'s', async () => {
    // close() calls closeIdleConnections() as node's does; the router calls a connection
    // idle once the response is handed to its socket, before a slow client has read it
    const code = `
      const http = require('http')
      const net = require('net')
      const SIZE = 8 * 1024 * 1024
      const s = http.createServer((req, res) => {
        res.setHeader('content-length', SIZE)
        res.on('finish', () => setTimeout(() => {
          s.closeIdleConnections()
          s.close()
        }, 200))
        res.end(Buffer.alloc(SIZE, 97))
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port)
        let got = 0
        let head = -1
        c.write('GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')
        c.pause()
        setTimeout(() => c.resume(), 600)
        c.on('data', (d) => {
          if (head === -1) head = d.indexOf('\\r\\n\\r\\n') + 4
          got += d.length
        })
        c.on('close', () => console.log(JSON.stringify({ body: got - head })))
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual({ body: 8 * 1024 * 1024 })
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
    expect(ours.code).toBe(0)
  })

  test('server.unref(): a process with nothing else to do exits', async () => {
    const r = await runPreloaded(`
      const s = require('http').createServer()
      s.listen(0, () => { console.log(JSON.stringify({ port: s.address().port })) })
      s.unref()
    `, { timeoutMs: 5000 })
    expect(r.signal).toBe(null)
    expect(r.code).toBe(0)
    expect(r.ms).toBeLessThan(3000)
  })

  test('close() of an unref()ed server still calls back, as node\'s', async () => {
    const code = `
      const s = require('http').createServer()
      s.listen(0, () => {
        s.unref()
        s.close(() => console.log(JSON.stringify({ closed: true })))
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)).toEqual([{ closed: true }])
    expect(lines(ours.out)).toEqual([{ closed: true }])
  })
})

describe('listen(path)', () => {
  test('a standalone server listens on a Unix socket: address() is the path, keep-alive requests are served, getConnections() counts the open connection, close() removes the file', async () => {
    const code = `
      const http = require('http')
      const fs = require('fs')
      const p = require('path').join(require('os').tmpdir(), 'httpsys-fidelity-' + process.pid + '.sock')
      const s = http.createServer((req, res) => res.end(req.url))
      s.listen(p)
      const out = { address: s.address() === p }
      const agent = new http.Agent({ keepAlive: true })
      const get = (path, cb) => http.get({ socketPath: p, path, agent }, (r) => { let b = ''; r.on('data', (d) => { b += d }); r.on('end', () => cb(b)) })
      get('/a', (a) => get('/b', (b) => {
        out.bodies = [a, b]
        s.getConnections((err, n) => {
          out.connections = n
          agent.destroy()
          s.close(() => { out.fileLeft = fs.existsSync(p); console.log(JSON.stringify(out)) })
        })
      }))
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toMatchObject({ address: true, bodies: ['/a', '/b'], fileLeft: false })
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })
})

describe('listen(port, host)', () => {
  test('binds that address only, and reports the client in its family', async () => {
    const v6 = await hasIPv6Loopback
    const r = await runPreloaded(`
      const http = require('http')
      const net = require('net')
      const s = http.createServer((req, res) => res.end(req.socket.remoteAddress + ' ' + req.socket.remoteFamily))
      s.listen(0, '127.0.0.1', () => {
        const port = s.address().port
        const out = { address: s.address() }
        const done = () => { console.log(JSON.stringify(out)); s.close() }
        http.get({ host: '127.0.0.1', port, agent: false }, (res) => {
          let b = ''
          res.on('data', (d) => { b += d })
          res.on('end', () => {
            out.seen = b
            if (!${v6}) return done()
            const c = net.connect(port, '::1')
            c.on('connect', () => { out.v6 = 'connected'; c.destroy(); done() })
            c.on('error', (e) => { out.v6 = e.code; done() })
          })
        })
      })
    `)
    expect(r.err).toBe('')
    const [out] = lines(r.out)
    expect(out.address).toEqual({ address: '127.0.0.1', family: 'IPv4', port: expect.any(Number) })
    expect(out.seen).toBe('127.0.0.1 IPv4')
    if (v6) expect(out.v6).toBe('ECONNREFUSED')
  })

  test('an address the machine does not have is EADDRNOTAVAIL', async () => {
    const r = await runPreloaded(`
      const s = require('http').createServer()
      s.on('error', (e) => console.log(JSON.stringify({ code: e.code, httpsysCode: e.httpsysCode })))
      s.listen(0, '192.0.2.123')
    `)
    expect(lines(r.out)).toEqual([{ code: 'EADDRNOTAVAIL', httpsysCode: 'ERR_HTTPSYS_ADDRESS_UNAVAILABLE' }])
  })
})

describe('test tools that need a bound port at once', () => {
  test('supertest drives an express app through the preload and closes its server', async () => {
    const r = await runPreloaded(`
      const express = require('express')
      const request = require('supertest')
      const app = express()
      app.get('/users/:id', (req, res) => res.json({ id: req.params.id }))
      ;(async () => {
        const a = await request(app).get('/users/7').expect(200)
        const b = await request(app).post('/users/7').expect(404)
        console.log(JSON.stringify({ a: a.body, b: b.status }))
      })().catch((e) => { console.log(JSON.stringify({ error: e.message })) })
    `, { timeoutMs: 10000 })
    expect(lines(r.out)).toEqual([{ a: { id: '7' }, b: 404 }])
    // supertest closed every server it started: nothing kept the process
    expect(r.code).toBe(0)
    expect(r.ms).toBeLessThan(4000)
  })
})

describe('under httpsys start', () => {
  const fs = require('node:fs')
  const os = require('node:os')
  const { start, freePort, get, cli } = require('../fixtures/apps/harness')
  const APP = path.join(__dirname, '..', 'fixtures', 'apps', 'address-sync.js')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-listen-'))
  let run
  afterEach(async () => { if (run) await run.cleanup() })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  test.each([
    ['with urls (the queue is bound before the app starts)', true],
    ['without urls (the first listen() decides the prefix)', false]
  ])('server.address() right after listen(): %s', async (name, withUrls) => {
    const port = await freePort()
    run = start(withUrls ? [APP, '-u', `http://+:${port}/`] : [APP], { env: { PORT_TO_LISTEN: String(port), HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') } })
    const rec = await run.waitFor((x) => x.stream === 'stdout' && /^sync-address /.test(x.msg))
    expect(JSON.parse(rec.msg.slice('sync-address '.length))).toEqual({ listening: true, port })
    await run.waitFor((x) => x.event === 'ready')
    const res = await get(port, '/')
    expect(JSON.parse(res.body)).toEqual({ port })
    // ls shows where it is served, whichever way the prefix was decided
    const ls = await cli(['ls', '--json', '--all-supervisors'], { env: { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') } })
    expect(JSON.parse(ls.stdout)[0].apps[0].urls).toEqual([`http://+:${port}/`])
  })

  test('maxRequestsPerSocket counts a keep-alive connection\'s requests across connectionsCheckingInterval ticks; the shared router closes after the last', async () => {
    const port = await freePort()
    run = start([path.join(__dirname, '..', 'fixtures', 'apps', 'max-requests.js')], { env: { PORT_TO_LISTEN: String(port), HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') } })
    await run.waitFor((x) => x.event === 'ready')
    const heads = await new Promise((resolve, reject) => {
      const c = net.connect(port, '127.0.0.1')
      const got = []
      const send = () => c.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n')
      c.on('data', (d) => {
        got.push(/Connection: (\S+)/.exec(String(d))[1])
        if (got.length === 1) setTimeout(send, 400) // a few checks go by
      })
      c.on('close', () => resolve(got))
      c.on('error', reject)
      c.on('connect', send)
    })
    expect(heads).toEqual(['keep-alive', 'close'])
  })
})

describe('req.socket is the connection', () => {
  test('one object for a keep-alive connection\'s requests, \'connection\' once, \'close\' when the client closes it, as node\'s', async () => {
    const code = `
      const http = require('http')
      const ev = []
      const sockets = []
      const s = http.createServer((req, res) => {
        if (!sockets.includes(req.socket)) sockets.push(req.socket)
        ev.push('request ' + sockets.indexOf(req.socket))
        res.end('x')
      })
      s.on('connection', (sock) => {
        ev.push('connection')
        sock.on('close', () => {
          ev.push('close')
          s.close(() => { ev.push('server closed'); console.log(JSON.stringify(ev)) })
        })
      })
      s.listen(0, () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
        const get = (cb) => http.get({ port: s.address().port, agent }, (r) => { r.resume(); r.on('end', cb) })
        get(() => get(() => get(() => setTimeout(() => agent.destroy(), 20))))
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual(['connection', 'request 0', 'request 0', 'request 0', 'close', 'server closed'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })

  test('socket.end() on an idle connection closes it for the client, as node\'s', async () => {
    const code = `
      const http = require('http')
      const s = http.createServer((req, res) => {
        const sock = req.socket
        res.end('x', () => setTimeout(() => sock.end(), 20))
      })
      s.listen(0, () => {
        const agent = new http.Agent({ keepAlive: true })
        http.get({ port: s.address().port, agent }, (r) => {
          r.resume()
          r.socket.on('close', () => { console.log(JSON.stringify({ clientSawClose: true })); agent.destroy(); s.close() })
        })
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code, { timeoutMs: 5000 })
    expect(lines(node.out)).toEqual([{ clientSawClose: true }])
    expect(lines(ours.out)).toEqual(lines(node.out))
  })
})

describe('req.socket is a net.Socket', () => {
  test('instanceof net.Socket (the request\'s, and the one \'dropRequest\' gives); setTimeout() returns it and its \'timeout\' comes, as node\'s', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const out = []
      const s = http.createServer((req, res) => {
        const sock = req.socket.setTimeout(100)
        out.push(['request', sock === req.socket, sock instanceof net.Socket, typeof sock.remoteAddress, sock.readyState])
        sock.once('timeout', () => { out.push(['timeout']); res.end('ok') })
      })
      s.maxRequestsPerSocket = 1
      s.on('dropRequest', (req, sock) => out.push(['dropRequest', sock instanceof net.Socket]))
      s.listen(0, () => {
        const c = net.connect(s.address().port)
        const get = 'GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'
        c.on('data', () => {})
        // (pipelined: node reads the second at once, the router once the first is answered)
        c.on('close', () => { console.log(JSON.stringify(out.sort())); s.close() })
        c.write(get + get)
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code, { timeoutMs: 5000 })
    expect(lines(node.out)[0]).toEqual([['dropRequest', true], ['request', true, true, 'string', 'open'], ['timeout']])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })
})

describe('http2 servers stay node\'s own', () => {
  const fs = require('node:fs')
  const os = require('node:os')
  const { selfSigned } = require('../helpers/tls-certs')
  let dir
  let cert
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-h2-'))
    cert = selfSigned(dir, 'localhost', ['localhost', '127.0.0.1'])
  })
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

  test('createSecureServer({ allowHTTP1: true }): an HTTP/1.1 client is answered by node\'s own request and response (the fallback takes http.IncomingMessage/ServerResponse, ours under the preload), an h2 one as before', async () => {
    const code = `
      const fs = require('fs')
      const http = require('http')
      const http2 = require('http2')
      const https = require('https')
      const s = http2.createSecureServer({ allowHTTP1: true, key: fs.readFileSync(${JSON.stringify(cert.key)}), cert: fs.readFileSync(${JSON.stringify(cert.cert)}) }, (req, res) => {
        res.setHeader('content-type', 'text/plain')
        res.end(req.httpVersion + ' ' + req.url + ' ' + (req instanceof http2.Http2ServerRequest ? 'h2' : 'http1'))
      })
      s.listen(0, () => {
        const port = s.address().port
        const out = {}
        https.get({ port, path: '/one', rejectUnauthorized: false, agent: false }, (res) => {
          let body = ''
          res.on('data', (d) => { body += d })
          res.on('end', () => {
            out.http1 = [res.statusCode, body]
            const client = http2.connect('https://localhost:' + port, { rejectUnauthorized: false })
            const r = client.request({ ':path': '/two' })
            let b2 = ''
            r.on('response', (h) => { out.h2status = h[':status'] })
            r.on('data', (d) => { b2 += d })
            r.on('end', () => {
              out.h2 = b2
              client.close()
              s.close()
              console.log(JSON.stringify(out))
            })
          })
        }).on('error', (err) => { console.log(JSON.stringify({ error: err.message })); process.exit(1) })
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual({ http1: [200, '1.1 /one http1'], h2status: 200, h2: '2.0 /two h2' })
    expect(ours.err).toBe('')
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
    expect(ours.code).toBe(0)
  })
})

describe('a response written to req.socket (hijacked)', () => {
  test('a whole HTTP/1.1 response written raw reaches the client; with Content-Length the connection serves the next request; res says no \'finish\', as node\'s', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const events = []
      const s = http.createServer((req, res) => {
        res.on('finish', () => events.push('finish ' + req.url))
        if (req.url === '/close') {
          req.socket.write('HTTP/1.1 200 OK\\r\\n\\r\\n')
          req.socket.write('hello from raw')
          req.socket.end()
        } else {
          req.socket.write('HTTP/1.1 201 Created\\r\\nContent-Length: 5\\r\\nX-A: b\\r\\n\\r\\nhel')
          setTimeout(() => req.socket.write('lo'), 20)
        }
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port, () => {
          c.write('GET /cl HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')
          setTimeout(() => c.write('GET /close HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'), 100)
        })
        let got = ''
        c.on('data', (d) => { got += d })
        c.on('end', () => {
          // the router says when it closes a connection (README): not part of the app's bytes
          console.log(JSON.stringify({ got: got.replace('Connection: close\\r\\n', ''), events }))
          s.close()
        })
      })
    `
    const expected = [{ got: 'HTTP/1.1 201 Created\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhelloHTTP/1.1 200 OK\r\n\r\nhello from raw', events: [] }]
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)).toEqual(expected)
    expect(ours.err).toBe('')
    expect(lines(ours.out)).toEqual(expected)
  })
})

describe('interim responses', () => {
  test('writeProcessing() and writeEarlyHints() reach node\'s client as \'information\' before the response, as from node', async () => {
    const code = `
      const http = require('http')
      const s = http.createServer((req, res) => {
        res.writeProcessing()
        res.writeEarlyHints({ link: ['</a.css>; rel=preload; as=style', '</b.js>; rel=preload; as=script'], 'x-hint': '1' })
        setTimeout(() => res.end('done'), 20)
      })
      s.listen(0, () => {
        const seen = []
        const req = http.get({ port: s.address().port, agent: false })
        req.on('information', (i) => seen.push([i.statusCode, i.headers.link || null, i.headers['x-hint'] || null]))
        req.on('response', (res) => {
          let b = ''
          res.on('data', (d) => { b += d })
          res.on('end', () => { seen.push([res.statusCode, b]); console.log(JSON.stringify(seen)); s.close() })
        })
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual([[102, null, null], [103, '</a.css>; rel=preload; as=style, </b.js>; rel=preload; as=script', '1'], [200, 'done']])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })
})

describe('a client that goes away', () => {
  test('req.socket.destroy(err): the socket\'s \'error\' listeners get err, then \'close\' (koa reports it as an app error)', async () => {
    const code = `
      const http = require('http')
      const ev = []
      const s = http.createServer((req, res) => {
        req.socket.on('error', (e) => ev.push('error ' + e.message))
        req.socket.on('close', (hadError) => { ev.push('close ' + hadError); setImmediate(() => { console.log(JSON.stringify(ev)); s.close() }) })
        req.socket.destroy(new Error('boom'))
      })
      s.listen(0, () => http.get({ port: s.address().port, agent: false }).on('error', () => {}))
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual(['error boom', 'close true'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })

  test('a body stream that fails mid-response: its error reaches the socket\'s listeners before pipeline()\'s callback, as on node (koa reports it once)', async () => {
    const code = `
      const http = require('http')
      const { pipeline, PassThrough } = require('stream')
      const order = []
      const s = http.createServer((req, res) => {
        req.socket.on('error', (e) => order.push('socket error: ' + e.message))
        const body = new PassThrough()
        pipeline(body, res, (err) => order.push('pipeline: ' + (err && err.message)))
        body.write('x')
        setImmediate(() => body.destroy(new Error('boom')))
      })
      s.listen(0, () => {
        http.get({ port: s.address().port, agent: false }, (res) => res.resume()).on('error', () => {})
        setTimeout(() => { console.log(JSON.stringify(order)); s.close() }, 300)
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    const expected = ['socket error: boom', 'pipeline: boom']
    expect(lines(node.out)).toEqual([expected])
    expect(lines(ours.out)).toEqual([expected])
  })

  test('a client that aborts while its request waits: the app hears \'aborted\' and \'close\', end() after it never finishes, close() completes', async () => {
    const code = `
      const http = require('http')
      const ev = []
      const s = http.createServer((req, res) => {
        ev.push('request destroyed=' + res.destroyed)
        req.on('aborted', () => ev.push('aborted'))
        res.on('close', () => {
          ev.push('res close')
          setTimeout(() => {
            res.on('finish', () => ev.push('finish'))
            res.end('late', () => ev.push('end cb'))
            s.close(() => { ev.push('server closed'); console.log(JSON.stringify(ev)) })
          }, 20)
        })
      })
      s.listen(0, () => {
        const r = http.get({ port: s.address().port, agent: false })
        r.on('error', () => {})
        setTimeout(() => r.destroy(), 50)
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual(['request destroyed=false', 'aborted', 'res close', 'server closed'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
    expect(ours.code).toBe(0)
  })
})

describe('a server that owns its port (listen(port))', () => {
  test('gets each target and Host as the client sent them: dot segments, a stray %, absolute-form, *, any Host value, as node\'s', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const s = http.createServer((req, res) => res.end(JSON.stringify([req.url, req.headers.host])))
      const raws = [
        'GET /users/../../todo.txt HTTP/1.1\\r\\nHost: a\\r\\n',
        'GET /% HTTP/1.1\\r\\nHost: a\\r\\n',
        'GET /%2e%2e/x HTTP/1.1\\r\\nHost: a\\r\\n',
        'GET / HTTP/1.1\\r\\nHost: http://example.com\\r\\n',
        'GET http://other.example/p?q=1 HTTP/1.1\\r\\nHost: a\\r\\n',
        'OPTIONS * HTTP/1.1\\r\\nHost: a\\r\\n'
      ]
      s.listen(0, async () => {
        for (const raw of raws) {
          const answer = await new Promise((resolve) => {
            const c = net.connect(s.address().port, '127.0.0.1', () => c.write(raw + 'Connection: close\\r\\n\\r\\n'))
            let b = ''
            c.on('data', (d) => { b += d })
            c.on('close', () => resolve(b.split('\\r\\n')[0] + ' ' + b.slice(b.indexOf('\\r\\n\\r\\n') + 4)))
          })
          console.log(JSON.stringify(answer))
        }
        s.close()
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)).toEqual([
      'HTTP/1.1 200 OK ["/users/../../todo.txt","a"]',
      'HTTP/1.1 200 OK ["/%","a"]',
      'HTTP/1.1 200 OK ["/%2e%2e/x","a"]',
      'HTTP/1.1 200 OK ["/","http://example.com"]',
      'HTTP/1.1 200 OK ["http://other.example/p?q=1","a"]',
      'HTTP/1.1 200 OK ["*","a"]'
    ])
    expect(lines(ours.out)).toEqual(lines(node.out))
  })

  test.each([
    ['the native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })]
  ])('%s: an https server given no certificate listens and every handshake fails, as node\'s (the router warns once)', async (name, routerEnv) => {
    const code = `
      const https = require('https')
      const tls = require('tls')
      const s = https.createServer({}, (req, res) => res.end('x'))
      s.on('tlsClientError', () => {})
      s.listen(0, () => {
        const c = tls.connect({ port: s.address().port, host: '127.0.0.1', rejectUnauthorized: false })
        c.on('secureConnect', () => { console.log(JSON.stringify({ listening: s.listening, handshake: 'ok' })); c.destroy(); s.close() })
        c.on('error', () => { console.log(JSON.stringify({ listening: s.listening, handshake: 'failed' })); s.close() })
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code, { env: routerEnv() })
    expect(lines(node.out)).toEqual([{ listening: true, handshake: 'failed' }])
    expect(lines(ours.out)).toEqual(lines(node.out))
    expect(ours.err).toContain('ERR_HTTPSYS_TLS_NO_CERT')
  })

  test('a 101 the app writes to a plain request goes out as written, as node\'s (express\'s res.status(101).end())', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const s = http.createServer((req, res) => { res.statusCode = 101; res.end() })
      s.listen(0, () => {
        const c = net.connect(s.address().port, '127.0.0.1', () => c.write('GET / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n'))
        let b = ''
        c.on('data', (d) => { b += d })
        setTimeout(() => { console.log(JSON.stringify(b.replace(/Date: [^\\r]*\\r\\n/, ''))); c.destroy(); s.close() }, 300)
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)).toEqual(['HTTP/1.1 101 Switching Protocols\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\n\r\n'])
    expect(lines(ours.out)).toEqual(lines(node.out))
  })

  test('a client that closes its side while its request waits: the app hears \'close\' within 60 ms (10 ms grace), as node\'s (at once)', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const s = http.createServer((req, res) => {
        const t0 = Date.now()
        // under 60 ms: node hears the FIN at once; the shared router's 100 ms grace is too long
        res.on('close', () => { console.log(JSON.stringify({ closedWithinMs: Date.now() - t0 < 60 ? 60 : Date.now() - t0 })); s.close() })
        setTimeout(() => c.end(), 5)
      })
      let c
      s.listen(0, () => {
        c = net.connect(s.address().port, '127.0.0.1', () => c.write('GET / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n'))
        c.on('data', () => {})
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)).toEqual([{ closedWithinMs: 60 }])
    expect(lines(ours.out)).toEqual(lines(node.out))
  })
})

describe('a request body read after the response', () => {
  test('the app answers 202 at once and reads a 3 MB upload that is still arriving: the whole body, then \'end\', as node\'s', async () => {
    const code = `
      const http = require('http')
      const crypto = require('crypto')
      const s = http.createServer((req, res) => {
        res.writeHead(202, { 'Content-Length': '8' })
        res.end('accepted')
        const h = crypto.createHash('sha256')
        let n = 0
        req.on('data', (d) => { n += d.length; h.update(d) })
        req.on('end', () => console.log(JSON.stringify({ server: n, sha: h.digest('hex'), complete: req.complete })))
        req.on('error', (e) => console.log(JSON.stringify({ error: e.code })))
        req.on('close', () => s.close())
      })
      s.listen(0, () => {
        const body = crypto.randomBytes(3 * 1024 * 1024)
        const sha = crypto.createHash('sha256').update(body).digest('hex')
        const r = http.request({ port: s.address().port, method: 'POST', headers: { 'Content-Length': body.length } }, (res) => {
          let b = ''
          res.on('data', (d) => { b += d })
          res.on('end', () => console.log(JSON.stringify({ client: res.statusCode, body: b, sha })))
        })
        r.write(body.subarray(0, 1000))
        setTimeout(() => r.end(body.subarray(1000)), 200)
      })
    `
    for (const r of [await runPreloaded(code, { preload: false }), await runPreloaded(code)]) {
      const out = lines(r.out)
      const client = out.find((l) => l.client)
      const server = out.find((l) => l.server !== undefined || l.error)
      expect(client).toMatchObject({ client: 202, body: 'accepted' })
      expect(server).toEqual({ server: 3 * 1024 * 1024, sha: client.sha, complete: true })
      expect(r.code).toBe(0)
    }
  })
})

describe('trailers', () => {
  test('a chunked request\'s trailers reach req.trailers/rawTrailers after \'end\'; res.addTrailers() reaches the client; a Trailer header without chunked framing throws ERR_HTTP_TRAILER_INVALID, as node\'s', async () => {
    const code = `
      const http = require('http')
      const s = http.createServer((req, res) => {
        const before = req.rawTrailers.length
        req.resume()
        req.on('end', () => {
          let invalid = null
          res.setHeader('Trailer', 'X-Sum')
          try { res.writeHead(200, { 'Content-Length': '2' }) } catch (e) { invalid = e.code }
          res.removeHeader('Content-Length')
          res.writeHead(200)
          res.write('ok')
          res.addTrailers({ 'X-Sum': '42' })
          res.end(JSON.stringify({ before, trailers: req.trailers, raw: req.rawTrailers, invalid }))
        })
      })
      s.listen(0, () => {
        const r = http.request({ port: s.address().port, method: 'POST', agent: false, headers: { Trailer: 'X-Q' } }, (res) => {
          let b = ''
          res.on('data', (d) => { b += d })
          res.on('end', () => { console.log(b.slice(2)); console.log(JSON.stringify(res.trailers)); s.close() })
        })
        r.write('abc')
        r.addTrailers([['X-Q', 'q1'], ['x-q', 'q2']])
        r.end()
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    const expected = [
      { before: 0, trailers: { 'x-q': 'q1, q2' }, raw: ['X-Q', 'q1', 'x-q', 'q2'], invalid: 'ERR_HTTP_TRAILER_INVALID' },
      { 'x-sum': '42' }
    ]
    expect(lines(node.out)).toEqual(expected)
    expect(ours.err).toBe('')
    expect(lines(ours.out)).toEqual(expected)
  })
})

describe('an upgraded socket', () => {
  test('the app answers 101 and ends it without reading: the client\'s FIN still ends it, it closes, and server.close() calls back, as node\'s', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const ev = []
      const s = http.createServer()
      s.on('upgrade', (req, socket) => {
        socket.on('end', () => ev.push('end'))
        socket.on('close', () => { ev.push('close'); s.close(() => { ev.push('server closed'); console.log(JSON.stringify(ev)) }) })
        socket.end('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: x\\r\\n\\r\\nbye')
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port)
        let got = ''
        c.on('data', (d) => { got += d })
        c.on('end', () => ev.push('client got ' + got.split('\\r\\n\\r\\n')[1]))
        c.write('GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: Upgrade\\r\\nUpgrade: x\\r\\n\\r\\n')
      })
    `
    const node = await runPreloaded(code, { preload: false, timeoutMs: 5000 })
    const ours = await runPreloaded(code, { timeoutMs: 5000 })
    expect(lines(node.out)[0]).toEqual(['client got bye', 'end', 'close', 'server closed'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
    expect(ours.code).toBe(0)
  })
})

describe('diagnostics_channel', () => {
  test('http.server.request.start and http.server.response.finish are published as node publishes them (APM tools)', async () => {
    const code = `
      const http = require('http')
      const dc = require('diagnostics_channel')
      const seen = []
      const kinds = ({ request, response, socket, server }) => [request instanceof http.IncomingMessage, response instanceof http.OutgoingMessage, typeof socket.remoteAddress, server instanceof http.Server]
      dc.subscribe('http.server.request.start', (m) => seen.push(['start', m.request.url, ...kinds(m)]))
      dc.subscribe('http.server.response.finish', (m) => seen.push(['finish', m.response.statusCode, ...kinds(m)]))
      const s = http.createServer((req, res) => { seen.push(['request']); res.statusCode = 201; res.end('x') })
      s.listen(0, () => http.get({ port: s.address().port, path: '/dc', agent: false }, (r) => { r.resume(); r.on('end', () => { console.log(JSON.stringify(seen)); s.close() }) }))
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual([['start', '/dc', true, true, 'string', true], ['request'], ['finish', 201, true, true, 'string', true]])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })
})

describe('a request the server\'s own port cannot parse (standalone)', () => {
  const code = (listener) => `
    const http = require('http')
    const net = require('net')
    const s = http.createServer({ headersTimeout: 500, requestTimeout: 500, connectionsCheckingInterval: 100 }, (req, res) => res.end('ok'))
    const seen = []
    if (${listener}) {
      s.on('clientError', (err, socket) => {
        seen.push([err.code, err.message.slice(0, 12), socket instanceof net.Socket])
        socket.end('HTTP/1.1 418 Teapot\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nno')
      })
    }
    const send = (raw) => new Promise((resolve) => {
      const c = net.connect(s.address().port, '127.0.0.1', () => c.write(raw))
      let b = ''
      c.on('data', (d) => { b += d })
      c.on('close', () => resolve(b))
      c.on('error', () => resolve(b + '[reset]'))
    })
    s.listen(0, async () => {
      const out = []
      out.push(await send('GET / HTTP/1.1\\r\\nHost: a\\r\\nBad Header\\r\\n\\r\\n'))
      out.push(await send('FOO / HTTP/1.1\\r\\nHost: a\\r\\n\\r\\n'))
      out.push(await send('GET / HTTP/1.1\\r\\nHost: a\\r\\nContent-Length: 1\\r\\nContent-Length: 2\\r\\n\\r\\n'))
      out.push(await send('GET / HTTP/1.1\\r\\nHost: a\\r\\n'))
      console.log(JSON.stringify({ out, seen }))
      s.close()
    })
  `

  test('without a \'clientError\' listener: node\'s own 400 (408 for a head that stalls) and the connection closed', async () => {
    const node = await runPreloaded(code(false), { preload: false })
    const ours = await runPreloaded(code(false))
    const bad = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'
    expect(lines(node.out)[0]).toEqual({ out: [bad, bad, bad, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'], seen: [] })
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })

  test('\'clientError\' gets node\'s error code and the connection\'s socket, and what it writes reaches the client (fastify\'s JSON 400 and 408)', async () => {
    const node = await runPreloaded(code(true), { preload: false })
    const ours = await runPreloaded(code(true))
    const teapot = 'HTTP/1.1 418 Teapot\r\nContent-Length: 2\r\nConnection: close\r\n\r\nno'
    expect(lines(node.out)[0]).toEqual({
      out: [teapot, teapot, teapot, teapot],
      seen: [['HPE_INVALID_HEADER_TOKEN', 'Parse Error:', true], ['HPE_INVALID_METHOD', 'Parse Error:', true], ['HPE_UNEXPECTED_CONTENT_LENGTH', 'Parse Error:', true], ['ERR_HTTP_REQUEST_TIMEOUT', 'Request time', true]]
    })
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })
})

describe('perf_hooks', () => {
  test('an observer of \'http\' gets an HttpRequest entry per response (request and response details, a duration); none once it disconnects, as node\'s', async () => {
    const code = `
      const http = require('http')
      const { PerformanceObserver } = require('perf_hooks')
      const got = []
      const obs = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          if (e.name !== 'HttpRequest') continue
          got.push([e.entryType, e.detail.req.method, e.detail.req.url, e.detail.req.headers['x-t'], e.detail.res.statusCode, e.detail.res.statusMessage, e.detail.res.headers['x-r'], e.duration >= 20])
        }
      })
      obs.observe({ entryTypes: ['http'] })
      const s = http.createServer((req, res) => {
        res.setHeader('x-r', 'r')
        setTimeout(() => { res.statusCode = 202; res.end('x') }, 25)
      })
      const get = (path) => new Promise((resolve) => http.get({ port: s.address().port, path, agent: false, headers: { 'x-t': 't' } }, (r) => { r.resume(); r.on('end', resolve) }))
      s.listen(0, async () => {
        await get('/one')
        await new Promise((resolve) => setTimeout(resolve, 50))
        obs.disconnect()
        await get('/two')
        await new Promise((resolve) => setTimeout(resolve, 50))
        console.log(JSON.stringify(got))
        s.close()
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual([['http', 'GET', '/one', 't', 202, 'Accepted', 'r', true]])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })
})

describe('the server\'s own options, standalone (the process\'s hub serves it alone)', () => {
  test('headersTimeout: a head that stalls gets node\'s 408 and the connection closes; \'connection\' comes at accept', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const ev = []
      const s = http.createServer({ headersTimeout: 1000, requestTimeout: 0, keepAliveTimeout: 0, connectionsCheckingInterval: 250 }, () => ev.push('request'))
      s.on('connection', () => ev.push('connection'))
      s.listen(0, () => {
        const c = net.connect(s.address().port)
        let got = ''
        c.setEncoding('utf8')
        c.on('data', (d) => { got += d })
        c.on('close', () => { ev.push(got); console.log(JSON.stringify(ev)); s.close() })
        c.write('GET / HTTP/1.1\\r\\nHost: x\\r\\n')
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual(['connection', 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })

  test('maxRequestsPerSocket: the last response says Connection: close and the connection stays, the next request gets 503, as node\'s (fastify\'s test)', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const s = http.createServer((req, res) => res.end('x'))
      s.maxRequestsPerSocket = 2
      const seen = []
      s.on('dropRequest', () => seen.push('dropRequest'))
      s.listen(0, () => {
        const c = net.connect(s.address().port)
        const got = []
        const send = () => c.write('GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')
        c.on('data', (d) => {
          got.push(String(d).replace(/Date: [^\\r]*\\r\\n/, ''))
          if (got.length < 3) send()
          else { c.end(); s.close() }
        })
        c.on('close', () => console.log(JSON.stringify({ got, seen })))
        c.on('connect', send)
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual({
      got: [
        'HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5, max=2\r\nContent-Length: 1\r\n\r\nx',
        'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx',
        'HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'
      ],
      seen: ['dropRequest']
    })
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })

  test('server timeout and keepAliveTimeout: a connection waiting between keep-alive requests is timed by keepAliveTimeout, not the server\'s timeout, and its expiry is the server\'s \'timeout\'; a request left unanswered times out with the server\'s timeout, as node\'s (fastify\'s onTimeout)', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const t0 = Date.now()
      const out = []
      const s = http.createServer((req, res) => {
        req.socket.name = req.url
        if (req.url !== '/hang') res.end('ok')
      })
      s.keepAliveTimeout = 600
      s.setTimeout(300, (socket) => {
        out.push([socket.name, Date.now() - t0 < 1000 ? 'early' : 'late'])
        socket.destroy()
        if (out.length === 2) { console.log(JSON.stringify(out)); s.close() }
      })
      s.listen(0, () => {
        const port = s.address().port
        const a = net.connect(port, () => a.write('GET /kept HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'))
        a.on('data', () => {})
        a.on('error', () => {})
        const b = net.connect(port, () => b.write('GET /hang HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'))
        b.on('error', () => {})
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual([['/hang', 'early'], ['/kept', 'late']])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
    expect(ours.code).toBe(0)
  })

  test('the server\'s timeout runs from accept: a connection that sends nothing gets the server\'s \'timeout\' with its socket, and destroy() closes it, as node\'s', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const t0 = Date.now()
      const out = []
      const s = http.createServer(() => out.push('request'))
      s.setTimeout(200, (socket) => {
        out.push(['timeout', socket instanceof net.Socket, Date.now() - t0 >= 150])
        socket.destroy()
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port)
        c.on('error', () => {})
        c.on('close', () => { out.push('client closed'); console.log(JSON.stringify(out)); s.close() })
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual([['timeout', true, true], 'client closed'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
    expect(ours.code).toBe(0)
  })

  test('the server\'s timeout says \'timeout\' again on a later request of the same connection (keepAliveTimeout 0), as node\'s', async () => {
    const code = `
      const http = require('http')
      const out = []
      const s = http.createServer((req, res) => {
        out.push('request ' + req.url + ' ' + typeof req.socket.remoteAddress)
        setTimeout(() => res.end('ok'), 500)
      })
      s.keepAliveTimeout = 0
      s.setTimeout(200, () => out.push('timeout'))
      s.listen(0, async () => {
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
        const get = (p) => new Promise((resolve) => http.get({ port: s.address().port, path: p, agent }, (res) => { res.resume(); res.on('end', () => resolve(res.req.reusedSocket)) }))
        out.push('reused ' + await get('/1'))
        out.push('reused ' + await get('/2'))
        agent.destroy()
        console.log(JSON.stringify(out))
        s.close()
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual(['request /1 string', 'timeout', 'reused false', 'request /2 string', 'timeout', 'reused true'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })

  test('a client that pipelines and never reads: the server\'s timeout still comes while the router holds the responses it cannot write, as node\'s (test-http-pipeline-flood)', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const body = Buffer.alloc(10240, 'x')
      let timeouts = 0
      const s = http.createServer((req, res) => {
        res.setHeader('Content-Length', body.length)
        res.end(body)
      })
      s.setTimeout(300, (socket) => {
        if (timeouts++ === 0) { console.log(JSON.stringify({ timeout: true })); socket.destroy(); s.close() }
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port)
        c.on('error', () => {})
        c.pause()
        c.write('GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'.repeat(4000))
      })
    `
    const node = await runPreloaded(code, { preload: false })
    // (node's destroy() drops the responses it could not write; so does the router,
    // which told the worker it holds them: CONN_HELD)
    const ours = await runPreloaded(code, { timeoutMs: 20000 })
    expect(lines(node.out)).toEqual([{ timeout: true }])
    expect(lines(ours.out)).toEqual(lines(node.out))
    expect(ours.code).toBe(0)
  })

  test('socket.destroy() after a large response\'s \'finish\', to a client still reading it: the client gets all of it, as from node', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const SIZE = 8 * 1024 * 1024
      const body = Buffer.alloc(SIZE, 97)
      const s = http.createServer((req, res) => {
        res.setHeader('Content-Length', SIZE)
        res.on('finish', () => setTimeout(() => req.socket.destroy(), 50))
        res.end(body)
      })
      s.listen(0, () => {
        const c = net.connect(s.address().port, () => c.write('GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n'))
        let n = 0
        c.pause()
        setTimeout(() => c.resume(), 600)
        c.on('data', (d) => { n += d.length })
        c.on('error', () => {})
        c.on('close', () => { console.log(JSON.stringify({ complete: n > SIZE })); s.close() })
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)).toEqual([{ complete: true }])
    expect(lines(ours.out)).toEqual(lines(node.out))
  })

  test('maxRequestsPerSocket counts a connection\'s requests across connectionsCheckingInterval ticks, as node\'s', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const s = http.createServer({ connectionsCheckingInterval: 100 }, (req, res) => res.end('x'))
      s.maxRequestsPerSocket = 1
      s.listen(0, () => {
        const c = net.connect(s.address().port)
        const got = []
        const send = () => c.write('GET / HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n')
        c.on('data', (d) => {
          got.push(String(d).split('\\r\\n')[0])
          if (got.length === 1) setTimeout(send, 400)
          else { c.end(); s.close() }
        })
        c.on('close', () => console.log(JSON.stringify(got)))
        c.on('connect', send)
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 503 Service Unavailable'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })

  test('an HTTP/1.1 request without Host: 400 and a closed connection, unless it asks to upgrade and the server listens for \'upgrade\' (node checks Host after)', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const raw = (port, text) => new Promise((resolve) => {
        const c = net.connect(port)
        let got = ''
        c.on('data', (d) => { got += d })
        c.on('close', () => resolve(got.split('\\r\\n')[0]))
        c.write(text)
      })
      const ev = []
      const s = http.createServer((req, res) => { ev.push('request'); res.end('ok') })
      s.on('upgrade', (req, socket) => {
        ev.push('upgrade ' + req.url + ' ' + (req.headers.host === undefined))
        socket.end('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: x\\r\\n\\r\\n')
      })
      s.listen(0, async () => {
        const port = s.address().port
        ev.push(await raw(port, 'GET /plain HTTP/1.1\\r\\n\\r\\n'))
        ev.push(await raw(port, 'GET /up HTTP/1.1\\r\\nConnection: Upgrade\\r\\nUpgrade: x\\r\\n\\r\\n'))
        ev.push(await raw(port, 'GET /old HTTP/1.0\\r\\n\\r\\n'))
        console.log(JSON.stringify(ev))
        s.close()
      })
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual(['HTTP/1.1 400 Bad Request', 'upgrade /up true', 'HTTP/1.1 101 Switching Protocols', 'request', 'HTTP/1.1 200 OK'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })

  test('requireHostHeader: false serves an HTTP/1.1 request without Host; maxHeaderSize below the default answers 431', async () => {
    const code = `
      const http = require('http')
      const net = require('net')
      const raw = (port, text) => new Promise((resolve) => {
        const c = net.connect(port)
        let got = ''
        c.on('data', (d) => { got += d; if (/\\r\\n\\r\\n/.test(got)) c.end() })
        c.on('close', () => resolve(got.split('\\r\\n')[0]))
        c.write(text)
      })
      const a = http.createServer({ requireHostHeader: false }, (req, res) => res.end('ok'))
      const b = http.createServer({ maxHeaderSize: 1024 }, (req, res) => res.end('ok'))
      a.listen(0, () => b.listen(0, async () => {
        const out = [
          await raw(a.address().port, 'GET / HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n'),
          await raw(b.address().port, 'GET / HTTP/1.1\\r\\nHost: x\\r\\nX-Big: ' + 'a'.repeat(2000) + '\\r\\nConnection: close\\r\\n\\r\\n'),
          await raw(b.address().port, 'GET / HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')
        ]
        console.log(JSON.stringify(out))
        a.close()
        b.close()
      }))
    `
    const node = await runPreloaded(code, { preload: false })
    const ours = await runPreloaded(code)
    expect(lines(node.out)[0]).toEqual(['HTTP/1.1 200 OK', 'HTTP/1.1 431 Request Header Fields Too Large', 'HTTP/1.1 200 OK'])
    expect(lines(ours.out)[0]).toEqual(lines(node.out)[0])
  })
})
