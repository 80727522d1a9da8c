'use strict'

// A standalone app (`node --require httpsys-cli/register app.js`, no supervisor) on the
// native router, which the preload runs as the app's child (issue 25 "Standalone"), both
// ways: node binds and hands the socket over (src/preload/standalone-native.js), and the
// router binds while listen() waits, as on Windows (standalone-native-win.js,
// HTTPSYS_STANDALONE_BIND=router). The same behaviour is asked of both.

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
  ['native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })],
  // Windows' way (src/preload/standalone-native-win.js): the router binds while listen() waits
  ['native router binding itself', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin(), HTTPSYS_STANDALONE_BIND: 'router' })]
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

/**
 * One raw connection: sends `send` (a string, or a list of [delayMs, string]), keeps
 * what comes back, and resolves after `waitMs` (or once the server closed it, with
 * `untilClose`) with the text and when the server closed it (ms after connecting).
 */
function talk (port, send, waitMs, { untilClose = false, half = false } = {}) {
  return new Promise((resolve, reject) => {
    const c = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    let got = ''
    const t0 = Date.now()
    let closedAt = null
    let timer = null
    const done = () => { clearTimeout(timer); c.destroy(); resolve({ got, closedAt, localPort: c.localPort }) }
    c.setEncoding('latin1')
    c.on('data', (d) => { got += d })
    c.on('error', () => {})
    c.on('end', () => { if (closedAt === null) closedAt = Date.now() - t0; if (untilClose) done() })
    c.on('close', () => { if (closedAt === null) closedAt = Date.now() - t0; if (untilClose) done() })
    c.on('connect', () => {
      const steps = typeof send === 'string' ? [[0, send]] : send
      let at = 0
      for (const [delay, text] of steps) {
        at += delay
        setTimeout(() => { if (!c.destroyed) c.write(text) }, at)
      }
      if (half) setTimeout(() => c.end(), at)
    })
    timer = setTimeout(done, waitMs)
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

  test('a port an http server closed takes an https server next, even one given no certificate yet (fastify\'s listeningOrigin test)', async () => {
    const app = run(`
      const http = require('node:http')
      const https = require('node:https')
      const a = http.createServer((q, r) => r.end('A')).listen(0, '127.0.0.1', () => {
        const port = a.address().port
        a.close(() => {
          const b = https.createServer({}, (q, r) => r.end('B'))
          b.on('error', (e) => console.log(JSON.stringify({ error: e.code, message: e.message })))
          b.listen(port, '127.0.0.1', () => { console.log(JSON.stringify({ same: b.address().port === port })); b.close() })
        })
      })`, envOf())
    expect(await app.firstLine).toEqual({ same: true })
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
  // node's connection lifecycle on the server's own port: what node's server does with
  // the sockets it holds, the worker decides there (wire CONN_OPEN ... CONN_IDLE)
  test('\'connection\' is emitted when a client connects, before it sends anything, with the client\'s address', async () => {
    const app = run(`
      const http = require('node:http')
      const seen = []
      const s = http.createServer((q, r) => r.end(JSON.stringify(seen)))
      s.on('connection', (sock) => seen.push({ remoteAddress: sock.remoteAddress, remotePort: sock.remotePort, localPort: sock.localPort, family: sock.remoteFamily }))
      s.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: s.address().port })))`, envOf())
    const { port } = await app.firstLine
    const silent = net.connect(port, '127.0.0.1')
    await new Promise((resolve) => silent.once('connect', resolve))
    const silentPort = silent.localPort
    await new Promise((resolve) => setTimeout(resolve, 300))
    const seen = JSON.parse((await get(port)).body)
    silent.destroy()
    expect(seen[0]).toEqual({ remoteAddress: '127.0.0.1', remotePort: silentPort, localPort: port, family: 'IPv4' })
    expect(seen.length).toBe(2)
  }, 30000)

  test('\'clientError\' gets node\'s error and the socket: a listener answers as it likes; without one, node\'s own 400', async () => {
    const app = run(`
      const http = require('node:http')
      const a = http.createServer((q, r) => r.end('ok'))
      a.on('clientError', (err, sock) => {
        sock.end('HTTP/1.1 400 Mine\\r\\nX-Code: ' + err.code + '\\r\\nX-Raw: ' + JSON.stringify(String(err.rawPacket)) + '\\r\\nContent-Length: 0\\r\\n\\r\\n')
      })
      const b = http.createServer((q, r) => r.end('ok'))
      a.listen(0, () => b.listen(0, () => console.log(JSON.stringify({ a: a.address().port, b: b.address().port }))))`, envOf())
    const ports = await app.firstLine
    const mine = await talk(ports.a, 'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 3000, { untilClose: true })
    expect(mine.got).toBe('HTTP/1.1 400 Mine\r\nX-Code: HPE_INVALID_HEADER_TOKEN\r\nX-Raw: "GET / HTTP/1.1\\r\\nHost: x\\r\\nBad Header\\r\\n\\r\\n"\r\nContent-Length: 0\r\n\r\n')
    expect(mine.closedAt).not.toBeNull()
    // the client's FIN right behind: node ran the listener (its answer written) first
    const fin = await talk(ports.a, 'BAD\r\n\r\n', 3000, { untilClose: true, half: true })
    expect(fin.got).toBe('HTTP/1.1 400 Mine\r\nX-Code: HPE_INVALID_METHOD\r\nX-Raw: "BAD\\r\\n\\r\\n"\r\nContent-Length: 0\r\n\r\n')
    const node = await talk(ports.b, 'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n', 3000, { untilClose: true })
    expect(node.got).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
    expect(node.closedAt).not.toBeNull()
  }, 30000)

  test('a head that does not come within headersTimeout is a \'clientError\' (ERR_HTTP_REQUEST_TIMEOUT) the listener answers', async () => {
    const app = run(`
      const http = require('node:http')
      const s = http.createServer({ headersTimeout: 500, requestTimeout: 500, connectionsCheckingInterval: 250 }, (q, r) => r.end('ok'))
      s.on('clientError', (err, sock) => sock.end('HTTP/1.1 408 Mine ' + err.code + '\\r\\n\\r\\n'))
      s.listen(0, () => console.log(JSON.stringify({ port: s.address().port })))`, envOf())
    const { port } = await app.firstLine
    const slow = await talk(port, 'GET / HTTP/1.1\r\nHost: x\r\n', 6000, { untilClose: true })
    expect(slow.got).toBe('HTTP/1.1 408 Mine ERR_HTTP_REQUEST_TIMEOUT\r\n\r\n')
  }, 30000)

  test('an idle connection past keepAliveTimeout is the server\'s \'timeout\': a listener that takes it keeps it open', async () => {
    const app = run(`
      const http = require('node:http')
      let timeouts = 0
      const s = http.createServer((q, r) => r.end('timeouts ' + timeouts))
      s.keepAliveTimeout = 300
      s.on('timeout', (sock) => { timeouts++ })
      s.listen(0, () => console.log(JSON.stringify({ port: s.address().port })))`, envOf())
    const { port } = await app.firstLine
    const kept = await talk(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', 4000)
    expect(kept.got).toMatch(/timeouts 0$/)
    // node: the listener took the socket's timeout; the connection stays open
    expect(kept.closedAt).toBeNull()
    expect((await get(port)).body).toBe('timeouts 1')
  }, 30000)

  test('closeIdleConnections() ends the idle connections at once; closeAllConnections() the busy ones too', async () => {
    const app = run(`
      const http = require('node:http')
      const s = http.createServer((q, r) => {
        if (q.url === '/idle') { s.closeIdleConnections(); return r.end('closed idle') }
        if (q.url === '/all') { r.end('closing all'); return setTimeout(() => s.closeAllConnections(), 100) }
        if (q.url === '/slow') return setTimeout(() => r.end('slow'), 10000)
        r.end('ok')
      })
      s.listen(0, () => console.log(JSON.stringify({ port: s.address().port })))`, envOf())
    const { port } = await app.firstLine
    const idle = talk(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', 4000, { untilClose: true })
    await new Promise((resolve) => setTimeout(resolve, 400))
    const t0 = Date.now()
    expect((await get(port, '/idle')).body).toBe('closed idle')
    const closed = await idle
    expect(closed.got).toMatch(/\r\n\r\nok$/)
    expect(closed.closedAt).not.toBeNull()
    expect(Date.now() - t0).toBeLessThan(1500)
    const busy = talk(port, 'GET /slow HTTP/1.1\r\nHost: x\r\n\r\n', 5000, { untilClose: true })
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect((await get(port, '/all')).body).toBe('closing all')
    const b = await busy
    expect(b.closedAt).not.toBeNull()
    expect(b.got).toBe('')
  }, 30000)

  test('an upgrade request without Host reaches the \'upgrade\' listener; a plain one gets node\'s 400 unless requireHostHeader is false', async () => {
    const app = run(`
      const http = require('node:http')
      const a = http.createServer((q, r) => r.end('a ' + q.url))
      a.on('upgrade', (q, sock) => sock.end('HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: x\\r\\nConnection: Upgrade\\r\\n\\r\\nupgraded'))
      const b = http.createServer({ requireHostHeader: false }, (q, r) => r.end('b ' + q.url))
      a.listen(0, () => b.listen(0, () => console.log(JSON.stringify({ a: a.address().port, b: b.address().port }))))`, envOf())
    const ports = await app.firstLine
    const up = await talk(ports.a, 'GET /u HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: x\r\n\r\n', 3000, { untilClose: true })
    expect(up.got).toBe('HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\nupgraded')
    const refused = await talk(ports.a, 'GET /p HTTP/1.1\r\n\r\n', 3000, { untilClose: true })
    expect(refused.got).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/)
    const taken = await talk(ports.b, 'GET /p HTTP/1.1\r\n\r\n', 1000)
    expect(taken.got).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nb \/p$/)
  }, 30000)

  test('maxRequestsPerSocket: the last response says Connection: close and the connection stays open; the next request is 503', async () => {
    const app = run(`
      const http = require('node:http')
      const s = http.createServer((q, r) => r.end('n ' + q.url))
      s.maxRequestsPerSocket = 2
      s.listen(0, () => console.log(JSON.stringify({ port: s.address().port })))`, envOf())
    const { port } = await app.firstLine
    const req = (p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`
    const got = await talk(port, [[0, req('/1')], [200, req('/2')], [600, req('/3')]], 2000)
    const heads = got.got.split('HTTP/1.1 ').slice(1)
    expect(heads.length).toBe(3)
    expect(heads[0]).toMatch(/^200 OK\r\n[^]*Connection: keep-alive\r\n[^]*n \/1$/)
    expect(heads[1]).toMatch(/^200 OK\r\n[^]*Connection: close\r\n[^]*n \/2$/)
    expect(heads[2]).toMatch(/^503 Service Unavailable\r\n/)
  }, 30000)

  test('a client that sends its FIN right after its request gets the answer an app made before its event loop read on, however long that took', async () => {
    const app = run(`
      const http = require('node:http')
      const s = http.createServer((q, r) => {
        const until = Date.now() + 300
        while (Date.now() < until) {}
        r.end('busy ' + q.url)
      })
      // (said once the server took a request: attached, on either router)
      s.listen(0, () => http.get({ port: s.address().port, agent: false }, (m) => { m.resume(); m.on('end', () => console.log(JSON.stringify({ port: s.address().port }))) }))`, envOf())
    const { port } = await app.firstLine
    const got = await talk(port, 'GET /fin HTTP/1.1\r\nHost: x\r\n\r\n', 5000, { untilClose: true, half: true })
    expect(got.got).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\nbusy \/fin$/)
  }, 30000)
  test('CONNECT reaches the \'connect\' listener with the bytes after its head, and its 2xx makes the connection the app\'s tunnel; without a listener the connection goes', async () => {
    const app = run(`
      const http = require('node:http')
      const a = http.createServer((q, r) => r.end('plain'))
      a.on('connect', (q, sock, head) => {
        sock.write('HTTP/1.1 200 Connection Established\\r\\n\\r\\n')
        sock.write('target ' + q.url + ' head ' + head.toString() + ';')
        sock.on('data', (d) => sock.write('echo ' + d + ';'))
        sock.on('end', () => sock.end('bye'))
      })
      const b = http.createServer((q, r) => r.end('plain'))
      a.listen(0, () => b.listen(0, () => console.log(JSON.stringify({ a: a.address().port, b: b.address().port }))))`, envOf())
    const ports = await app.firstLine
    const tunnel = await talk(ports.a, [[0, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\nfirst'], [300, 'second']], 3000, { untilClose: true, half: true })
    expect(tunnel.got).toBe('HTTP/1.1 200 Connection Established\r\n\r\ntarget example.com:443 head first;echo second;bye')
    const refused = await talk(ports.b, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 3000, { untilClose: true })
    expect(refused.got).toBe('')
    expect(refused.closedAt).not.toBeNull()
  }, 30000)
  test('what a response wrote before the app destroyed the socket reaches the client', async () => {
    const app = run(`
      const http = require('node:http')
      const s = http.createServer((q, r) => {
        r.writeHead(200, { 'Content-Type': 'text/plain' })
        r.write('asd', () => r.socket.destroy())
      })
      s.listen(0, () => console.log(JSON.stringify({ port: s.address().port })))`, envOf())
    const { port } = await app.firstLine
    const got = await talk(port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n', 3000, { untilClose: true })
    expect(got.got).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\r\n\r\n3\r\nasd\r\n$/)
  }, 30000)

  test('after close() the requests pipelined on an open connection are still answered, as node answers them', async () => {
    const app = run(`
      const http = require('node:http')
      const s = http.createServer((q, r) => {
        s.close()
        setTimeout(() => r.end('n ' + q.url), 20)
      })
      s.listen(0, () => console.log(JSON.stringify({ port: s.address().port })))`, envOf())
    const { port } = await app.firstLine
    const req = (p) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`
    // (the later ones sent after close(): the connection is busy until its last answer)
    const got = await talk(port, [[0, req('/1') + req('/2')], [10, req('/3')], [5, req('/4')]], 3000)
    expect(got.got.match(/n \/\d/g)).toEqual(['n /1', 'n /2', 'n /3', 'n /4'])
  }, 30000)
  test('insecureHTTPParser: a header value with a control byte reaches the app; without it, node\'s 400', async () => {
    const app = run(`
      const http = require('node:http')
      const a = http.createServer({ insecureHTTPParser: true }, (q, r) => r.end('x ' + JSON.stringify(q.headers.x)))
      const b = http.createServer((q, r) => r.end('strict'))
      a.listen(0, () => b.listen(0, () => console.log(JSON.stringify({ a: a.address().port, b: b.address().port }))))`, envOf())
    const ports = await app.firstLine
    const head = 'GET / HTTP/1.1\r\nHost: x\r\nX: a\x01b\r\nConnection: close\r\n\r\n'
    const lenient = await talk(ports.a, head, 3000, { untilClose: true })
    expect(lenient.got).toMatch(/\r\n\r\nx "a\\u0001b"$/)
    const strict = await talk(ports.b, head, 3000, { untilClose: true })
    expect(strict.got).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
  }, 30000)
  test('every request one read holds reaches the app, those behind a socket the app destroyed too (node\'s parser emits each)', async () => {
    const app = run(`
      const http = require('node:http')
      let seen = 0
      const a = http.createServer((q, r) => {
        seen++
        if (q.url === '/1') return setImmediate(() => q.socket.destroy())
        if (q.url === '/2') return process.nextTick(() => r.destroy())
        if (q.url === '/3') { r.write('hello '); return setImmediate(() => r.end('world!')) }
        r.destroy()
      })
      const b = http.createServer((q, r) => r.end('seen ' + seen))
      a.listen(0, () => b.listen(0, () => console.log(JSON.stringify({ a: a.address().port, b: b.address().port }))))`, envOf())
    const ports = await app.firstLine
    // (node's test-http-incoming-pipelined-socket-destroy)
    const seeds = [3, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4]
    await talk(ports.a, seeds.map((n) => `GET /${n} HTTP/1.1\r\nHost: x\r\n\r\n\r\n`).join(''), 3000, { untilClose: true })
    expect((await get(ports.b)).body).toBe('seen 13')
  }, 30000)
})

test.each(ROUTERS)('%s: the app runs the way it names (the router binds only with HTTPSYS_STANDALONE_BIND=router): the second way of these tests is not the first again', async (name, envOf) => {
  const child = run(`
    const http = require('http')
    const s = http.createServer((req, res) => res.end('ok'))
    s.listen(0, '127.0.0.1', () => {
      const bindsItself = Object.keys(require.cache).some((k) => k.endsWith('standalone-native-win.js'))
      console.log(JSON.stringify({ port: s.address().port, bindsItself }))
    })
  `, envOf())
  const said = await child.firstLine
  expect(said.bindsItself).toBe(name === 'native router binding itself')
  expect(await get(said.port)).toEqual({ status: 200, body: 'ok' })
  child.kill('SIGTERM')
  await child.exited
})
