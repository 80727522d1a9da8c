'use strict'

// A simulated HTTP.SYS under the fake addon (fake-addon.js), so the HTTP.SYS backend's
// JavaScript can run the request-queue contract suite (test/contract/) on Linux. It
// plays the kernel's part with HTTP.SYS's rules: requests go to a started queue that
// holds the URL (a queue opened by name shares its controller's requests), the body is
// delivered one chunk per readBody, `100 Continue` goes out on the first body read,
// every send completes (one SENT event each) a tick later, stopReceiving confirms with
// DETACHED, close ends with CLOSED. Responses are assembled as a client would see them.
//
//   const kernel = createFakeKernel()
//   const addon = createFakeAddon({ kernel })
//   const exchange = kernel.request({ method, url, rawHeaders, body, connectionId })
//   await exchange.response  // { status, reason, rawHeaders, headers, body, closed, reset }

const { EVENT } = require('./fake-addon')

const RESPONSE_MORE = 1
const RESPONSE_CLOSE = 2

function createFakeKernel () {
  const queues = [] // started queues, newest last
  const exchanges = new Map() // id -> exchange
  let nextId = 1
  let nextConnection = 1

  const later = (fn) => setImmediate(fn)

  function emit (queue, events) {
    if (!queue.closed && queue.onEvents !== null) queue.onEvents(events)
  }

  /** The queue a request for `url` goes to: the newest started, receiving one. */
  function pick () {
    for (let i = queues.length - 1; i >= 0; i--) {
      const q = queues[i]
      if (!q.closed && !q.stopped) return q
    }
    return null
  }

  const kernel = {
    started (queue) {
      queue.stopped = false
      queues.push(queue)
    },

    /** A queue call (fake-addon.js record()): returns the Win32 code the addon would. */
    call (queue, name, args) {
      const [id] = args
      const ex = exchanges.get(id)
      switch (name) {
        case 'readBody':
          if (ex === undefined || ex.done) return 1229
          if (ex.expectContinue && !ex.isContinued) ex.isContinued = true
          later(() => {
            if (ex.done) return
            if (ex.chunks.length > 0) emit(queue, [EVENT.BODY, id, ex.chunks.shift()])
            else if (!ex.bodyEnded && !ex.partial) {
              ex.bodyEnded = true
              emit(queue, [EVENT.BODY_END, id, 0])
            }
          })
          return 0
        case 'respond': {
          if (ex === undefined || ex.done) return 1229
          const [, status, reason, rawHeaders, body, flags] = args
          ex.res.status = status
          ex.res.reason = reason
          ex.res.rawHeaders = [...rawHeaders]
          append(ex, body)
          return sent(queue, ex, flags)
        }
        case 'sendBody': {
          if (ex === undefined || ex.done) return 1229
          const [, chunk, flags] = args
          append(ex, chunk)
          return sent(queue, ex, flags)
        }
        case 'cancel':
          if (ex !== undefined && !ex.done) finish(ex, { reset: true })
          return 0
        case 'stopReceiving':
          queue.stopped = true
          later(() => emit(queue, [EVENT.DETACHED, 0, 0]))
          return 0
        case 'close':
          // the requests it held are gone with it; the addon reports CLOSED last
          for (const e of exchanges.values()) {
            if (e.queue === queue && !e.done) finish(e, { reset: true })
          }
          later(() => queue.onEvents && queue.onEvents([EVENT.CLOSED, 0, 0]))
          return 0
      }
      return 0
    },

    /**
     * A client request.
     * @param {object} r { method, url, rawHeaders, body: Buffer|Buffer[], httpVersion, connectionId }
     */
    request (r = {}) {
      const queue = pick()
      const id = nextId++
      const chunks = r.body === undefined ? [] : [].concat(r.body).map((c) => Buffer.from(c))
      const rawHeaders = r.rawHeaders || ['Host', 'localhost']
      const [major, minor] = (r.httpVersion || '1.1').split('.').map(Number)
      const expectValue = headerOf(rawHeaders, 'expect')
      const expect = expectValue === undefined || major !== 1 || minor !== 1
        ? null
        : /^100-continue$/i.test(expectValue.trim()) ? 'continue' : 'other'
      let resolve
      const ex = {
        id,
        queue,
        chunks,
        partial: Boolean(r.partial), // the client sends these chunks and no more
        bodyEnded: chunks.length === 0,
        expectContinue: expect === 'continue',
        isContinued: false,
        done: false,
        res: { status: null, reason: null, rawHeaders: [], body: Buffer.alloc(0), closed: false, reset: false },
        response: new Promise((_resolve) => { resolve = _resolve }),
        resolve,
        /** The client goes away. */
        continued: () => ex.isContinued,
        abort () {
          if (ex.done) return
          finish(ex, { reset: true })
          emit(queue, [EVENT.ABORT, id, 1236])
        }
      }
      exchanges.set(id, ex)
      if (queue === null || (queue.kernel && queue.kernel.active === false)) {
        // HTTP.SYS answers a URL nobody holds with 503 (the app's queue is gone), and at
        // once every request to a queue turned off (HttpEnabledStateInactive)
        ex.res.status = 503
        finish(ex, {})
        return ex
      }
      emit(queue, [EVENT.REQUEST, id, {
        id,
        method: r.method || 'GET',
        url: r.url || '/',
        httpVersionMajor: major,
        httpVersionMinor: minor,
        rawHeaders,
        remoteAddress: '127.0.0.1',
        remotePort: 50000 + (r.connectionId || nextConnection),
        remoteFamily: 'IPv4',
        localAddress: '127.0.0.1',
        localPort: 8080,
        encrypted: false,
        tls: null,
        hasBody: chunks.length > 0 || ex.partial,
        expect,
        connectionId: r.connectionId || nextConnection++,
        keepAlive: !/close/i.test(headerOf(rawHeaders, 'connection') || '')
      }])
      return ex
    }
  }

  function sent (queue, ex, flags) {
    const last = (flags & RESPONSE_MORE) === 0
    if (last && (flags & RESPONSE_CLOSE) !== 0) ex.res.closed = true
    if (last) finish(ex, {})
    later(() => emit(queue, [EVENT.SENT, ex.id, 0]))
    return 0
  }

  function finish (ex, { reset = false }) {
    if (ex.done) return
    ex.done = true
    if (reset) ex.res.reset = true
    ex.res.headers = headerMap(ex.res.rawHeaders)
    // what a client reads: the chunked framing src/http wrote is the wire's, not the body's
    if (!reset && /\bchunked\b/i.test(ex.res.headers['transfer-encoding'] || '')) ex.res.body = unchunk(ex.res.body)
    ex.resolve(ex.res)
  }

  return kernel
}

function append (ex, body) {
  if (body === null || body === undefined) return
  const parts = Array.isArray(body) ? body : [body]
  for (const part of parts) {
    const b = typeof part === 'string' ? Buffer.from(part, 'utf8') : Buffer.from(part)
    ex.res.body = Buffer.concat([ex.res.body, b])
  }
}

function unchunk (buf) {
  const parts = []
  let p = 0
  for (;;) {
    const eol = buf.indexOf('\r\n', p, 'latin1')
    if (eol === -1) throw new Error('bad chunked framing: no size line')
    const size = parseInt(buf.latin1Slice(p, eol), 16)
    if (Number.isNaN(size)) throw new Error('bad chunked framing: size')
    if (size === 0) return Buffer.concat(parts)
    parts.push(buf.subarray(eol + 2, eol + 2 + size))
    p = eol + 2 + size + 2
  }
}

function headerOf (raw, name) {
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].toLowerCase() === name) return raw[i + 1]
  }
  return undefined
}

function headerMap (raw) {
  const out = {}
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i].toLowerCase()
    out[k] = out[k] === undefined ? raw[i + 1] : [].concat(out[k], raw[i + 1])
  }
  return out
}

module.exports = { createFakeKernel }
