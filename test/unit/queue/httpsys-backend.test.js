'use strict'

const { createBackend } = require('../../../src/queue/httpsys')
const { RESPONSE_MORE, RESPONSE_CLOSE, RESPONSE_OPAQUE } = require('../../../src/wire/contract')
const { createFakeKernel } = require('../../helpers/fake-kernel')
const { createFakeAddon, fakeRequest, EVENT } = require('../../helpers/fake-addon')
const fs = require('node:fs')
const { X509Certificate } = require('node:crypto')
const { makeCerts } = require('../../helpers/tls-certs')

function setup (bindingOptions) {
  const binding = createFakeAddon(bindingOptions)
  const backend = createBackend(() => binding)
  const seen = []
  const handlers = {
    onRequest: (req) => seen.push(['request', req]),
    onBody: (id, chunk) => seen.push(['body', id, chunk.toString()]),
    onBodyEnd: (id) => seen.push(['bodyEnd', id]),
    onAbort: (id) => seen.push(['abort', id]),
    onDrain: (id) => seen.push(['drain', id]),
    onClose: (err) => seen.push(['close', err])
  }
  return { binding, backend, seen, handlers }
}

async function attached (bindingOptions, attachOptions = {}) {
  const t = setup(bindingOptions)
  t.attachment = await t.backend.attach({ urls: ['http://+:8080/'], handlers: t.handlers, ...attachOptions })
  t.queue = t.binding.queues[t.binding.queues.length - 1]
  return t
}

describe('httpsys backend: attaching', () => {
  test('standalone: creates a queue for the prefixes and reports what is bound', async () => {
    const { attachment, queue } = await attached()
    expect(queue.options.mode).toBe('create')
    expect(queue.options.urls).toEqual(['http://+:8080/'])
    expect(queue.started).toBe(true)
    expect(attachment.info).toEqual({ queue: null, urls: ['http://+:8080/'], ports: [8080] })
  })

  test('a prefix on port 0 is registered on a real free port', async () => {
    const { attachment } = await attached({}, { urls: ['http://localhost:0/app/'] })
    const [url] = attachment.info.urls
    const port = attachment.info.ports[0]
    expect(port).toBeGreaterThan(0)
    expect(url).toBe(`http://localhost:${port}/app/`)
  })

  test('a named queue is opened (worker under the supervisor)', async () => {
    const { queue, attachment } = await attached({}, { queue: 'api', urls: [] })
    expect(queue.options).toMatchObject({ mode: 'open', name: 'api', urls: [] })
    expect(attachment.info.queue).toBe('api')
  })

  test('a queue the controller gave prefixes (HTTPSYS_QUEUE_URLS) registers none of listen()\'s', async () => {
    // the app on http://+:8080/api/ calls listen(8080): taking http://+:8080/ would steal
    // the port's root from another app (or fail with 183)
    process.env.HTTPSYS_QUEUE_URLS = 'http://+:8080/api/'
    try {
      const { queue } = await attached({}, { queue: 'api', urls: ['http://+:8080/'] })
      expect(queue.options).toMatchObject({ mode: 'open', name: 'api', urls: [] })
    } finally {
      delete process.env.HTTPSYS_QUEUE_URLS
    }
  })

  test('under Wine a worker creates its queue with the controller\'s prefixes (Wine ignores queue names)', async () => {
    process.env.HTTPSYS_QUEUE_URLS = 'http://+:8080/api/'
    try {
      const { queue, attachment } = await attached({ wine: '8.0' }, { queue: 'api', urls: ['http://+:8080/'] })
      expect(queue.options).toMatchObject({ mode: 'create', name: 'api', urls: ['http://+:8080/api/'] })
      expect(attachment.info.urls).toEqual(['http://+:8080/api/'])
    } finally {
      delete process.env.HTTPSYS_QUEUE_URLS
    }
  })

  test('a standalone queue ends idle keep-alive connections after the server\'s keepAliveTimeout, not HTTP.SYS\'s 120 s', async () => {
    // Real Windows would show: `curl -v http://localhost:8080/ --next ...` with a 5 s
    // keepAliveTimeout sees its idle connection closed after 5 s (HTTP.SYS's default: 2 min)
    // what HTTP.SYS reads from the HTTP_TIMEOUT_LIMIT_INFO the addon passes (fake-properties.js)
    const at = async (options) => (await attached({}, options)).queue.kernel.timeouts
    const only = (idle) => ({ EntityBody: 'default', DrainEntityBody: 'default', RequestQueue: 'default', IdleConnection: idle, HeaderWait: 'default', MinSendRate: 'default' })
    expect(await at({ settings: { keepAliveTimeout: 5000 } })).toEqual(only(5))
    expect(await at({ settings: { keepAliveTimeout: 2500 } })).toEqual(only(3)) // whole seconds, never shorter
    // the longest timer HTTP.SYS has: 65535 s would turn it off (MAXUSHORT), not wait 18 h
    expect(await at({ settings: { keepAliveTimeout: 1e9 } })).toEqual(only(65534))
    // node's 0 is "no timeout", which HTTP.SYS cannot do: its default stays
    expect(await at({ settings: { keepAliveTimeout: 0 } })).toBeNull()
    expect(await at({})).toBeNull()
    // tuning given outright wins
    expect(await at({ settings: { keepAliveTimeout: 5000 }, timeouts: { idleConnection: 9 } })).toEqual(only(9))
    // the settings are not an option of the addon's queue
    expect((await attached({}, { settings: { keepAliveTimeout: 5000 } })).queue.options.settings).toBeUndefined()
  })

  test('a named queue (under the supervisor) keeps the config\'s timers: a server\'s keepAliveTimeout sets none', async () => {
    const { queue, binding } = await attached({}, { queue: 'api', urls: [], settings: { keepAliveTimeout: 5000 } })
    expect(queue.kernel.timeouts).toBeNull()
    // a worker sets nothing on a queue it opened (only the creator may)
    expect(queue.options.properties.map((p) => p.name)).toEqual(['HttpServerBindingProperty'])
    expect(binding.violations).toEqual([])
  })

  test('a request body over the limit gets 413 and a close, and never reaches the app', async () => {
    const { queue, seen } = await attached({}, { maxBodySize: 10 })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { method: 'POST', hasBody: true, rawHeaders: ['Host', 'x', 'Content-Length', '11'] })])
    expect(seen).toEqual([])
    const [[id, status, , headers, , flags]] = queue.callsOf('respond')
    expect([id, status, flags & RESPONSE_CLOSE]).toEqual([1, 413, RESPONSE_CLOSE])
    expect(headers).toContain('Connection')
  })

  test('a target that canonicalises outside the queue\'s prefixes (HTTP.SYS decoded %2F to route it) is 400 and never reaches the app', async () => {
    const { queue, seen } = await attached({}, { urls: ['http://+:8080/admin/'] })
    // HTTP.SYS routes /api/%2e%2e%2fadmin/x as /admin/x; the app would see /api/..%2fadmin/x
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { url: '/api/%2e%2e%2fadmin/x' })])
    queue.emit([EVENT.REQUEST, 2, fakeRequest(2, { url: '/ADMIN/x?y=1' })])
    expect(seen.map((x) => [x[0], x[1].url])).toEqual([['request', '/ADMIN/x?y=1']])
    const [[id, status, , , , flags]] = queue.callsOf('respond')
    expect([id, status, flags & RESPONSE_CLOSE]).toEqual([1, 400, RESPONSE_CLOSE])
  })

  test('a chunked body growing over the limit: the app hears onAbort, the client gets 413', async () => {
    const { queue, seen } = await attached({}, { maxBodySize: 10 })
    queue.emit([EVENT.REQUEST, 2, fakeRequest(2, { method: 'POST', hasBody: true, rawHeaders: ['Host', 'x', 'Transfer-Encoding', 'chunked'] }),
      EVENT.BODY, 2, Buffer.from('123456'), EVENT.BODY, 2, Buffer.from('789012')])
    expect(seen.map((e) => e[0])).toEqual(['request', 'body', 'abort'])
    expect(queue.callsOf('respond').map((c) => c[1])).toEqual([413])
  })

  test('a missing named queue with prefixes is created under that name', async () => {
    const t = setup()
    t.binding.fail({ open: 2 })
    await t.backend.attach({ queue: 'web', urls: ['http://+:8080/'], handlers: t.handlers })
    expect(t.binding.queues[0].options).toMatchObject({ mode: 'create', name: 'web', urls: ['http://+:8080/'] })
  })

  test('a missing named queue without prefixes is ERR_HTTPSYS_QUEUE_NOT_FOUND', async () => {
    const t = setup()
    t.binding.fail({ open: 2 })
    await expect(t.backend.attach({ queue: 'web', handlers: t.handlers }))
      .rejects.toMatchObject({ code: 'ERR_HTTPSYS_QUEUE_NOT_FOUND', queue: 'web', win32: 2 })
  })

  test('a queue whose receiving cannot start is closed, and attach rejects with a coded error', async () => {
    const t = setup()
    t.binding.fail({ start: 8 })
    await expect(t.backend.attach({ urls: ['http://+:8080/'], handlers: t.handlers }))
      .rejects.toMatchObject({ code: 'ERR_HTTPSYS_NATIVE_CALL', syscall: 'CreateThread', win32: 8 })
    // closing it is what unregisters http://+:8080/ for the next attempt
    expect(t.binding.queues[0].closed).toBe(true)
  })

  test('attach without onRequest is rejected', async () => {
    const t = setup()
    await expect(t.backend.attach({ urls: ['http://+:8080/'], handlers: {} }))
      .rejects.toMatchObject({ code: 'ERR_INVALID_ARG_TYPE' })
  })
})

describe('httpsys backend: client certificates (requestCert)', () => {
  // HTTP.SYS asks clients for a certificate only where the port's binding says so
  // (`httpsys cert add --client-cert`), completes the handshake either way and hands the
  // request what the client sent (client-certs.js). Real Windows would also show: curl
  // without --cert gets the 403 and a closed connection; with a certificate the CA issued,
  // the app's 200 and req.socket.authorized true (Wine has no HTTPS server to try it on).
  const NEGOTIATE = 0x2
  const HASH = Buffer.alloc(20, 7)
  const tlsReq = (id, tls) => fakeRequest(id, { localPort: 8443, encrypted: true, tls: { protocol: 'TLSv1.3', cipher: null, alpnProtocol: 'http/1.1', servername: null, authorized: false, authorizationError: null, peerCertificate: null, ...tls } })

  let lastBinding = null
  async function attachWith ({ flags, options = { key: 'k', cert: 'c', requestCert: true }, env = {} } = {}) {
    const t = setup()
    lastBinding = t.binding
    if (flags !== undefined) t.binding.sslCertSet({ ip: '0.0.0.0', port: 8443, hash: HASH, appId: '{x}', store: 'MY', flags }, false)
    const saved = { ...process.env }
    Object.assign(process.env, env)
    try {
      t.attachment = await t.backend.attach({ urls: ['https://+:8443/'], handlers: t.handlers, tls: options })
    } finally {
      for (const k of Object.keys(env)) if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k]
    }
    t.queue = t.binding.queues[t.binding.queues.length - 1]
    return t
  }

  test('a binding that does not ask clients for one fails the attach with the command, and nothing is registered', async () => {
    const err = await attachWith({ flags: 0 }).then(() => null, (e) => e)
    expect(err).toMatchObject({ code: 'ERR_HTTPSYS_CLIENT_CERT_BINDING' })
    expect(lastBinding.queues).toEqual([]) // refused before any queue registered a prefix
    expect(err.message).toContain('https.createServer({ requestCert: true })')
    expect(err.message).toContain(`\`httpsys cert add --port 8443 --thumbprint ${HASH.toString('hex')} --client-cert\``)
  })

  test('with a negotiating binding: no certificate or a refused one gets 403 and a close, never the app; an accepted one reaches it', async () => {
    const { queue, seen } = await attachWith({ flags: NEGOTIATE })
    queue.emit([EVENT.REQUEST, 1, tlsReq(1, {})])
    queue.emit([EVENT.REQUEST, 2, tlsReq(2, { peerCertificate: Buffer.from('der'), authorized: false, authorizationError: 'CERT_REVOKED' })])
    expect(seen).toEqual([])
    expect(queue.callsOf('respond').map(([id, status, , , , flags]) => [id, status, flags & RESPONSE_CLOSE])).toEqual([[1, 403, RESPONSE_CLOSE], [2, 403, RESPONSE_CLOSE]])
    queue.emit([EVENT.REQUEST, 3, tlsReq(3, { peerCertificate: Buffer.from('der'), authorized: true })])
    expect(seen.map(([kind, req]) => [kind, req.id, req.tls.authorized])).toEqual([['request', 3, true]])
  })

  test('rejectUnauthorized: false: every request reaches the app with the verdict on it', async () => {
    const { queue, seen } = await attachWith({ flags: NEGOTIATE, options: { key: 'k', cert: 'c', requestCert: true, rejectUnauthorized: false } })
    queue.emit([EVENT.REQUEST, 1, tlsReq(1, {})])
    expect(seen.map(([, req]) => req.tls)).toEqual([expect.objectContaining({ authorized: false, authorizationError: 'UNABLE_TO_GET_ISSUER_CERT' })])
  })

  test('no binding on the port: nothing can get through unasked (no handshake succeeds), so it attaches, still judging requests', async () => {
    const { queue, seen } = await attachWith()
    queue.emit([EVENT.REQUEST, 1, tlsReq(1, {})])
    expect(seen).toEqual([])
    expect(queue.callsOf('respond').map(([id, status]) => [id, status])).toEqual([[1, 403]])
  })

  test('the config\'s tls entry (HTTPSYS_CLIENT_CERTS) asks for the port though the app does not', async () => {
    const env = { HTTPSYS_CLIENT_CERTS: JSON.stringify([{ port: 8443, rejectUnauthorized: true }]) }
    const err = await attachWith({ flags: 0, options: { key: 'k', cert: 'c' }, env }).then(() => null, (e) => e)
    expect(err).toMatchObject({ code: 'ERR_HTTPSYS_CLIENT_CERT_BINDING' })
    expect(err.message).toContain("the config's tls entry for port 8443")
    const { queue, seen } = await attachWith({ flags: NEGOTIATE, options: { key: 'k', cert: 'c' }, env })
    queue.emit([EVENT.REQUEST, 1, tlsReq(1, {})])
    expect(seen).toEqual([])
    expect(queue.callsOf('respond')[0][1]).toBe(403)
  })

  test('with the app\'s ca: a certificate it issued reaches the app authorized, a self-signed one gets 403, whatever Windows said', async () => {
    const certs = makeCerts()
    try {
      const der = (file) => new X509Certificate(fs.readFileSync(file)).raw
      const { queue, seen } = await attachWith({ flags: NEGOTIATE, options: { key: 'k', cert: 'c', requestCert: true, ca: fs.readFileSync(certs.ca.cert) } })
      // Windows does not trust the app's private CA: its verdict says so, the app's ca decides
      queue.emit([EVENT.REQUEST, 1, tlsReq(1, { peerCertificate: der(certs.client.cert), authorized: false, authorizationError: 'SELF_SIGNED_CERT_IN_CHAIN' })])
      queue.emit([EVENT.REQUEST, 2, tlsReq(2, { peerCertificate: der(certs.stranger.cert), authorized: true })])
      expect(seen.map(([kind, req]) => [kind, req.id, req.tls.authorized, req.tls.authorizationError])).toEqual([['request', 1, true, null]])
      expect(queue.callsOf('respond').map(([id, status]) => [id, status])).toEqual([[2, 403]])
    } finally {
      certs.cleanup()
    }
  })

  test('a ca that is no certificate is ERR_HTTPSYS_TLS_CERT, as node\'s createServer throws', async () => {
    await expect(attachWith({ flags: NEGOTIATE, options: { key: 'k', cert: 'c', requestCert: true, ca: 'not a certificate' } }))
      .rejects.toMatchObject({ code: 'ERR_HTTPSYS_TLS_CERT' })
  })
})

describe('httpsys backend: an https server with its own key and no binding', () => {
  // HTTP.SYS serves the certificate bound to the port, never the app's: without a binding
  // every handshake fails and the app never hears of it. Real Windows: `curl -k
  // https://localhost:8443/` fails the handshake until `httpsys cert add` binds one.
  async function attachHttps (bind) {
    const binding = createFakeAddon()
    const warnings = []
    const backend = createBackend(() => binding, { warn: (fields, message) => warnings.push({ fields, message }) })
    if (bind) binding.sslCertSet({ ip: '0.0.0.0', port: 8443, hash: Buffer.alloc(20, 1), appId: '{x}', store: 'MY' }, false)
    await backend.attach({ urls: ['https://+:8443/'], handlers: { onRequest () {} }, tls: { key: 'k', cert: 'c' } })
    await backend.attach({ urls: ['http://+:8080/'], handlers: { onRequest () {} }, tls: { key: 'k', cert: 'c' } })
    return warnings
  }

  test('warns with the command that binds the app\'s certificate', async () => {
    const warnings = await attachHttps(false)
    expect(warnings).toHaveLength(1)
    expect(warnings[0].fields).toEqual({ event: 'tls-unbound', port: 8443, prefixes: ['https://+:8443/'] })
    expect(warnings[0].message).toMatch(/^https:\/\/\+:8443\/: no certificate is bound to port 8443, so HTTP\.SYS refuses every TLS handshake there\./)
    expect(warnings[0].message).toContain('`httpsys cert add --port 8443 --cert <its certificate file> --key <its key file>`')
    expect(warnings[0].message).toContain('`httpsys start --setup`')
  })

  test('says nothing when the port has a binding', async () => {
    expect(await attachHttps(true)).toEqual([])
  })
})

describe('httpsys backend: registration errors carry the Win32 code and the fix', () => {
  async function failWith (code, prefix = 'http://+:8080/') {
    const t = setup()
    t.binding.fail({ urls: { [prefix]: code } })
    return t.backend.attach({ urls: [prefix], handlers: t.handlers }).then(() => null, (err) => err)
  }

  test('183 is ERR_HTTPSYS_URL_CONFLICT', async () => {
    const err = await failWith(183)
    expect(err).toMatchObject({ code: 'ERR_HTTPSYS_URL_CONFLICT', prefix: 'http://+:8080/', win32: 183 })
    expect(err.message).toMatch(/already registered/)
  })

  test('5 is ERR_HTTPSYS_ACCESS_DENIED with the exact urlacl command', async () => {
    const saved = { ...process.env }
    process.env.USERDOMAIN = 'BUILD'
    process.env.USERNAME = 'ci'
    try {
      const err = await failWith(5, 'http://+:80/')
      expect(err).toMatchObject({ code: 'ERR_HTTPSYS_ACCESS_DENIED', prefix: 'http://+:80/', win32: 5, user: 'BUILD\\ci' })
      expect(err.message).toContain('`httpsys urlacl add http://+:80/ --user BUILD\\ci`')
    } finally {
      process.env = saved
    }
  })

  test('32 is ERR_HTTPSYS_PORT_IN_USE naming the port', async () => {
    const err = await failWith(32, 'http://+:8443/')
    expect(err).toMatchObject({ code: 'ERR_HTTPSYS_PORT_IN_USE', port: 8443, win32: 32 })
    expect(err.message).toMatch(/netstat -ano \| findstr :8443/)
  })

  test('87 is ERR_HTTPSYS_BAD_PREFIX', async () => {
    const err = await failWith(87)
    expect(err).toMatchObject({ code: 'ERR_HTTPSYS_BAD_PREFIX', prefix: 'http://+:8080/', win32: 87 })
  })

  test('any other failure is ERR_HTTPSYS_NATIVE_CALL with the call and the code name', async () => {
    const t = setup()
    t.binding.fail({ create: 1229 })
    await expect(t.backend.attach({ urls: ['http://+:8080/'], handlers: t.handlers })).rejects.toMatchObject({
      code: 'ERR_HTTPSYS_NATIVE_CALL', syscall: 'HttpCreateRequestQueue', win32: 1229, win32Name: 'ERROR_CONNECTION_INVALID'
    })
  })
})

describe('httpsys backend: requests and bodies', () => {
  test('a request reaches onRequest with the addon\'s expect; its body arrives only as asked', async () => {
    const { queue, seen, attachment } = await attached()
    const req = fakeRequest(1, { method: 'POST', hasBody: true, rawHeaders: ['Host', 'x', 'Expect', '100-continue'], expect: 'continue' })
    queue.emit([EVENT.REQUEST, 1, req, EVENT.BODY, 1, Buffer.from('ab')])
    expect(seen[0][1]).toMatchObject({ id: 1, method: 'POST', expect: 'continue' })
    expect(seen[1]).toEqual(['body', 1, 'ab'])

    attachment.readBody(1)
    expect(queue.callsOf('readBody')).toEqual([[1]])
    queue.emit([EVENT.BODY, 1, Buffer.from('cd'), EVENT.BODY_END, 1, 0])
    expect(seen.slice(2)).toEqual([['body', 1, 'cd'], ['bodyEnd', 1]])

    attachment.readBody(1) // the body is complete: nothing more to ask for
    expect(queue.callsOf('readBody')).toHaveLength(1)
  })

  test('writeContinue starts the first body read (HTTP.SYS then sends 100 Continue)', async () => {
    const { queue, attachment } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { hasBody: true })])
    attachment.writeContinue(1)
    expect(queue.callsOf('readBody')).toEqual([[1]])
  })

  test('an aborted request is reported once and then forgotten', async () => {
    const { queue, seen, attachment } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1), EVENT.ABORT, 1, 1236, EVENT.ABORT, 1, 1236])
    expect(seen.filter((s) => s[0] === 'abort')).toEqual([['abort', 1]])
    expect(attachment.respond(1, 200, 'OK', [], 'x')).toBe(true)
    expect(queue.callsOf('respond')).toHaveLength(0)
  })
})

describe('httpsys backend: responses', () => {
  test('a complete response is one native respond; a second respond is ignored', async () => {
    const { queue, attachment } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    const headers = ['Set-Cookie', 'a=1', 'Set-Cookie', 'b=2', 'Content-Length', '5']
    expect(attachment.respond(1, 200, undefined, headers, 'hello', 0)).toBe(true)
    expect(queue.callsOf('respond')).toEqual([[1, 200, 'OK', headers, 'hello', 0, 0]])
    expect(attachment.respond(1, 500, 'x', [], null)).toBe(true)
    expect(queue.callsOf('respond')).toHaveLength(1)
  })

  test('a cacheable response sent whole goes with its time to live and without Content-Length (HTTP.SYS writes one)', async () => {
    const { queue, attachment } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1), EVENT.REQUEST, 2, fakeRequest(2)])
    const headers = ['Content-Type', 'text/plain', 'content-length', '5']
    expect(attachment.respond(1, 200, 'OK', headers, 'hello', 0, 60)).toBe(true)
    expect(queue.callsOf('respond')[0]).toEqual([1, 200, 'OK', ['Content-Type', 'text/plain'], 'hello', 0, 60])
    expect(headers).toHaveLength(4) // the app's array is not changed
    // streamed: the app's framing stays (HTTP.SYS caches only what one send holds)
    expect(attachment.respond(2, 200, 'OK', headers, 'he', RESPONSE_MORE, 60)).toBe(true)
    expect(queue.callsOf('respond')[1]).toEqual([2, 200, 'OK', headers, 'he', RESPONSE_MORE, 60])
  })

  test('a cacheable response src/http framed chunked (writeHead() then end()) goes bare', async () => {
    const { queue, attachment } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    const framed = Buffer.from('5\r\nhello\r\n0\r\n\r\n')
    expect(attachment.respond(1, 200, 'OK', ['Transfer-Encoding', 'chunked', 'X-A', '1'], framed, 0, 5)).toBe(true)
    const [[, , , headers, body, , ttl]] = queue.callsOf('respond')
    expect(headers).toEqual(['X-A', '1'])
    expect(body.toString()).toBe('hello')
    expect(ttl).toBe(5)
  })

  test('streaming: respond(MORE) then sendBody pieces; the window closes and onDrain reopens it', async () => {
    const { queue, attachment, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    expect(attachment.respond(1, 200, 'OK', ['Transfer-Encoding', 'chunked'], null, RESPONSE_MORE)).toBe(true)
    const big = Buffer.alloc(300 * 1024)
    expect(attachment.sendBody(1, big, RESPONSE_MORE)).toBe(false)
    queue.emit([EVENT.SENT, 1, 0]) // the head
    expect(seen.some((s) => s[0] === 'drain')).toBe(false)
    queue.emit([EVENT.SENT, 1, 0]) // the big piece
    expect(seen).toContainEqual(['drain', 1])
    expect(attachment.sendBody(1, '0\r\n\r\n', 0)).toBe(true)
    expect(queue.callsOf('sendBody')).toEqual([[1, big, RESPONSE_MORE], [1, '0\r\n\r\n', 0]])
  })

  test('after a 101 with OPAQUE the connection is read and written as a body (upgrade)', async () => {
    const { queue, attachment } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { rawHeaders: ['Host', 'x', 'Upgrade', 'websocket', 'Connection', 'Upgrade'] })])
    expect(attachment.respond(1, 101, 'Switching Protocols', ['Upgrade', 'websocket', 'Connection', 'Upgrade'], null, RESPONSE_OPAQUE)).toBe(true)
    attachment.readBody(1)
    attachment.sendBody(1, Buffer.from([0x81, 0x00]), RESPONSE_MORE)
    expect(queue.callsOf('respond')[0][5]).toBe(RESPONSE_OPAQUE)
    expect(queue.callsOf('readBody')).toEqual([[1]])
    expect(queue.callsOf('sendBody')).toHaveLength(1)
  })

  test('respond(MORE | CLOSE) never asks HTTP.SYS for MORE_DATA with DISCONNECT; the last piece closes', async () => {
    const { queue, attachment } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    attachment.respond(1, 200, 'OK', ['Transfer-Encoding', 'chunked'], null, RESPONSE_MORE | RESPONSE_CLOSE)
    attachment.sendBody(1, '1\r\na\r\n', RESPONSE_MORE | RESPONSE_CLOSE)
    attachment.sendBody(1, '0\r\n\r\n', 0)
    expect(queue.callsOf('respond')[0][5]).toBe(RESPONSE_MORE)
    expect(queue.callsOf('sendBody').map((c) => c[2])).toEqual([RESPONSE_MORE, RESPONSE_CLOSE])
  })

  test('a failed send aborts the request', async () => {
    const { queue, attachment, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    attachment.respond(1, 200, 'OK', [], 'x', RESPONSE_MORE)
    queue.emit([EVENT.SENT, 1, 1236])
    expect(seen).toContainEqual(['abort', 1])
  })

  test('cancel asks HTTP.SYS to cancel the request', async () => {
    const { queue, attachment } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    attachment.cancel(1)
    expect(queue.callsOf('cancel')).toEqual([[1]])
    expect(queue.callsOf('respond')).toHaveLength(0)
  })
})

describe('httpsys backend: a throwing handler costs other requests nothing', () => {
  test('the rest of the batch is delivered, then the error is rethrown on the next tick', async () => {
    const t = setup()
    const boom = new Error('listener threw')
    const seen = []
    const handlers = {
      ...t.handlers,
      onRequest: (req) => {
        seen.push(['request', req.id])
        if (req.id === 1) throw boom
      },
      onBodyEnd: (id) => seen.push(['bodyEnd', id]),
      onAbort: (id) => seen.push(['abort', id]),
      onClose: (err) => seen.push(['close', err])
    }
    await t.backend.attach({ urls: ['http://+:8080/'], handlers })
    const queue = t.binding.queues[0]
    const ticks = []
    const spy = jest.spyOn(process, 'nextTick').mockImplementation((fn, ...args) => ticks.push(() => fn(...args)))
    let escaped = null
    try {
      queue.emit([
        EVENT.REQUEST, 1, fakeRequest(1),
        EVENT.REQUEST, 2, fakeRequest(2, { hasBody: true }),
        EVENT.BODY_END, 2, 0,
        EVENT.ABORT, 2, 1236,
        EVENT.CLOSED, 0, 0
      ])
    } catch (err) {
      escaped = err
    } finally {
      spy.mockRestore()
    }
    expect(escaped).toBe(null) // nothing escapes into the addon's thread-safe function
    expect(seen).toEqual([['request', 1], ['request', 2], ['bodyEnd', 2], ['abort', 2], ['abort', 1],
      ['close', expect.objectContaining({ code: 'ERR_HTTPSYS_QUEUE_CLOSED' })]])
    expect(ticks).toHaveLength(1)
    expect(() => ticks[0]()).toThrow(boom)
  })
})

describe('httpsys backend: without HttpSendResponseEntityBody (Wine)', () => {
  test('a response sent in pieces goes out as one send, chunked framing removed', async () => {
    const { queue, attachment } = await attached({ wine: '8.0' })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    attachment.respond(1, 200, 'OK', ['Content-Type', 'text/plain', 'Transfer-Encoding', 'chunked'], '5\r\nhello\r\n', RESPONSE_MORE)
    attachment.sendBody(1, Buffer.from('6\r\n world\r\n'), RESPONSE_MORE)
    expect(queue.callsOf('respond')).toHaveLength(0)
    attachment.sendBody(1, '0\r\n\r\n', RESPONSE_CLOSE)
    const calls = queue.callsOf('respond')
    expect(calls).toHaveLength(1)
    const [id, status, reason, headers, body, flags] = calls[0]
    expect([id, status, reason, headers, flags]).toEqual([1, 200, 'OK', ['Content-Type', 'text/plain'], RESPONSE_CLOSE])
    expect(Buffer.concat(body).toString()).toBe('hello world')
    expect(queue.callsOf('sendBody')).toHaveLength(0)
  })

  test('a held response asked to close on respond(MORE | CLOSE) closes when sent', async () => {
    const { queue, attachment } = await attached({ wine: '8.0' })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    attachment.respond(1, 200, 'OK', ['Content-Length', '2'], 'a', RESPONSE_MORE | RESPONSE_CLOSE)
    attachment.sendBody(1, 'b', 0)
    expect(queue.callsOf('respond').map((c) => c[5])).toEqual([RESPONSE_CLOSE])
  })

  test('a bodiless answer declared chunked (HEAD) goes without Transfer-Encoding: Wine writes a Content-Length beside it', async () => {
    const { queue, attachment } = await attached({ wine: '8.0' })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { method: 'HEAD' }), EVENT.REQUEST, 2, fakeRequest(2)])
    attachment.respond(1, 200, 'OK', ['Transfer-Encoding', 'chunked', 'X-A', '1'], null, 0)
    attachment.respond(2, 204, 'No Content', ['transfer-encoding', 'chunked'], null, RESPONSE_MORE)
    attachment.sendBody(2, null, 0)
    expect(queue.callsOf('respond').map(([id, status, , headers, body]) => [id, status, headers, Buffer.concat(body).length]))
      .toEqual([[1, 200, ['X-A', '1'], 0], [2, 204, [], 0]])
  })

  test('cancel without HttpCancelHttpRequest ends the exchange with a closing 500', async () => {
    const { queue, attachment } = await attached({ wine: '8.0' })
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    attachment.cancel(1)
    expect(queue.callsOf('respond')).toEqual([[1, 500, 'Internal Server Error', ['Content-Length', '0'], null, RESPONSE_CLOSE, 0]])
  })
})

describe('httpsys backend: detach and close', () => {
  test('detach stops receiving and resolves when the addon confirms', async () => {
    const { queue, attachment } = await attached()
    let done = false
    const p = attachment.detach().then(() => { done = true })
    expect(queue.callsOf('stopReceiving')).toHaveLength(1)
    await Promise.resolve()
    expect(done).toBe(false)
    queue.emit([EVENT.DETACHED, 0, 0])
    await p
    await attachment.detach() // already detached
    expect(queue.callsOf('stopReceiving')).toHaveLength(1)
  })

  test('close cancels what is in flight and reports onClose(null)', async () => {
    const { queue, attachment, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    attachment.close()
    expect(queue.closed).toBe(true)
    queue.emit([EVENT.CLOSED, 0, 0])
    expect(seen.slice(1)).toEqual([['abort', 1], ['close', null]])
  })

  test('close() after a response still in the kernel: the queue handle waits for its SENT (a stop never cuts a download)', async () => {
    const { queue, attachment, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
    attachment.respond(1, 200, 'OK', ['Content-Length', '5'], Buffer.from('hello'), 0)
    attachment.close()
    // closing the handle now would cancel the send and truncate the response
    expect(queue.closed).toBe(false)
    queue.emit([EVENT.SENT, 1, 0])
    expect(queue.closed).toBe(true)
    queue.emit([EVENT.CLOSED, 0, 0])
    expect(seen.filter((x) => x[0] === 'abort')).toEqual([])
    expect(seen[seen.length - 1]).toEqual(['close', null])
  })

  test('close() under the supervisor lets sends in the kernel finish until just before the stop\'s kill (kill_timeout), then closes the handle', async () => {
    // a download to a slow client on a stop with kill_timeout: 60s gets 59.5 s, not 10
    process.env.HTTPSYS_KILL_TIMEOUT = '60000'
    jest.useFakeTimers()
    try {
      const { queue, attachment } = await attached()
      queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
      attachment.respond(1, 200, 'OK', ['Content-Length', '5'], Buffer.from('hello'), 0)
      attachment.close()
      jest.advanceTimersByTime(59499)
      expect(queue.closed).toBe(false)
      jest.advanceTimersByTime(1)
      expect(queue.closed).toBe(true)
    } finally {
      jest.useRealTimers()
      delete process.env.HTTPSYS_KILL_TIMEOUT
    }
  })

  test('close() of a standalone server waits for sends in the kernel as long as they take, as node\'s close() does', async () => {
    jest.useFakeTimers()
    try {
      const { queue, attachment } = await attached()
      queue.emit([EVENT.REQUEST, 1, fakeRequest(1)])
      attachment.respond(1, 200, 'OK', ['Content-Length', '5'], Buffer.from('hello'), 0)
      attachment.close()
      jest.advanceTimersByTime(3600 * 1000)
      expect(queue.closed).toBe(false)
      queue.emit([EVENT.SENT, 1, 0])
      expect(queue.closed).toBe(true)
    } finally {
      jest.useRealTimers()
    }
  })

  test('receiving failing for good closes the attachment with ERR_HTTPSYS_NATIVE_CALL', async () => {
    const { queue, seen } = await attached()
    queue.emit([EVENT.FATAL, 0, 6])
    expect(queue.closed).toBe(true)
    queue.emit([EVENT.CLOSED, 0, 0])
    const [, err] = seen.find((s) => s[0] === 'close')
    expect(err).toMatchObject({ code: 'ERR_HTTPSYS_NATIVE_CALL', syscall: 'HttpReceiveHttpRequest', win32: 6 })
  })

  test('ref/unref reach the addon (server.unref() semantics)', async () => {
    const { queue, attachment } = await attached()
    attachment.unref()
    expect(queue.refed).toBe(false)
    attachment.ref()
    expect(queue.refed).toBe(true)
  })
})

describe('httpsys backend: controller queues (the supervisor)', () => {
  test('createQueue makes a controller queue holding the prefixes', () => {
    const { binding, backend } = setup()
    const q = backend.createQueue('api', { urls: ['http://+:8080/api/'], queueLength: 500 })
    expect(binding.queues[0].options).toMatchObject({ mode: 'controller', name: 'api', urls: ['http://+:8080/api/'] })
    // what HTTP.SYS holds for the queue, read from the bytes the addon passes
    expect(binding.queues[0].kernel).toMatchObject({ active: true, queueLength: 500, verbosity: 'limited', bound: true })
    expect(binding.violations).toEqual([])
    expect(binding.queues[0].started).toBe(false)
    q.addUrl('http://+:8080/v2/')
    expect(q.urls).toEqual(['http://+:8080/api/', 'http://+:8080/v2/'])
    q.close()
    expect(binding.queues[0].closed).toBe(true)
  })

  test('a queue the controller turns off gets 503 from HTTP.SYS at once, and its workers get requests again once it is on', async () => {
    const kernel = createFakeKernel()
    const binding = createFakeAddon({ kernel })
    const backend = createBackend(() => binding)
    const q = backend.createQueue('api', { urls: ['http://+:8080/api/'] })
    const seen = []
    process.env.HTTPSYS_QUEUE_URLS = 'http://+:8080/api/'
    let attachment
    try {
      attachment = await backend.attach({ queue: 'api', urls: [], handlers: { onRequest: (req) => seen.push(req.url), onClose () {} } })
    } finally {
      delete process.env.HTTPSYS_QUEUE_URLS
    }
    kernel.request({ url: '/api/1' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(seen).toEqual(['/api/1'])
    expect(q.setActive(false)).toBe(0)
    expect((await kernel.request({ url: '/api/2' }).response).status).toBe(503)
    expect(q.setActive(true)).toBe(0)
    kernel.request({ url: '/api/3' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(seen).toEqual(['/api/1', '/api/3'])
    expect(binding.violations).toEqual([])
    attachment.close()
  })

  test('createQueue conflicts are coded errors', () => {
    const { binding, backend } = setup()
    binding.fail({ urls: { 'http://+:8080/api/': 183 } })
    expect(() => backend.createQueue('api', { urls: ['http://+:8080/api/'] }))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_URL_CONFLICT', queue: 'api' }))
  })
})
