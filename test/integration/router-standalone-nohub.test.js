'use strict'

// Issue 25 ended with src/hub deleted: each case here was served by a JS hub in the
// process until the native router took it; each app prints what it saw, then whether
// anything of src/hub was loaded (never: it is gone).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { runPreloaded } = require('../helpers/run-preloaded')
const { routerBin } = require('../helpers/native-router')
const { makeCerts } = require('../helpers/tls-certs')

// the native router is the default: HTTPSYS_ROUTER unset
const ROUTERS = [
  ['native router', () => ({ HTTPSYS_ROUTER: undefined, HTTPSYS_ROUTER_PATH: routerBin() })]
]

let certs
beforeAll(() => { certs = makeCerts() })
afterAll(() => certs.cleanup())

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-nh-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const HUB_LOADED = 'Object.keys(require.cache).some((k) => /[\\\\/]src[\\\\/]hub[\\\\/]/.test(k))'

// (a file: cluster.fork() runs the script again)
const run = (source, env, timeoutMs = 15000) =>
  runPreloaded(source, { file: path.join(dir, 'httpsys-app.js'), env: { TMPDIR: dir, ...env }, timeoutMs })

describe.each(ROUTERS)('the cases the JS hub served, on the native router with no src/hub (%s)', (name, envOf) => {
  test('a worker given a router (HTTPSYS_HUB) serves the streams handed to its server (a socket it accepted, a duplex stream) on a router of its own, and exits once they are done', async () => {
    const r = await run(`
      const http = require('http')
      const net = require('net')
      const { duplexPair } = require('stream')
      const out = []
      const s = http.createServer((req, res) => res.end('via ' + req.url))
      const front = net.createServer((socket) => s.emit('connection', socket))
      front.listen(0, '127.0.0.1', () => {
        http.get({ port: front.address().port, host: '127.0.0.1', path: '/handed', agent: false }, (res) => {
          let b = ''
          res.on('data', (d) => { b += d })
          res.on('end', () => {
            out.push(res.statusCode + ' ' + b)
            front.close()
            const [client, server] = duplexPair()
            s.emit('connection', server)
            http.get({ createConnection: () => client, path: '/duplex' }, (res) => {
              let b = ''
              res.on('data', (d) => { b += d })
              res.on('end', () => {
                out.push(res.statusCode + ' ' + b)
                console.log(JSON.stringify(out))
                console.log(JSON.stringify(${HUB_LOADED}))
              })
            })
          })
        })
      })
    `, { ...envOf(), HTTPSYS_HUB: path.join(dir, 'supervisor-router.sock'), HTTPSYS_QUEUE: 'app' })
    expect(r.err).toBe('')
    expect(r.lines).toEqual([['200 via /handed', '200 via /duplex'], false])
    expect(r.code).toBe(0)
  })
  test('listen(path) with a name too long to bind through the private folder: address() is the path, requests are served, a taken name is EADDRINUSE, close() removes the file', async () => {
    // fits a socket address (107 bytes) as the app gives it, not under the private folder
    const long = 'l'.repeat(100 - dir.length - 6)
    const sock = path.join(dir, long + '.sock')
    const taken = path.join(dir, long.slice(1) + '.sock')
    fs.writeFileSync(taken, '')
    const r = await run(`
      const http = require('http')
      const fs = require('fs')
      const p = ${JSON.stringify(sock)}
      const out = []
      const s = http.createServer((req, res) => res.end('path ' + req.url))
      s.listen(p)
      out.push(s.address() === p, fs.statSync(p).isSocket(), fs.readdirSync(${JSON.stringify(dir)}).filter((f) => !f.startsWith('httpsys-')).length)
      const t = http.createServer()
      t.on('error', (e) => {
        out.push([e.code, e.httpsysCode, e.cause && e.cause.message === 'listen EADDRINUSE: address already in use ' + ${JSON.stringify(taken)}, e.cause && e.cause.address === ${JSON.stringify(taken)}])
        http.get({ socketPath: p, path: '/x', agent: false }, (res) => {
          let b = ''
          res.on('data', (d) => { b += d })
          res.on('end', () => {
            out.push(res.statusCode + ' ' + b)
            s.close(() => {
              out.push(fs.existsSync(p), fs.readdirSync(${JSON.stringify(dir)}).filter((f) => !f.startsWith('httpsys-')).length)
              console.log(JSON.stringify(out))
              console.log(JSON.stringify(${HUB_LOADED}))
            })
          })
        })
      })
      t.listen(${JSON.stringify(taken)})
    `, envOf())
    expect(Buffer.byteLength(sock)).toBeLessThanOrEqual(107)
    expect(r.err).toBe('')
    expect(r.lines).toEqual([[true, true, 2, ['EADDRINUSE', 'ERR_HTTPSYS_PORT_IN_USE', true, true], '200 path /x', false, 1], false])
    expect(r.code).toBe(0)
  })
  test('listen(path) where even a short name does not fit under the private folder (a long TMPDIR): bound in the path\'s own folder, served, close() removes the file and nothing else is left', async () => {
    // the router's own socket still fits in TMPDIR; the private folder's names do not
    const tmp = path.join(dir, 't'.repeat(70 - dir.length - 1))
    fs.mkdirSync(tmp)
    const sock = path.join(dir, 'app-socket-file.sock')
    const r = await run(`
      const http = require('http')
      const fs = require('fs')
      const p = ${JSON.stringify(sock)}
      const out = []
      const s = http.createServer((req, res) => res.end('path ' + req.url))
      s.listen(p)
      out.push(s.address() === p, fs.statSync(p).isSocket())
      http.get({ socketPath: p, path: '/y', agent: false }, (res) => {
        let b = ''
        res.on('data', (d) => { b += d })
        res.on('end', () => {
          out.push(res.statusCode + ' ' + b)
          s.close(() => {
            out.push(fs.readdirSync(${JSON.stringify(dir)}).filter((f) => !f.startsWith('httpsys-') && !f.startsWith('ttt')))
            console.log(JSON.stringify(out))
            console.log(JSON.stringify(${HUB_LOADED}))
          })
        })
      })
    `, { ...envOf(), TMPDIR: tmp })
    expect(r.err).toBe('')
    expect(r.lines).toEqual([[true, true, '200 path /y', []], false])
    expect(r.code).toBe(0)
  })

  test('https listen(prefix): https servers share a port by path, each prefix served with its server\'s certificate (by SNI for a host of its own), a path none registered is 404, a closed one too', async () => {
    const r = await run(`
      const https = require('https')
      const fs = require('fs')
      const own = (c) => ({ key: fs.readFileSync(c.key), cert: fs.readFileSync(c.cert) })
      const out = []
      const handle = (n) => (req, res) => res.end(n + ' ' + req.url + ' ' + req.socket.encrypted)
      const a = https.createServer(own(${JSON.stringify(certs.localhost)}), handle('a'))
      const b = https.createServer(own(${JSON.stringify(certs.localhost)}), handle('b'))
      const c = https.createServer(own(${JSON.stringify(certs.a)}), handle('c'))
      a.listen('https://+:0/a/')
      const port = a.address().port
      b.listen('https://+:' + port + '/b/')
      c.listen('https://a.localhost:' + port + '/c/')
      const get = (p, servername) => new Promise((resolve) => {
        const req = https.get({ port, path: p, host: '127.0.0.1', servername, headers: { host: servername }, rejectUnauthorized: false, agent: false }, (res) => {
          let t = ''
          const cn = res.socket.getPeerCertificate().subject.CN
          res.on('data', (d) => { t += d })
          res.on('end', () => resolve(res.statusCode + ' ' + cn + ' ' + (res.statusCode === 200 ? t : '')))
        })
        req.on('error', (e) => resolve('error ' + e.code))
      })
      ;(async () => {
        out.push(await get('/a/x', 'localhost'), await get('/b/y', 'localhost'), await get('/c/z', 'a.localhost'), await get('/d', 'localhost'))
        await new Promise((resolve) => a.close(resolve))
        out.push(await get('/a/x', 'localhost'), await get('/b/w', 'localhost'))
        b.close()
        c.close()
        console.log(JSON.stringify(out))
        console.log(JSON.stringify(${HUB_LOADED}))
      })()
    `, envOf())
    expect(r.err).toBe('')
    expect(r.lines).toEqual([[
      '200 localhost a /a/x true', '200 localhost b /b/y true', '200 a.localhost c /c/z true', '404 localhost ',
      '404 localhost ', '200 localhost b /b/w true'
    ], false])
    expect(r.code).toBe(0)
  })

  test('https listen(path): served as the hub serves it (plain HTTP on the socket, req.socket.encrypted false), close() removes the file', async () => {
    const sock = path.join(dir, 'tls.sock')
    const r = await run(`
      const https = require('https')
      const net = require('net')
      const fs = require('fs')
      const p = ${JSON.stringify(sock)}
      const s = https.createServer({ key: fs.readFileSync(${JSON.stringify(certs.localhost.key)}), cert: fs.readFileSync(${JSON.stringify(certs.localhost.cert)}) }, (req, res) => res.end(req.url + ' ' + Boolean(req.socket.encrypted)))
      s.listen(p)
      const out = [s.address() === p]
      const c = net.connect(p, () => c.write('GET /p HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n'))
      let got = ''
      c.on('data', (d) => { got += d })
      c.on('close', () => {
        out.push(got.split('\\r\\n')[0], got.split('\\r\\n\\r\\n')[1])
        s.close(() => {
          out.push(fs.existsSync(p))
          console.log(JSON.stringify(out))
          console.log(JSON.stringify(${HUB_LOADED}))
        })
      })
    `, envOf())
    expect(r.err).toBe('')
    expect(r.lines).toEqual([[true, 'HTTP/1.1 200 OK', '/p false', false], false])
    expect(r.code).toBe(0)
  })
  test('cluster workers listen() on one port (http and https) as node\'s do: the primary accepts, each worker serves what it is given, with the port\'s address and the server\'s certificate', async () => {
    const r = await run(`
      const cluster = require('cluster')
      const http = require('http')
      const https = require('https')
      const fs = require('fs')
      if (cluster.isPrimary) {
        const net = require('net')
        const free = () => new Promise((resolve) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)) }) })
        ;(async () => {
          const ports = [await free(), await free()]
          const workers = [cluster.fork({ PORTS: ports.join(',') }), cluster.fork({ PORTS: ports.join(',') })]
          const loaded = []
          let up = 0
          for (const w of workers) w.on('message', (m) => {
            if (m.loaded !== undefined) { loaded.push(m.loaded); if (loaded.length === 2) { console.log(JSON.stringify(loaded)); for (const w of workers) w.kill() } return }
            if (++up < 4) return
            const get = (mod, port, path) => new Promise((resolve) => mod.get({ port, path, host: '127.0.0.1', agent: false, rejectUnauthorized: false, servername: 'localhost' }, (res) => {
              let b = ''
              const cn = res.socket.getPeerCertificate ? res.socket.getPeerCertificate().subject.CN : 'plain'
              res.on('data', (d) => { b += d })
              res.on('end', () => resolve(res.statusCode + ' ' + cn + ' ' + b.replace(/^w\\d+ /, '')))
            }).on('error', (e) => resolve('error ' + e.code)))
            ;(async () => {
              const out = []
              for (let i = 0; i < 3; i++) out.push(await get(http, ports[0], '/h' + i), await get(https, ports[1], '/s' + i))
              console.log(JSON.stringify(out.map((l) => l.replace(String(ports[0]), 'P').replace(String(ports[1]), 'Q'))))
              for (const w of workers) w.send('done')
            })()
          })
        })()
      } else {
        const [p, q] = process.env.PORTS.split(',').map(Number)
        const handle = (req, res) => res.end('w' + process.pid + ' ' + req.url + ' ' + req.socket.localPort + ' ' + Boolean(req.socket.encrypted))
        http.createServer(handle).listen(p, () => process.send('up'))
        https.createServer({ key: fs.readFileSync(${JSON.stringify(certs.localhost.key)}), cert: fs.readFileSync(${JSON.stringify(certs.localhost.cert)}) }, handle).listen(q, () => process.send('up'))
        process.on('message', () => process.send({ loaded: ${HUB_LOADED} }))
      }
    `, envOf(), 20000)
    expect(r.err).toBe('')
    expect(r.lines).toEqual([
      ['200 plain /h0 P false', '200 localhost /s0 Q true', '200 plain /h1 P false', '200 localhost /s1 Q true', '200 plain /h2 P false', '200 localhost /s2 Q true'],
      [false, false]
    ])
    expect(r.code).toBe(0)
  })
  test('cluster workers listen(path) and listen(prefix) as node\'s do: the primary listens, each worker serves what it is given; the path is gone once the workers closed', async () => {
    const sock = path.join(dir, 'cluster.sock')
    const r = await run(`
      const cluster = require('cluster')
      const http = require('http')
      const fs = require('fs')
      const sock = ${JSON.stringify(sock)}
      if (cluster.isPrimary) {
        const net = require('net')
        const s = net.createServer().listen(0, '127.0.0.1', () => {
          const port = s.address().port
          s.close(() => {
            const workers = [cluster.fork({ PORT: port }), cluster.fork({ PORT: port })]
            const addresses = []
            const loaded = []
            let up = 0
            let closed = 0
            for (const w of workers) w.on('message', (m) => {
              if (m.closed !== undefined) {
                loaded.push(m.closed)
                if (++closed === 2) {
                  setTimeout(() => {
                    console.log(JSON.stringify([fs.existsSync(sock), ...loaded]))
                    for (const w of workers) w.kill()
                  }, 200)
                }
                return
              }
              addresses.push(m.address)
              if (++up < 2) return
              const get = (opts) => new Promise((resolve) => http.get({ agent: false, ...opts }, (res) => {
                let b = ''
                res.on('data', (d) => { b += d })
                res.on('end', () => resolve(res.statusCode + ' ' + (res.statusCode === 200 ? b.replace(/^w\\d+ /, '') : '')))
              }).on('error', (e) => resolve('error ' + e.code)))
              ;(async () => {
                const out = []
                for (let i = 0; i < 2; i++) out.push(await get({ socketPath: sock, path: '/p' + i }), await get({ port, host: '127.0.0.1', path: '/api/x' + i }), await get({ port, host: '127.0.0.1', path: '/other' }))
                console.log(JSON.stringify(out))
                console.log(JSON.stringify(addresses.map((a) => a.path === sock ? 'the path' : a.path)))
                for (const w of workers) w.send('close')
              })()
            })
          })
        })
      } else {
        const handle = (req, res) => res.end('w' + process.pid + ' ' + req.url)
        const a = http.createServer(handle)
        const b = http.createServer(handle)
        let n = 0
        const up = () => { if (++n === 2) process.send({ address: { path: a.address(), port: b.address().port === Number(process.env.PORT) } }) }
        a.listen(sock, up)
        b.listen('http://+:' + process.env.PORT + '/api/', up)
        process.on('message', () => {
          let left = 2
          const done = () => { if (--left === 0) process.send({ closed: ${HUB_LOADED} }) }
          a.close(done)
          b.close(done)
        })
      }
    `, envOf(), 20000)
    expect(r.err).toBe('')
    expect(r.lines).toEqual([
      ['200 /p0', '200 /api/x0', '404 ', '200 /p1', '200 /api/x1', '404 '],
      // (node's address() is the path; the JS hub's was null in a cluster worker)
      ['the path', 'the path'],
      [false, false, false]
    ])
    expect(r.code).toBe(0)
  })
})
