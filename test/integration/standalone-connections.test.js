'use strict'

// A standalone server counts its connections as node's does (getConnections()): from
// the accept, one that has sent nothing yet too, until it closes; on the port of its
// own, in a node cluster worker as in a single process.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { runPreloaded } = require('../helpers/run-preloaded')
const { routerBin } = require('../helpers/native-router')

const ROUTERS = [
  ['native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })],
  // Windows' way (src/preload/standalone-native-win.js): the router binds while listen() waits
  ['native router binding itself', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin(), HTTPSYS_STANDALONE_BIND: 'router' })]
]

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-sc-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

// A connection that sends nothing, then one request on another: what getConnections()
// says with the idle one open, during the request, and once both closed.
const SERVER = `
  const http = require('http')
  const net = require('net')
  function serve (report) {
    const counts = {}
    const s = http.createServer((req, res) => s.getConnections((e, n) => { counts.request = n; res.end('ok') }))
    s.listen(0, '127.0.0.1', () => {
      const port = s.address().port
      const idle = net.connect(port, '127.0.0.1', () => setTimeout(() => s.getConnections((e, n) => {
        counts.idle = n
        http.get({ port, host: '127.0.0.1', agent: false }, (res) => {
          res.resume()
          res.on('end', () => {
            idle.destroy()
            setTimeout(() => s.getConnections((e, n) => {
              counts.after = n
              report(counts)
              s.close()
            }), 300)
          })
        })
      }), 300))
    })
  }
`

const SINGLE = SERVER + 'serve((counts) => console.log(JSON.stringify(counts)))\n'

const CLUSTER = SERVER + `
  const cluster = require('cluster')
  if (cluster.isPrimary) {
    const w = cluster.fork()
    w.on('message', (m) => { console.log(JSON.stringify(m)); w.disconnect() })
  } else {
    serve((counts) => process.send(counts))
  }
`

test.each([['a process', SINGLE], ['a cluster worker', CLUSTER]])('%s: getConnections() counts a connection from its accept, as node\'s', async (what, source) => {
  const node = await runPreloaded(source, { file: path.join(dir, 'node-app.js'), preload: false, timeoutMs: 15000 })
  expect(node.err).toBe('')
  expect(node.lines).toEqual([{ idle: 1, request: 2, after: 0 }])
  for (const [name, envOf] of ROUTERS) {
    const r = await runPreloaded(source, { file: path.join(dir, 'app.js'), env: { TMPDIR: dir, ...envOf() }, timeoutMs: 15000 })
    expect({ name, err: r.err, code: r.code, lines: r.lines }).toEqual({ name, err: '', code: 0, lines: node.lines })
  }
}, 60000)

// The front server hands a connection on at once (as a sticky-session balancer does);
// its client leaves before sending anything, before the server's router has its
// worker: once both servers close, nothing holds the process, as on node.
const HANDED = `
  const http = require('http')
  const net = require('net')
  const s = http.createServer((req, res) => res.end('ok'))
  const front = net.createServer((socket) => s.emit('connection', socket))
  front.on('connection', () => setTimeout(() => {
    front.close()
    s.getConnections((e, n) => {
      console.log(JSON.stringify({ connections: n }))
      s.close(() => console.log(JSON.stringify('closed')))
    })
  }, 300))
  front.listen(0, '127.0.0.1', () => {
    const c = net.connect(front.address().port, '127.0.0.1', () => c.destroy())
  })
`

test('a connection handed to a server that closes before its router attached is counted out: the process exits after close(), as node\'s', async () => {
  const node = await runPreloaded(HANDED, { preload: false })
  expect(node.lines).toEqual([{ connections: 0 }, 'closed'])
  expect(node.code).toBe(0)
  for (const [name, envOf] of ROUTERS) {
    const r = await runPreloaded(HANDED, { env: { TMPDIR: dir, ...envOf() }, timeoutMs: 8000 })
    expect({ name, err: r.err, code: r.code, signal: r.signal, lines: r.lines }).toEqual({ name, err: '', code: 0, signal: null, lines: node.lines })
  }
}, 30000)
