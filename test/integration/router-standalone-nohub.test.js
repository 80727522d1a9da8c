'use strict'

// Issue 25 ends with src/hub deleted: off Windows, a process whose HTTPSYS_ROUTER is
// unset never loads it, whatever its servers do. Each case here was served by a hub in
// the process until the native router took it; each app prints what it saw, then
// whether src/hub was loaded, and the hub (HTTPSYS_ROUTER=hub) must print the same.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')
const { routerBin } = require('../helpers/native-router')

// the native router is the default: HTTPSYS_ROUTER unset
const ROUTERS = [
  ['hub', () => ({ HTTPSYS_ROUTER: 'hub' })],
  ['native router', () => ({ HTTPSYS_ROUTER: undefined, HTTPSYS_ROUTER_PATH: routerBin() })]
]

let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-nh-')) })
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

const HUB_LOADED = 'Object.keys(require.cache).some((k) => /[\\\\/]src[\\\\/]hub[\\\\/]/.test(k))'

function run (source, env, timeoutMs = 15000) {
  const e = standaloneEnv({ TMPDIR: dir, ...env })
  for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k]
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-r', REGISTER, '-e', source], { env: e, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ lines: out.trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)), code, signal, err })
    })
  })
}

describe.each(ROUTERS)('no src/hub off Windows unless asked for (%s)', (name, envOf) => {
  const nativeRouter = name !== 'hub'

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
    expect(r.lines).toEqual([['200 via /handed', '200 via /duplex'], !nativeRouter])
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
    expect(r.lines).toEqual([[true, true, 2, ['EADDRINUSE', 'ERR_HTTPSYS_PORT_IN_USE', true, true], '200 path /x', false, 1], !nativeRouter])
    expect(r.code).toBe(0)
  })
})
