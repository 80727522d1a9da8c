'use strict'

// A standalone app (`node --require httpsys-cli/register app.js`, no supervisor) on
// either router: the in-process JS hub (the default) and the native router, which the
// preload runs as the app's child under HTTPSYS_ROUTER=native (issue 25 "Standalone",
// src/preload/standalone-native.js). Ported from hub-standalone.test.js and
// hub-standalone-sockets.test.js: the same behaviour is asked of both.

const { spawn } = require('node:child_process')
const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')
const { routerBin } = require('../helpers/native-router')
const { waitUntil } = require('../fixtures/apps/harness')

const ROUTERS = [
  ['hub', () => ({})],
  ['native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })]
]

let dir
const started = new Set()
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-sa-')) })
afterEach(async () => {
  for (const child of started) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL')
      await new Promise((resolve) => child.once('exit', resolve))
    }
  }
  started.clear()
  fs.rmSync(dir, { recursive: true, force: true })
})

/** Whether pid is gone (or a zombie nobody reaped yet). */
function gone (pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] === 'Z'
  } catch {
    return true
  }
}

/** Runs an app given as source through the preload; resolves with its first stdout line (JSON). */
function run (source, env) {
  const child = spawn(process.execPath, ['-r', REGISTER, '-e', source], { env: standaloneEnv({ TMPDIR: dir, ...env }), stdio: ['ignore', 'pipe', 'pipe'] })
  started.add(child)
  let err = ''
  child.stderr.on('data', (d) => { err += d })
  child.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)))
  child.firstLine = new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]))
    })
    child.once('exit', (code) => reject(new Error(`the app exited (${code}) before it said anything: ${out}${err}`)))
  })
  return child
}

function get (port, urlPath = '/') {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: urlPath, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (d) => { body += d })
      res.on('end', () => resolve({ status: res.statusCode, body }))
    }).on('error', reject)
  })
}

const ownSockets = () => fs.readdirSync(dir).filter((f) => /^httpsys-\d+-[0-9a-f]{8}\.sock$/.test(f)).sort()

describe.each(ROUTERS)('a standalone app on the %s', (name, envOf) => {
  test('listen(0) knows its port when it returns, serves, and the process exits once its server closed, leaving nothing behind', async () => {
    const app = run(`
      const http = require('node:http')
      const fs = require('node:fs')
      const s = http.createServer((q, r) => { r.end('standalone ' + q.url); if (q.url === '/bye') s.close() })
      s.listen(0)
      const a = s.address()
      s.on('listening', () => {
        let children = []
        try { children = fs.readFileSync('/proc/' + process.pid + '/task/' + process.pid + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean).map(Number) } catch {}
        console.log(JSON.stringify({ port: a.port, family: a.family, children }))
      })`, envOf())
    const info = await app.firstLine
    expect(info.port).toBeGreaterThan(0)
    // the native router is the app's own child; the hub runs inside the app
    expect(info.children.length).toBe(name === 'native router' ? 1 : 0)
    expect(await get(info.port, '/x')).toEqual({ status: 200, body: 'standalone /x' })
    expect(await get(info.port, '/bye')).toEqual({ status: 200, body: 'standalone /bye' })
    let timer
    const code = await Promise.race([app.exited, new Promise((resolve) => { timer = setTimeout(() => resolve('still running'), 5000) })])
    clearTimeout(timer)
    expect(code).toBe(0)
    expect(await waitUntil(() => info.children.every(gone), 3000)).toBe(true)
    expect(ownSockets()).toEqual([])
  }, 30000)

  test('servers that listened in one tick each serve the clients that connected before they said listening', async () => {
    const app = run(`
      const http = require('node:http')
      const servers = []
      for (let i = 0; i < 4; i++) servers.push(http.createServer((q, r) => r.end('S' + i)).listen(0))
      const get = (port) => new Promise((res, rej) => http.get({ port, host: '127.0.0.1', agent: false }, (m) => { let t = ''; m.on('data', (d) => { t += d }); m.on('end', () => res(t)) }).on('error', rej))
      const all = []
      for (const s of servers) for (let k = 0; k < 3; k++) all.push(get(s.address().port))
      Promise.all(all).then((v) => { console.log(JSON.stringify(v)); for (const s of servers) s.close() }, (e) => console.log(JSON.stringify({ error: e.code })))`, envOf())
    expect(await app.firstLine).toEqual(['S0', 'S0', 'S0', 'S1', 'S1', 'S1', 'S2', 'S2', 'S2', 'S3', 'S3', 'S3'])
    expect(await app.exited).toBe(0)
  }, 30000)

  test('a port in use is node\'s EADDRINUSE; a port a server closed is free again at once for the next', async () => {
    const app = run(`
      const http = require('node:http')
      const net = require('node:net')
      const taken = net.createServer().listen(0, () => {
        const s = http.createServer().listen(taken.address().port)
        s.on('error', (err) => {
          taken.close()
          const a = http.createServer((q, r) => r.end('A')).listen(0, () => {
            const port = a.address().port
            a.close()
            const b = http.createServer((q, r) => r.end('B')).listen(port, () => {
              http.get({ port, agent: false }, (m) => {
                let t = ''
                m.on('data', (d) => { t += d })
                m.on('end', () => { console.log(JSON.stringify({ code: err.code, syscall: err.syscall, again: t })); b.close() })
              })
            })
            b.on('error', (e) => console.log(JSON.stringify({ code: err.code, again: e.code })))
          })
        })
      })`, envOf())
    expect(await app.firstLine).toEqual({ code: 'EADDRINUSE', syscall: 'listen', again: 'B' })
    expect(await app.exited).toBe(0)
  }, 30000)

  test('a killed app leaves no router and, once the next app started, no socket; a live app\'s socket is kept', async () => {
    const source = `require('node:http').createServer((q, s) => s.end('ok')).listen(0, function () {
      const fs = require('node:fs')
      let children = []
      try { children = fs.readFileSync('/proc/' + process.pid + '/task/' + process.pid + '/children', 'utf8').trim().split(/\\s+/).filter(Boolean).map(Number) } catch {}
      console.log(JSON.stringify({ port: this.address().port, children }))
    })`
    const killed = run(source, envOf())
    const first = await killed.firstLine
    expect(first.children.length).toBe(name === 'native router' ? 1 : 0)
    expect(await waitUntil(() => ownSockets().length === 1, 10000)).toBe(true)
    const left = ownSockets()[0]
    expect(left).toMatch(new RegExp(`^httpsys-${killed.pid}-`))
    killed.kill('SIGKILL')
    await killed.exited
    // its router (the native one) goes with it
    expect(await waitUntil(() => first.children.every(gone), 3000)).toBe(true)

    const live = run(source, envOf())
    const second = await live.firstLine
    expect((await get(second.port)).body).toBe('ok')
    expect(await waitUntil(() => !ownSockets().includes(left), 10000)).toBe(true)
    expect(ownSockets()).toEqual([expect.stringMatching(new RegExp(`^httpsys-${live.pid}-`))])
  }, 30000)

  // the server's port is its own: its connections follow node's rules, not the shared
  // router's (router/internal/conn/owned.go, src/hub/client-connection.js ownsPort)
  test('its own port: any Host value and the target as sent reach the app, and an idle connection ends after the server\'s keepAliveTimeout', async () => {
    const app = run(`
      const http = require('node:http')
      const s = http.createServer((q, r) => r.end('host ' + q.headers.host + ' url ' + q.url))
      s.keepAliveTimeout = 300
      s.listen(0, () => console.log(JSON.stringify({ port: s.address().port })))`, envOf())
    const { port } = await app.firstLine
    const talk = (send, waitMs) => new Promise((resolve, reject) => {
      const c = net.connect(port, '127.0.0.1')
      let got = ''
      const t0 = Date.now()
      let closedAt = null
      c.setEncoding('latin1')
      c.on('data', (d) => { got += d })
      c.on('error', reject)
      c.on('close', () => { closedAt = Date.now() - t0 })
      c.write(send)
      setTimeout(() => { c.destroy(); resolve({ got, closedAt }) }, waitMs)
    })
    // a Host the shared router refuses (not a URI host) reaches the app, as on node
    const odd = await talk('GET / HTTP/1.1\r\nHost: not a host!\r\n\r\n', 400)
    expect(odd.got).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nhost not a host! url \/$/)
    // the target as sent (express.static's traversal checks read it), not canonicalised
    const dots = await talk('GET /a/../../b%2F..%2fc HTTP/1.1\r\nHost: x\r\n\r\n', 400)
    expect(dots.got).toMatch(/\r\n\r\nhost x url \/a\/\.\.\/\.\.\/b%2F\.\.%2fc$/)
    // idle after a response: closed after the server's keepAliveTimeout (node waits 1 s
    // beyond it; the router's clock 1 to 2 s), not the router's 5 s
    const idle = await talk('GET / HTTP/1.1\r\nHost: x\r\n\r\n', 4500)
    expect(idle.closedAt).not.toBeNull()
    expect(idle.closedAt).toBeLessThan(3500)
  }, 30000)

  test('httpAllowHalfOpen set right after listen(): a client that half-closed after its request still gets the answer', async () => {
    const app = run(`
      const http = require('node:http')
      const s = http.createServer((q, r) => setTimeout(() => r.end('late ' + q.url), 150))
      s.listen(0)
      s.httpAllowHalfOpen = true
      s.on('listening', () => console.log(JSON.stringify({ port: s.address().port })))`, envOf())
    const { port } = await app.firstLine
    const got = await new Promise((resolve, reject) => {
      const c = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
      let text = ''
      c.setEncoding('latin1')
      c.on('data', (d) => { text += d })
      c.on('end', () => resolve(text))
      c.on('error', reject)
      c.end('GET /half HTTP/1.1\r\nHost: x\r\n\r\n')
    })
    expect(got).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n(9\r\n)?late \/half/)
  }, 30000)
})
