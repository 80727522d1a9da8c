'use strict'

// An in-memory request-queue backend (src/wire/contract.js) for the unit tests of
// src/http. It records every call src/http makes (respond, sendBody, readBody,
// writeContinue, cancel, detach, close) and lets a test inject requests, body chunks,
// aborts, drains and router failures. Handlers are never called re-entrantly from
// inside an attachment method: deliveries triggered by a call wait for setImmediate,
// as the contract requires.

const { RESPONSE_MORE, RESPONSE_CLOSE } = require('../../src/wire/contract')

const tick = () => new Promise((resolve) => setImmediate(resolve))

/**
 * @param {object} [opts]
 * @param {number[]} [opts.ports=[41234]] what attachment.info.ports reports
 * @param {Error} [opts.attachError] attach() rejects with it
 * @param {number} [opts.initialWindow=0] body chunks delivered before the first readBody
 */
function createMemoryQueue (opts = {}) {
  const mq = {
    calls: [],
    attachOptions: null,
    attachment: null,
    handlers: null,
    /** what respond()/sendBody() return: false closes the window */
    window: true,
    requests: new Map(),
    nextId: 1,
    backend: { attach },
    request,
    fail,
    tick,
    callsOf (op, id) {
      return mq.calls.filter((c) => c.op === op && (id === undefined || c.id === id))
    }
  }

  function attach (options) {
    mq.attachOptions = options
    mq.calls.push({ op: 'attach', queue: options.queue, urls: options.urls })
    if (opts.attachError) return Promise.reject(opts.attachError)
    mq.handlers = options.handlers
    mq.attachment = new MemoryAttachment(mq, {
      queue: options.queue || 'standalone',
      urls: options.urls || [],
      ports: opts.ports || [41234]
    }, opts.initialWindow || 0)
    return tick().then(() => mq.attachment)
  }

  /**
   * Injects a request. `body` (string, Buffer or an array of them) makes hasBody true;
   * the chunks are delivered one per readBody() unless `manualBody` is set, in which
   * case the test calls handle.body(chunk) / handle.end() itself.
   */
  function request (r = {}) {
    if (mq.handlers === null) throw new Error('attach first (server.listen())')
    const id = mq.nextId++
    const chunks = r.body === undefined ? [] : [].concat(r.body).map((c) => Buffer.from(c))
    const hasBody = r.hasBody !== undefined ? r.hasBody : r.body !== undefined
    const [major, minor] = (r.httpVersion || '1.1').split('.').map(Number)
    const q = {
      id,
      method: r.method || 'GET',
      url: r.url || '/',
      httpVersionMajor: major,
      httpVersionMinor: minor,
      rawHeaders: r.rawHeaders || ['Host', 'localhost'],
      remoteAddress: r.remoteAddress || '127.0.0.1',
      remotePort: r.remotePort || 50000 + id,
      localAddress: '127.0.0.1',
      localPort: 41234,
      remoteFamily: 'IPv4',
      encrypted: Boolean(r.encrypted),
      tls: r.tls || null,
      hasBody,
      connectionId: r.connectionId || id,
      keepAlive: r.keepAlive !== undefined ? r.keepAlive : true,
      expect: null
    }
    // as both routers do: what an HTTP/1.1 Expect header asks for
    const expect = headerMap(q.rawHeaders).expect
    if (expect !== undefined && major === 1 && minor === 1) {
      q.expect = /^100-continue$/i.test(String(expect).trim()) ? 'continue' : 'other'
    }
    let resolveDone
    const handle = {
      id,
      q,
      chunks,
      manualBody: Boolean(r.manualBody),
      bodyEnded: !hasBody,
      live: true,
      readBodyCalls: 0,
      response: {
        statusCode: null,
        statusMessage: null,
        rawHeaders: null,
        headers: null,
        raw: Buffer.alloc(0),
        flags: [],
        ended: false,
        cancelled: false,
        aborted: false,
        continues: 0,
        respondCalls: 0,
        sendBodyCalls: 0
      },
      done: new Promise((resolve) => { resolveDone = resolve }),
      finish () { handle.live = false; resolveDone(handle.response) },
      body (chunk) { mq.handlers.onBody(id, Buffer.from(chunk)) },
      end () { handle.bodyEnded = true; mq.handlers.onBodyEnd(id) },
      abort () {
        if (!handle.live) return
        handle.response.aborted = true
        handle.finish()
        mq.handlers.onAbort(id)
      },
      drain () { mq.handlers.onDrain(id) },
      /** the body as a client would read it (chunked framing removed) */
      get text () { return decode(handle.response).toString('utf8') }
    }
    mq.requests.set(id, handle)
    mq.handlers.onRequest(q)
    return handle
  }

  /** The router goes away: every live request is aborted, then onClose(err). */
  function fail (err) {
    for (const h of mq.requests.values()) {
      if (h.live) {
        h.response.aborted = true
        h.finish()
        mq.handlers.onAbort(h.id)
      }
    }
    mq.handlers.onClose(err)
  }

  return mq
}

class MemoryAttachment {
  constructor (mq, info, initialWindow) {
    this.mq = mq
    this.info = info
    this.closed = false
    this.detached = false
    this.initialWindow = initialWindow
  }

  readBody (id) {
    const mq = this.mq
    mq.calls.push({ op: 'readBody', id })
    const h = mq.requests.get(id)
    if (!h || !h.live) return
    h.readBodyCalls++
    if (h.manualBody || h.bodyEnded) return
    setImmediate(() => {
      if (!h.live || h.bodyEnded) return
      if (h.chunks.length > 0) mq.handlers.onBody(id, h.chunks.shift())
      else {
        h.bodyEnded = true
        mq.handlers.onBodyEnd(id)
      }
    })
  }

  respond (id, statusCode, statusMessage, rawHeaders, body, flags = 0, cacheTtl = 0) {
    const mq = this.mq
    mq.calls.push({ op: 'respond', id, statusCode, statusMessage, rawHeaders: rawHeaders && [...rawHeaders], body, flags, cacheTtl })
    const h = mq.requests.get(id)
    if (!h || !h.live) return true
    const r = h.response
    if (r.respondCalls++ > 0) throw new Error(`respond() called twice for request ${id}`)
    r.statusCode = statusCode
    r.statusMessage = statusMessage
    r.rawHeaders = [...rawHeaders]
    r.headers = headerMap(rawHeaders)
    r.flags.push(flags)
    append(r, body)
    if ((flags & RESPONSE_MORE) === 0) {
      r.ended = true
      h.finish()
    }
    return mq.window
  }

  sendBody (id, chunk, flags = 0) {
    const mq = this.mq
    mq.calls.push({ op: 'sendBody', id, body: chunk, flags })
    const h = mq.requests.get(id)
    if (!h || !h.live) return true
    const r = h.response
    if (r.respondCalls === 0) throw new Error(`sendBody() before respond() for request ${id}`)
    r.sendBodyCalls++
    r.flags.push(flags)
    append(r, chunk)
    if ((flags & RESPONSE_MORE) === 0) {
      r.ended = true
      h.finish()
    }
    return mq.window
  }

  writeContinue (id) {
    this.mq.calls.push({ op: 'writeContinue', id })
    const h = this.mq.requests.get(id)
    if (h) h.response.continues++
  }

  cancel (id) {
    this.mq.calls.push({ op: 'cancel', id })
    const h = this.mq.requests.get(id)
    if (h && h.live) {
      h.response.cancelled = true
      h.finish()
    }
  }

  detach () {
    this.mq.calls.push({ op: 'detach' })
    this.detached = true
    return tick()
  }

  close () {
    const mq = this.mq
    mq.calls.push({ op: 'close' })
    if (this.closed) return
    this.closed = true
    setImmediate(() => {
      for (const h of mq.requests.values()) {
        if (h.live) {
          h.response.cancelled = true
          h.finish()
          mq.handlers.onAbort(h.id)
        }
      }
      mq.handlers.onClose(null)
    })
  }
}

function append (r, body) {
  if (body === null || body === undefined) return
  const b = typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body)
  r.raw = Buffer.concat([r.raw, b])
}

function headerMap (raw) {
  const out = {}
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i].toLowerCase()
    if (out[k] === undefined) out[k] = raw[i + 1]
    else out[k] = [].concat(out[k], raw[i + 1])
  }
  return out
}

/** Removes chunked framing (strictly: a framing error throws). */
function decode (r) {
  const te = r.headers && r.headers['transfer-encoding']
  if (!te || !/chunked/i.test(te)) return r.raw
  const b = r.raw
  const out = []
  let p = 0
  for (;;) {
    const eol = b.indexOf('\r\n', p)
    if (eol === -1) throw new Error('bad chunked framing: no size line')
    const size = parseInt(b.latin1Slice(p, eol), 16)
    if (Number.isNaN(size)) throw new Error('bad chunked framing: size')
    p = eol + 2
    if (size === 0) break
    out.push(b.subarray(p, p + size))
    p += size
    if (b.latin1Slice(p, p + 2) !== '\r\n') throw new Error('bad chunked framing: chunk end')
    p += 2
  }
  return Buffer.concat(out)
}

module.exports = { createMemoryQueue, RESPONSE_MORE, RESPONSE_CLOSE, tick }
