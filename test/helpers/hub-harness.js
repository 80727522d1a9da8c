'use strict'

// Shared pieces for the router tests (the router itself: native-router.js
// startNativeRouter): in-process workers written against src/queue/hub-client.js, and
// raw-socket HTTP helpers (so a test can prove what happens on ONE connection, which
// node's http client hides).

const os = require('node:os')
const path = require('node:path')
const net = require('node:net')
const tls = require('node:tls')
const http = require('node:http')
const crypto = require('node:crypto')
const pino = require('pino')
const hubClient = require('../../src/queue/hub-client')

const quiet = pino({ level: 'silent' })

function socketPath () {
  return path.join(os.tmpdir(), `httpsys-test-${process.pid}-${crypto.randomBytes(4).toString('hex')}.sock`)
}

/**
 * A worker attached to `queue` that collects each request's body (reading as it goes
 * unless autoRead is false) and then calls handle(req, body, worker).
 * @returns {Promise<object>} { att, requests, aborted, closed, byId, read(id) }
 */
async function startWorker (hub, { queue, urls, token, handle, autoRead = true, onRequest, onDrain } = {}) {
  const w = {
    att: null,
    requests: [],
    aborted: [],
    drains: [],
    closed: [],
    byId: new Map(),
    chunks: new Map(),
    received: new Map() // id -> body bytes received so far
  }
  const finish = (req) => {
    const body = Buffer.concat(w.chunks.get(req.id) || [])
    w.chunks.delete(req.id)
    if (handle) handle(req, body, w)
  }
  w.att = await hubClient.attach({
    socketPath: hub.socketPath,
    queue,
    urls,
    token,
    handlers: {
      onRequest (req) {
        w.requests.push(req)
        w.byId.set(req.id, req)
        if (onRequest) return onRequest(req, w)
        if (!req.hasBody) return finish(req)
        w.chunks.set(req.id, [])
        w.received.set(req.id, 0)
        if (autoRead) w.att.readBody(req.id)
      },
      onBody (id, chunk) {
        const list = w.chunks.get(id)
        if (list) list.push(Buffer.from(chunk))
        w.received.set(id, (w.received.get(id) || 0) + chunk.length)
        if (autoRead) w.att.readBody(id)
      },
      onBodyEnd (id) {
        const req = w.byId.get(id)
        if (req && w.chunks.has(id)) finish(req)
      },
      onAbort (id) { w.aborted.push(id) },
      onDrain (id) {
        w.drains.push(id)
        if (onDrain) onDrain(id, w)
      },
      onClose (err) { w.closed.push(err) }
    }
  })
  return w
}

/** Answers text with Content-Length. */
function reply (w, req, status, text, headers = []) {
  const body = Buffer.from(text)
  w.att.respond(req.id, status, http.STATUS_CODES[status], ['Content-Type', 'text/plain', 'Content-Length', String(body.length), ...headers], body, 0)
}

/** One request with node's client on a fresh connection. */
function request (port, { method = 'GET', path: p = '/', headers = {}, body = null, host = '127.0.0.1' } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, method, path: p, headers, agent: false }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * A raw client connection that splits what it receives into HTTP responses
 * (Content-Length or chunked framing, HEAD-less). With `tls` (tls.connect options:
 * servername, ALPNProtocols...), over TLS: the bytes written are still exactly the
 * request the server parses; `connected` resolves once the handshake is done.
 */
class RawClient {
  constructor (port, { tls: tlsOptions = null } = {}) {
    this.socket = tlsOptions === null
      ? net.connect(port, '127.0.0.1')
      : tls.connect({ port, host: '127.0.0.1', rejectUnauthorized: false, ...tlsOptions })
    this.buf = Buffer.alloc(0)
    this.responses = []
    this.waiters = []
    this.ended = false
    this.connected = new Promise((resolve, reject) => {
      this.socket.once(tlsOptions === null ? 'connect' : 'secureConnect', resolve)
      this.socket.once('error', reject)
    })
    this.socket.on('error', () => {})
    this.socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d])
      this.parse()
    })
    this.socket.on('close', () => {
      this.ended = true
      this.wake()
    })
  }

  write (text) {
    this.socket.write(text)
  }

  parse () {
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n')
      if (end === -1) return
      const head = this.buf.subarray(0, end).toString('latin1')
      const lines = head.split('\r\n')
      const status = Number(lines[0].split(' ')[1])
      const headers = {}
      for (const line of lines.slice(1)) {
        const i = line.indexOf(':')
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim()
      }
      let bodyEnd
      let body
      if (status === 100) {
        this.responses.push({ status, headers, body: Buffer.alloc(0), head })
        this.buf = this.buf.subarray(end + 4)
        continue
      }
      if (headers['transfer-encoding'] === 'chunked') {
        const parts = []
        let p = end + 4
        for (;;) {
          const le = this.buf.indexOf('\r\n', p)
          if (le === -1) return
          const size = parseInt(this.buf.subarray(p, le).toString(), 16)
          if (this.buf.length < le + 2 + size + 2) return
          parts.push(this.buf.subarray(le + 2, le + 2 + size))
          p = le + 2 + size + 2
          if (size === 0) break
        }
        body = Buffer.concat(parts)
        bodyEnd = p
      } else {
        const len = Number(headers['content-length'] || 0)
        if (this.buf.length < end + 4 + len) return
        body = this.buf.subarray(end + 4, end + 4 + len)
        bodyEnd = end + 4 + len
      }
      this.responses.push({ status, headers, body: Buffer.from(body), head })
      this.buf = this.buf.subarray(bodyEnd)
      this.wake()
    }
  }

  wake () {
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w()
  }

  /** Resolves with the first n responses (rejects after timeoutMs). */
  async waitFor (n, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs
    while (this.responses.length < n) {
      if (this.ended) throw new Error(`connection closed after ${this.responses.length} of ${n} responses`)
      if (Date.now() > deadline) throw new Error(`timed out after ${this.responses.length} of ${n} responses`)
      await new Promise((resolve) => {
        this.waiters.push(resolve)
        setTimeout(resolve, 50)
      })
    }
    return this.responses.slice(0, n)
  }

  /** Resolves when the server closed the connection. */
  async waitClosed (timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('connection still open')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  close () {
    this.socket.destroy()
  }
}

/** Polls until fn() is truthy (bounded). */
async function until (fn, timeoutMs = 5000, what = 'condition') {
  const deadline = Date.now() + timeoutMs
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

module.exports = { startWorker, reply, request, RawClient, until, socketPath, quiet }
