'use strict'

// A standalone app's servers that do not own a TCP port, on the native router (issue 25
// "Standalone"): listen(path), listen(prefix) (servers of one process sharing a port by
// URL) and the streams handed to a server (server.emit('connection', socket)), both
// ways the router gets them: node binds and hands the socket over
// (src/preload/standalone-paths.js, standalone-prefixes.js), or the router binds, as on
// Windows (standalone-native-win-paths.js). Each app prints what it saw, then whether
// anything of the removed src/hub was loaded (never); both ways must print the same.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')
const { routerBin } = require('../helpers/native-router')
const { runPreloaded } = require('../helpers/run-preloaded')

const ROUTERS = [
  ['native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })],
  // the path Windows runs (standalone-native-win.js): the router binds, nothing is handed over
  ['native router binding itself', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin(), HTTPSYS_STANDALONE_BIND: 'router' })]
]

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-sp-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

// what the app prints last: whether anything of the removed src/hub was loaded
const HUB_LOADED = 'Object.keys(require.cache).some((k) => /[\\\\/]src[\\\\/]hub[\\\\/]hub\\.js$/.test(k))'

/** Runs an app through the preload; its stdout lines as JSON, its exit code, its stderr. */
const run = (source, env, timeoutMs = 15000) => runPreloaded(source, { env: { TMPDIR: dir, ...env }, timeoutMs })

describe.each(ROUTERS)('standalone servers without a port of their own (%s)', (name, envOf) => {
  test('listen(path): address() is the path, keep-alive requests are served, getConnections() counts, close() removes the file', async () => {
    const sock = path.join(dir, 'app.sock')
    const r = await run(`
      const http = require('http')
      const fs = require('fs')
      const p = ${JSON.stringify(sock)}
      const s = http.createServer((req, res) => res.end(req.url + ' ' + req.socket.remoteAddress + ' ' + req.socket.localPort))
      s.listen(p)
      const out = { address: s.address(), listening: s.listening, file: fs.statSync(p).isSocket() }
      const agent = new http.Agent({ keepAlive: true })
      const get = (path, cb) => http.get({ socketPath: p, path, agent }, (r) => { let b = ''; r.on('data', (d) => { b += d }); r.on('end', () => cb(b)) })
      get('/a', (a) => get('/b', (b) => {
        out.bodies = [a, b]
        s.getConnections((err, n) => {
          out.connections = n
          agent.destroy()
          s.close(() => {
            out.fileLeft = fs.existsSync(p)
            console.log(JSON.stringify(out))
            console.log(JSON.stringify(${HUB_LOADED}))
          })
        })
      }))
    `, envOf())
    expect(r.err).toBe('')
    // (the agent's second request may open a second connection before the first is free)
    expect(r.lines).toEqual([{ address: sock, listening: true, file: true, bodies: ['/a  0', '/b  0'], connections: expect.any(Number), fileLeft: false }, false])
    expect(r.lines[0].connections).toBeGreaterThanOrEqual(1)
    expect(r.code).toBe(0)
  })

  test('listen(path): a path in use is the server\'s \'error\' (ERR_HTTPSYS_PORT_IN_USE naming the path), a path of another server of the process ERR_HTTPSYS_URL_CONFLICT; a process that exits without close() leaves its file, as node\'s', async () => {
    const taken = path.join(dir, 'taken.sock')
    fs.writeFileSync(taken, '')
    const sock = path.join(dir, 'left.sock')
    const r = await run(`
      const http = require('http')
      const out = []
      const a = http.createServer()
      a.on('error', (e) => {
        out.push([e.code, e.httpsysCode, e.message.includes(${JSON.stringify(taken)}), e.cause && e.cause.message, e.cause && e.cause.address])
        const b = http.createServer((req, res) => res.end('b'))
        b.listen(${JSON.stringify(sock)}, () => {
          const c = http.createServer()
          c.on('error', (e) => {
            out.push([e.httpsysCode, e.message.replace(/~\\d+\\./, '~pid.')])
            http.get({ socketPath: ${JSON.stringify(sock)}, path: '/' }, (res) => {
              res.resume()
              res.on('end', () => {
                console.log(JSON.stringify(out))
                console.log(JSON.stringify(${HUB_LOADED}))
                process.exit(0)
              })
            })
          })
          c.listen(${JSON.stringify(sock)})
        })
      })
      a.listen(${JSON.stringify(taken)})
    `, envOf())
    expect(r.lines).toEqual([[
      ['EADDRINUSE', 'ERR_HTTPSYS_PORT_IN_USE', true, `listen EADDRINUSE: address already in use ${taken}`, taken],
      ['ERR_HTTPSYS_URL_CONFLICT', `The URL prefix ${sock} is already registered by another server of this process. Stop the other owner or choose another prefix (another path, or another port).`]
    ], false])
    expect(r.code).toBe(0)
    expect(fs.statSync(sock).isSocket()).toBe(true)
  })

  test('listen(prefix): servers of one process share a port by path, a path none registered is 404, a prefix taken is ERR_HTTPSYS_URL_CONFLICT, and the port is free once the last one closed', async () => {
    const r = await run(`
      const http = require('http')
      const out = []
      const a = http.createServer((req, res) => res.end('a ' + req.url))
      const b = http.createServer((req, res) => res.end('b ' + req.url))
      a.listen('http://+:0/a/')
      const port = a.address().port
      b.listen('http://+:' + port + '/b/')
      const c = http.createServer()
      c.on('error', (e) => out.push(['c', e.httpsysCode, e.message.replace(/~\\d+\\./, '~pid.').replace(String(port), 'PORT')]))
      c.listen('http://+:' + port + '/a/')
      const get = (p) => new Promise((resolve) => http.get({ port, path: p, agent: false, host: '127.0.0.1' }, (r) => { let t = ''; r.on('data', (d) => { t += d }); r.on('end', () => resolve(r.statusCode + ' ' + (r.statusCode === 200 ? t : ''))) }))
      ;(async () => {
        out.push([a.address().port === port, b.address().port === port])
        out.push(await get('/a/x'), await get('/b/y'), await get('/c'))
        await new Promise((resolve) => a.close(resolve))
        out.push(await get('/a/x'), await get('/b/z'))
        await new Promise((resolve) => b.close(resolve))
        const d = http.createServer((req, res) => res.end('d'))
        d.listen(port, () => get('/').then((t) => {
          out.push(t)
          d.close()
          console.log(JSON.stringify(out))
          console.log(JSON.stringify(${HUB_LOADED}))
        }))
      })()
    `, envOf())
    expect(r.err).toBe('')
    expect(r.lines).toEqual([[
      [true, true],
      ['c', 'ERR_HTTPSYS_URL_CONFLICT', 'The URL prefix http://+:PORT/a/ is already registered by ~pid.listen1. Stop the other owner or choose another prefix (another path, or another port).'],
      '200 a /a/x', '200 b /b/y', '404 ', '404 ', '200 b /b/z', '200 d'
    ], false])
    expect(r.code).toBe(0)
  })

  test('server.emit(\'connection\'): a socket the app accepted and a duplex stream are served; the accepting server counts the socket until it closes, then the socket says \'close\'; the process exits once they are done, as node\'s', async () => {
    const r = await run(`
      const http = require('http')
      const net = require('net')
      const { duplexPair } = require('stream')
      const out = []
      const s = http.createServer((req, res) => res.end('via ' + req.url))
      const front = net.createServer((socket) => {
        socket.on('close', () => out.push('socket close'))
        s.emit('connection', socket)
      })
      front.listen(0, '127.0.0.1', () => {
        const agent = new http.Agent({ keepAlive: true })
        http.get({ port: front.address().port, host: '127.0.0.1', path: '/handed', agent }, (res) => {
          let b = ''
          res.on('data', (d) => { b += d })
          res.on('end', () => {
            out.push(res.statusCode + ' ' + b)
            front.getConnections((err, n) => {
              out.push('connections ' + n)
              front.close(() => {
                out.push('front closed')
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
              setTimeout(() => { out.push('agent destroyed'); agent.destroy() }, 200)
            })
          })
        })
      })
    `, envOf())
    expect(r.err).toBe('')
    expect(r.lines).toEqual([['200 via /handed', 'connections 1', 'agent destroyed', 'front closed', 'socket close', '200 via /duplex'], false])
    expect(r.code).toBe(0)
  })

  test('server.emit(\'connection\') of a duplex stream whose request the parser refuses: the app\'s \'clientError\' listener gets it, and the process exits with nothing else to do, as node\'s (test-http-insecure-parser-per-stream)', async () => {
    const r = await run(`
      const http = require('http')
      const { duplexPair } = require('stream')
      const s = http.createServer(() => console.log(JSON.stringify('request')))
      s.on('clientError', (err) => console.log(JSON.stringify('clientError ' + err.code)))
      const [client, server] = duplexPair()
      s.emit('connection', server)
      client.write('GET / HTTP/1.1\\r\\nHost: example.com\\r\\nHello: foo\\x08foo\\r\\n\\r\\n')
      process.on('exit', () => console.log(JSON.stringify(${HUB_LOADED})))
    `, envOf(), 8000)
    expect(r.err).toBe('')
    expect(r.signal).toBe(null)
    expect(r.lines).toEqual(['clientError HPE_INVALID_HEADER_TOKEN', false])
    expect(r.code).toBe(0)
  })

  test('server.emit(\'connection\') of a duplex stream: a `Connection: close` answer ends the stream, and its peer hears the \'end\' before the process exits, as on node (test-http-generic-streams); a keep-alive stream beside it holds nothing, nor does one the parser refused', async () => {
    const r = await run(`
      const http = require('http')
      const { duplexPair } = require('stream')
      const seen = []
      const server = http.createServer((req, res) => {
        req.resume()
        req.on('end', () => {
          res.setHeader('Content-Length', 2)
          res.end('ok')
        })
      })
      // one the parser refuses, answered by the router (its pipes let go: piped())
      server.on('clientError', () => seen.push('clientError'))
      const [badClient, badServer] = duplexPair()
      server.emit('connection', badServer)
      badClient.end('not HTTP\\r\\n\\r\\n')
      // one kept alive: node exits with it open
      const [keptClient, keptServer] = duplexPair()
      server.emit('connection', keptServer)
      http.request({ createConnection: () => keptClient, headers: { Connection: 'keep-alive' } }, (res) => {
        res.resume()
        res.on('end', () => seen.push('kept answered'))
      }).end()
      for (let i = 0; i < 3; i++) {
        const [clientSide, serverSide] = duplexPair()
        server.emit('connection', serverSide)
        clientSide.on('end', () => seen.push(i + ' client end'))
        serverSide.on('end', () => seen.push(i + ' server end'))
        const req = http.request({ createConnection: () => clientSide, method: 'PUT', headers: { Connection: 'close', 'Content-Length': 5 } }, (res) => {
          res.resume()
          res.on('end', () => seen.push(i + ' answered'))
        })
        req.end('hello')
      }
      process.on('exit', () => console.log(JSON.stringify(seen.sort())))
    `, envOf(), 8000)
    expect(r.err).toBe('')
    expect(r.signal).toBe(null)
    expect(r.lines).toEqual([[0, 1, 2].flatMap((i) => [i + ' answered', i + ' client end', i + ' server end']).concat('clientError', 'kept answered')])
    expect(r.code).toBe(0)
    // (the router's linger of a connection the client never ends is 5 s and more)
    expect(r.ms).toBeLessThan(4000)
  })

  test('server.emit(\'connection\') of keep-alive duplex streams, one answered while another waits: the process exits once both are answered, as node\'s (the router\'s keep-alive timeout does not hold it)', async () => {
    const r = await run(`
      const http = require('http')
      const { duplexPair } = require('stream')
      const seen = []
      const server = http.createServer((req, res) => setTimeout(() => res.end('ok'), req.url === '/slow' ? 300 : 0))
      for (const p of ['/fast', '/slow']) {
        const [clientSide, serverSide] = duplexPair()
        server.emit('connection', serverSide)
        http.request({ createConnection: () => clientSide, path: p, headers: { Connection: 'keep-alive' } }, (res) => {
          res.resume()
          res.on('end', () => seen.push(p))
        }).end()
      }
      process.on('exit', () => console.log(JSON.stringify(seen)))
    `, envOf(), 15000)
    expect(r.err).toBe('')
    expect(r.lines).toEqual([['/fast', '/slow']])
    expect(r.code).toBe(0)
    expect(r.ms).toBeLessThan(3000)
  })
})

test('native router: the private folder a killed app bound its paths through is removed by the next app, a live one\'s is kept', async () => {
  const { waitUntil } = require('../fixtures/apps/harness')
  const env = { ...ROUTERS[0][1](), TMPDIR: dir }
  const start = (sock) => {
    const child = spawn(process.execPath, ['-r', REGISTER, '-e', `
      require('http').createServer((q, s) => s.end('ok')).listen(${JSON.stringify(sock)}, () => console.log('up'))
    `], { env: standaloneEnv(env), stdio: ['ignore', 'pipe', 'inherit'] })
    return new Promise((resolve, reject) => {
      child.stdout.once('data', () => resolve(child))
      child.once('exit', (code) => reject(new Error(`the app exited ${code}`)))
    })
  }
  const folders = () => fs.readdirSync(dir).filter((f) => f.startsWith('httpsys-bind-')).sort()
  const stop = (child) => new Promise((resolve) => { child.once('exit', resolve); child.kill('SIGKILL') })
  const killed = await start(path.join(dir, 'one.sock'))
  const left = folders()
  expect(left).toEqual([expect.stringMatching(new RegExp(`^httpsys-bind-${killed.pid}-`))])
  await stop(killed)
  expect(folders()).toEqual(left) // SIGKILL: nothing could remove it
  const live = await start(path.join(dir, 'two.sock'))
  try {
    expect(await waitUntil(() => !folders().includes(left[0]), 10000)).toBe(true)
    expect(folders()).toEqual([expect.stringMatching(new RegExp(`^httpsys-bind-${live.pid}-`))])
  } finally {
    await stop(live)
  }
}, 30000)
