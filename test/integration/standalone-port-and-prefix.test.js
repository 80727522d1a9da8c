'use strict'

// One standalone process, one port, two servers: `a.listen(port)` and
// `b.listen('http://+:port/api/')` (README "listen(prefix)"), in either order, on the
// native router, both ways it gets the port: node binds and hands it over
// (src/preload/standalone-native.js, standalone-prefixes.js), or the router binds, as on
// Windows (standalone-native-win.js, standalone-native-win-paths.js). The port is shared by URL as the removed JS hub shared it:
// the prefix server gets /api/, the port server the rest; once both closed, the port
// is free again. A second listen(port) there is EADDRINUSE, as on node.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { routerBin } = require('../helpers/native-router')
const { runPreloaded } = require('../helpers/run-preloaded')

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-pp-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const ROUTERS = [
  ['node binds', {}],
  ['the router binds', { HTTPSYS_STANDALONE_BIND: 'router' }]
]

/** The app: `first` listens, then `second`, both in one tick, on a port of node's choosing. */
const app = (prefixFirst) => `
  const http = require('http')
  const net = require('net')
  const out = []
  const a = http.createServer((req, res) => res.end('port ' + req.url))
  const b = http.createServer((req, res) => res.end('api ' + req.url))
  for (const [n, s] of [['a', a], ['b', b]]) s.on('error', (e) => { out.push([n, e.httpsysCode || e.code, e.message]); console.log(JSON.stringify(out)); process.exit(1) })
  const probe = net.createServer().listen(0, () => {
    const port = probe.address().port
    probe.close(() => {
      if (${prefixFirst}) {
        b.listen('http://+:' + port + '/api/')
        a.listen(port)
      } else {
        a.listen(port)
        b.listen('http://+:' + port + '/api/')
      }
      const get = (p) => new Promise((resolve) => http.get({ port, path: p, agent: false, host: '127.0.0.1' }, (r) => { let t = ''; r.on('data', (d) => { t += d }); r.on('end', () => resolve(r.statusCode + ' ' + t)) }))
      ;(async () => {
        out.push([a.address().port === port, b.address().port === port])
        // (the second server's prefix joins the port once its message reached the
        // router: a request sent before that is routed without it)
        while ((await get('/')).startsWith('404') || (await get('/api/')).startsWith('200 port')) await new Promise((resolve) => setTimeout(resolve, 10))
        out.push(await get('/'), await get('/x'), await get('/api/'), await get('/api/y'))
        // a second listen(port) there is node's EADDRINUSE, as on node
        const c = http.createServer()
        await new Promise((resolve) => c.on('error', (e) => { out.push([e.httpsysCode, e.code]); resolve() }).listen(port))
        await new Promise((resolve) => b.close(resolve))
        out.push(await get('/api/y'), await get('/z'))
        await new Promise((resolve) => a.close(resolve))
        const free = net.createServer()
        free.on('error', (e) => { out.push(e.code); console.log(JSON.stringify(out)) })
        free.listen(port, () => { out.push('free'); free.close(); console.log(JSON.stringify(out)) })
      })()
    })
  })
`

describe.each(ROUTERS)('standalone: listen(port) and listen(prefix) on the same port of one process (%s)', (_, bind) => {
  test.each([['listen(port) first', false], ['listen(prefix) first', true]])('%s: the prefix server gets /api/, the port server the rest', async (_, prefixFirst) => {
    const env = { TMPDIR: dir, HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin(), ...bind }
    const r = await runPreloaded(app(prefixFirst), { env, timeoutMs: 15000 })
    expect(r.err).toBe('')
    expect(r.lines).toEqual([[
      [true, true],
      '200 port /', '200 port /x', '200 api /api/', '200 api /api/y',
      ['ERR_HTTPSYS_PORT_IN_USE', 'EADDRINUSE'],
      '200 port /api/y', '200 port /z',
      'free'
    ]])
    expect(r.code).toBe(0)
  })
  test('the port server closing first: the prefix server keeps its path, the rest is 404, and a listen(port) there joins again', async () => {
    const env = { TMPDIR: dir, HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin(), ...bind }
    const r = await runPreloaded(`
      const http = require('http')
      const net = require('net')
      const out = []
      const a = http.createServer((req, res) => res.end('port ' + req.url))
      const b = http.createServer((req, res) => res.end('api ' + req.url))
      const probe = net.createServer().listen(0, () => {
        const port = probe.address().port
        probe.close(() => {
          a.listen(port)
          b.listen('http://+:' + port + '/api/')
          const get = (p) => new Promise((resolve) => http.get({ port, path: p, agent: false, host: '127.0.0.1' }, (r) => { let t = ''; r.on('data', (d) => { t += d }); r.on('end', () => resolve(r.statusCode + ' ' + (r.statusCode === 200 ? t : ''))) }))
          const until = async (p, not) => { while ((await get(p)).startsWith(not)) await new Promise((resolve) => setTimeout(resolve, 10)) }
          ;(async () => {
            await until('/api/', '200 port')
            await new Promise((resolve) => a.close(resolve))
            out.push(await get('/api/y'), await get('/x'))
            const c = http.createServer((req, res) => res.end('again ' + req.url))
            c.listen(port)
            await until('/x', '404')
            out.push(await get('/x'), await get('/api/z'))
            c.close()
            b.close()
            console.log(JSON.stringify(out))
          })()
        })
      })
    `, { env, timeoutMs: 15000 })
    expect(r.err).toBe('')
    expect(r.lines).toEqual([['200 api /api/y', '404 ', '200 again /x', '200 api /api/z']])
    expect(r.code).toBe(0)
  })
})
