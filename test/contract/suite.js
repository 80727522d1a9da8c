'use strict'

// The request-queue contract (src/wire/contract.js), checked against every backend with
// the same tests: the hub (through the hub client), the HTTP.SYS backend's JavaScript
// over a simulated kernel (fake-kernel.js), and the real addon in Windows node.exe under
// Wine (test/windows). A backend feature is written once and checked on both routers.
//
// The tests are plain async functions using node:assert, so jest and the Wine runner
// both run them. An environment gives:
//   name
//   features     what this router can show; a test that needs a missing one is skipped:
//                window        the response window fills and reopens (streamed sends)
//                cancelResets  cancel() resets the connection
//                sharedQueue   a second attachment can open the queue
//                routerRules   requests reach the router as the test writes them, so the
//                              router's own rules on methods and targets can be checked
//                largeBodies   request bodies of hundreds of KB arrive
//                expect        100 Continue and Expect headers reach the router as sent
//                closeHonoured RESPONSE_CLOSE closes the connection
//                disconnectNotice  a client that goes away is noticed at once
//                closeAnswersPending  closing the queue answers (or resets) a pending request
//                absoluteForm  an absolute-form request reaches the router whatever its Host
//   attach({ handlers, queue?, urls? }) -> Promise<Attachment>  (env picks the prefix)
//   request(r)   one client exchange: r = { method, url, rawHeaders, body, connectionId }
//                -> { response: Promise<{ status, reason, rawHeaders, headers, body,
//                     closed, reset }>, abort(), continued() }
//   cleanup()    after each test

const assert = require('node:assert/strict')
const crypto = require('node:crypto')

const RESPONSE_MORE = 1
const RESPONSE_CLOSE = 2

/** Handlers that record every callback; `until(pred)` waits for a state. */
function recorder (extra = {}) {
  const events = []
  const waiters = []
  const check = () => {
    for (const w of waiters.slice()) {
      if (w.pred(events)) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(events)
      }
    }
  }
  const push = (e) => {
    events.push(e)
    check()
  }
  const handlers = {
    onRequest: (req) => { push(['request', req]); if (extra.onRequest) extra.onRequest(req) },
    onBody: (id, chunk) => { push(['body', id, chunk]); if (extra.onBody) extra.onBody(id, chunk) },
    onBodyEnd: (id) => { push(['bodyEnd', id]); if (extra.onBodyEnd) extra.onBodyEnd(id) },
    onAbort: (id) => push(['abort', id]),
    onDrain: (id) => { push(['drain', id]); if (extra.onDrain) extra.onDrain(id) },
    onClose: (err) => push(['close', err])
  }
  return {
    events,
    handlers,
    of: (type) => events.filter((e) => e[0] === type),
    until (pred, ms = 5000, what = 'the expected callbacks') {
      if (pred(events)) return Promise.resolve(events)
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${events.map((e) => e[0]).join(', ') || 'nothing'}`)), ms)
        waiters.push({ pred, resolve: (v) => { clearTimeout(timer); resolve(v) } })
      })
    }
  }
}

const requests = (events) => events.filter((e) => e[0] === 'request').map((e) => e[1])
const sha = (b) => crypto.createHash('sha256').update(b).digest('hex')
const delay = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** @returns {{name: string, needs?: string, fn: (env) => Promise<void>}[]} */
function contractTests () {
  const tests = []
  const test = (name, fn, needs) => tests.push({ name, fn, needs })

  test('attach() resolves with the queue as bound: urls and numeric ports', async (env) => {
    const r = recorder()
    const a = await env.attach({ handlers: r.handlers })
    assert.ok(Array.isArray(a.info.urls) && a.info.urls.length > 0, 'info.urls')
    assert.ok(a.info.ports.length > 0 && a.info.ports.every((p) => Number.isInteger(p) && p > 0), `info.ports ${a.info.ports}`)
    for (const name of ['readBody', 'respond', 'sendBody', 'writeContinue', 'cancel', 'detach', 'close', 'ref', 'unref']) {
      assert.equal(typeof a[name], 'function', `Attachment.${name}`)
    }
  })

  test('a request arrives as a QueueRequest: raw url, headers in order with repeats, no body', async (env) => {
    const r = recorder({
      onRequest: (req) => a.respond(req.id, 200, 'OK', ['Content-Length', '2'], 'ok', 0)
    })
    const a = await env.attach({ handlers: r.handlers })
    const ex = env.request({ url: '/q/a%2Fb?x=%20y&x=2', rawHeaders: ['Host', 'localhost', 'X-A', '1', 'X-B', '2', 'X-A', '3'] })
    const res = await ex.response
    assert.equal(res.status, 200)
    const [req] = requests(r.events)
    assert.equal(req.method, 'GET')
    assert.equal(req.url, '/q/a%2Fb?x=%20y&x=2')
    assert.equal(req.httpVersionMajor, 1)
    assert.equal(req.httpVersionMinor, 1)
    assert.equal(req.hasBody, false)
    assert.equal(req.expect, null)
    assert.equal(req.keepAlive, true)
    assert.equal(req.encrypted, false)
    assert.equal(typeof req.id, 'number')
    assert.equal(typeof req.connectionId, 'number')
    assert.equal(typeof req.remoteAddress, 'string')
    const pairs = []
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      if (/^x-/i.test(req.rawHeaders[i])) pairs.push(`${req.rawHeaders[i].toLowerCase()}=${req.rawHeaders[i + 1]}`)
    }
    assert.deepEqual(pairs, ['x-a=1', 'x-b=2', 'x-a=3'])
    assert.equal(r.of('body').length + r.of('bodyEnd').length, 0, 'no body callback for a request without a body')
  })

  test('one respond() is the whole response: status, standard reason, repeated Set-Cookie, utf8 string body', async (env) => {
    const body = 'h\u00e9llo \u{1F600}'
    const r = recorder({
      onRequest: (req) => a.respond(req.id, 404, '', ['Content-Length', String(Buffer.byteLength(body)), 'Set-Cookie', 'a=1', 'Set-Cookie', 'b=2'], body, 0)
    })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: '/x' }).response
    assert.equal(res.status, 404)
    assert.equal(res.reason, 'Not Found')
    assert.deepEqual([].concat(res.headers['set-cookie']), ['a=1', 'b=2'])
    assert.equal(res.body.toString('utf8'), body)
    // a second respond() for the same id is ignored
    assert.equal(a.respond(requests(r.events)[0].id, 500, '', [], null, 0), true)
  })

  test('a request body arrives whole through readBody(), then onBodyEnd once', async (env) => {
    const body = crypto.randomBytes(env.features.largeBodies === false ? 64 * 1024 : 300 * 1024)
    const parts = []
    const r = recorder({
      onRequest: (req) => a.readBody(req.id),
      onBody: (id, chunk) => { parts.push(chunk); a.readBody(id) },
      onBodyEnd: (id) => {
        const got = Buffer.concat(parts)
        const json = JSON.stringify({ length: got.length, sha: sha(got) })
        a.respond(id, 200, 'OK', ['Content-Type', 'application/json', 'Content-Length', String(json.length)], json, 0)
      }
    })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ method: 'POST', url: '/upload', rawHeaders: ['Host', 'localhost', 'Content-Length', String(body.length)], body }).response
    assert.equal(res.status, 200)
    assert.deepEqual(JSON.parse(res.body), { length: body.length, sha: sha(body) })
    assert.equal(requests(r.events)[0].hasBody, true)
    assert.equal(r.of('bodyEnd').length, 1)
  })

  test('Expect: 100-continue is reported as expect "continue"; the client gets 100 when the body is asked for', async (env) => {
    let ex = null
    let continuedBeforeRead = null
    const parts = []
    const r = recorder({
      onRequest: (req) => {
        // nothing asked yet: the client must still be waiting
        setTimeout(() => {
          continuedBeforeRead = ex.continued()
          a.writeContinue(req.id)
          a.readBody(req.id)
        }, 100)
      },
      onBody: (id, chunk) => { parts.push(chunk); a.readBody(id) },
      onBodyEnd: (id) => a.respond(id, 200, 'OK', ['Content-Length', String(Buffer.concat(parts).length)], Buffer.concat(parts), 0)
    })
    const a = await env.attach({ handlers: r.handlers })
    ex = env.request({ method: 'PUT', url: '/c', rawHeaders: ['Host', 'localhost', 'Expect', '100-continue', 'Content-Length', '5'], body: Buffer.from('hello') })
    const res = await ex.response
    assert.equal(requests(r.events)[0].expect, 'continue')
    assert.equal(continuedBeforeRead, false, '100 Continue went out before the body was asked for')
    assert.equal(ex.continued(), true, 'no 100 Continue reached the client')
    assert.equal(res.body.toString(), 'hello')
  }, 'expect')

  test('another expectation is reported as expect "other"', async (env) => {
    const r = recorder({ onRequest: (req) => a.respond(req.id, 417, '', ['Content-Length', '0'], null, RESPONSE_CLOSE) })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: '/e', rawHeaders: ['Host', 'localhost', 'Expect', 'x-bogus'] }).response
    assert.equal(requests(r.events)[0].expect, 'other')
    assert.equal(res.status, 417)
  }, 'expect')

  test('a response in pieces: respond(MORE) then sendBody() pieces arrive in order', async (env) => {
    const pieces = ['first,', 'second,', 'third']
    const r = recorder({
      onRequest: (req) => {
        a.respond(req.id, 200, 'OK', ['Content-Type', 'text/plain', 'Transfer-Encoding', 'chunked'], chunk(pieces[0]), RESPONSE_MORE)
        setTimeout(() => {
          a.sendBody(req.id, chunk(pieces[1]), RESPONSE_MORE)
          a.sendBody(req.id, Buffer.from(chunk(pieces[2]) + '0\r\n\r\n'), 0)
        }, 20)
      }
    })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: '/pieces' }).response
    assert.equal(res.status, 200)
    assert.equal(res.body.toString(), pieces.join(''))
  })

  test('the response window: sendBody() returns false when full and onDrain reopens it', async (env) => {
    const piece = Buffer.alloc(64 * 1024, 'x')
    let total = 0
    let sawFull = false
    let drained = 0
    const r = recorder({
      onRequest: (req) => {
        a.respond(req.id, 200, 'OK', ['Content-Length', String(40 * piece.length)], null, RESPONSE_MORE)
        pump(req.id)
      },
      onDrain: (id) => { drained++; pump(id) }
    })
    function pump (id) {
      while (total < 40 * piece.length) {
        total += piece.length
        const ok = a.sendBody(id, piece, total < 40 * piece.length ? RESPONSE_MORE : 0)
        if (!ok) {
          sawFull = true
          return
        }
      }
    }
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: '/big' }).response
    assert.equal(res.body.length, 40 * piece.length)
    assert.ok(sawFull, 'sendBody() never reported a full window for 2.5 MB')
    assert.ok(drained > 0, 'onDrain never came')
  }, 'window')

  test('RESPONSE_CLOSE closes the client connection after the response', async (env) => {
    const r = recorder({ onRequest: (req) => a.respond(req.id, 200, 'OK', ['Content-Length', '3'], 'bye', RESPONSE_CLOSE) })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: '/close' }).response
    assert.equal(res.body.toString(), 'bye')
    assert.equal(res.closed, true, 'the connection stayed open')
  }, 'closeHonoured')

  test('a client that goes away mid-body: onAbort once, and the id is dead', async (env) => {
    let ex = null
    const r = recorder({
      onRequest: (req) => a.readBody(req.id),
      onBody: () => ex.abort()
    })
    const a = await env.attach({ handlers: r.handlers })
    ex = env.request({ method: 'POST', url: '/abort', rawHeaders: ['Host', 'localhost', 'Content-Length', '100000'], body: [Buffer.alloc(1000, 'a')], partial: true })
    await r.until((ev) => ev.some((e) => e[0] === 'abort'), 5000, 'onAbort')
    await delay(50)
    const id = requests(r.events)[0].id
    assert.equal(r.of('abort').length, 1)
    assert.equal(a.respond(id, 200, 'OK', [], null, 0), true, 'respond() after onAbort must be a no-op')
    a.readBody(id)
    await delay(50)
    assert.equal(r.events.filter((e) => e[1] === id && (e[0] === 'body' || e[0] === 'bodyEnd')).length, r.of('body').length + r.of('bodyEnd').length)
  }, 'disconnectNotice')

  test('cancel() resets the client; no onAbort for it', async (env) => {
    const r = recorder({ onRequest: (req) => setTimeout(() => a.cancel(req.id), 10) })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: '/cancel' }).response
    if (env.features.cancelResets) assert.equal(res.reset, true, `expected a reset, got ${res.status}`)
    else assert.ok(res.reset || (res.status === 500 && (res.closed || env.features.closeHonoured === false)), `expected a reset or a closing 500, got ${res.status}`)
    await delay(50)
    assert.equal(r.of('abort').length, 0)
  })

  test('detach(): resolves; later requests stay in the queue for another attachment', async (env) => {
    const first = recorder({ onRequest: (req) => first.a.respond(req.id, 200, 'OK', ['Content-Length', '5'], 'first', 0) })
    first.a = await env.attach({ handlers: first.handlers, shared: true })
    assert.equal((await env.request({ url: '/d' }).response).body.toString(), 'first')
    await first.a.detach()
    await first.a.detach() // again: same answer
    const second = recorder({ onRequest: (req) => second.a.respond(req.id, 200, 'OK', ['Content-Length', '6'], 'second', 0) })
    second.a = await env.attach({ handlers: second.handlers, shared: true })
    const res = await env.request({ url: '/d' }).response
    assert.equal(res.body.toString(), 'second')
    assert.equal(first.of('request').length, 1, 'a detached attachment received a new request')
  }, 'sharedQueue')

  test('close(): unanswered requests get onAbort, then onClose(null) once; close and detach again are harmless', async (env) => {
    const r = recorder()
    const a = await env.attach({ handlers: r.handlers })
    const ex = env.request({ url: '/pending' })
    await r.until((ev) => ev.some((e) => e[0] === 'request'), 5000, 'the request')
    a.close()
    a.close()
    await r.until((ev) => ev.some((e) => e[0] === 'close'), 5000, 'onClose')
    const types = r.events.map((e) => e[0])
    assert.deepEqual(types, ['request', 'abort', 'close'])
    assert.equal(r.of('close')[0][1], null)
    await a.detach()
    assert.equal(a.respond(requests(r.events)[0].id, 200, 'OK', [], null, 0), true)
    // the client is answered or reset, never left waiting (Wine's http.sys leaves it)
    if (env.features.closeAnswersPending !== false) await ex.response
  })

  test('close() right after a large response: the response is still delivered whole', async (env) => {
    const big = crypto.randomBytes(1024 * 1024)
    const r = recorder({
      onRequest: (req) => {
        a.respond(req.id, 200, 'OK', ['Content-Length', String(big.length)], big, 0)
        a.close()
      }
    })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: '/last' }).response
    assert.equal(res.reset, false)
    assert.equal(sha(res.body), sha(big))
    await r.until((ev) => ev.some((e) => e[0] === 'close'), 15000, 'onClose')
  })

  test('ref() and unref() can be called any time', async (env) => {
    const r = recorder()
    const a = await env.attach({ handlers: r.handlers })
    a.unref()
    a.unref()
    a.ref()
    a.close()
    await r.until((ev) => ev.some((e) => e[0] === 'close'), 5000, 'onClose')
    a.ref()
    a.unref()
  })

  // README "The router's rules": what a router hands an app, the same on both. HTTP.SYS
  // passes unknown verbs and raw URLs through; the worker's attachment applies these.
  const rules = (name, fn, needs = 'routerRules') => test(`router rule: ${name}`, fn, needs)

  rules('a method node does not know is 400 and never reaches the app', async (env) => {
    const r = recorder({ onRequest: (req) => a.respond(req.id, 200, 'OK', ['Content-Length', '2'], 'ok', 0) })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ method: 'BREW', url: '/pot' }).response
    assert.equal(res.status, 400)
    assert.equal(res.closed, true)
    assert.equal(requests(r.events).length, 0)
  })

  rules('the app sees the path the router routed on: dot segments, backslashes and escaped unreserved characters resolved; case, other escapes and the query kept', async (env) => {
    const r = recorder({ onRequest: (req) => a.respond(req.id, 200, 'OK', ['Content-Length', '2'], 'ok', 0) })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: '/api/../Admin/./%2e%2e/Admin\\%78/a%2Fb%7e?next=/../%2e' }).response
    assert.equal(res.status, 200)
    assert.equal(requests(r.events)[0].url, '/Admin/x/a%2Fb~?next=/../%2e')
  })

  rules('an absolute-form target: the app gets origin-form, and the Host the target names', async (env) => {
    const r = recorder({ onRequest: (req) => a.respond(req.id, 200, 'OK', ['Content-Length', '2'], 'ok', 0) })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: 'http://internal.local/reset?u=1', rawHeaders: ['Host', 'evil.example', 'X-A', '1'] }).response
    assert.equal(res.status, 200)
    const [req] = requests(r.events)
    assert.equal(req.url, '/reset?u=1')
    const hosts = []
    for (let i = 0; i < req.rawHeaders.length; i += 2) if (/^host$/i.test(req.rawHeaders[i])) hosts.push(req.rawHeaders[i + 1])
    assert.deepEqual(hosts, ['internal.local'])
  }, 'absoluteForm')

  rules('a target that cannot be canonicalised is 400 and never reaches the app', async (env) => {
    const r = recorder({ onRequest: (req) => a.respond(req.id, 200, 'OK', ['Content-Length', '2'], 'ok', 0) })
    const a = await env.attach({ handlers: r.handlers })
    const res = await env.request({ url: '/x%zz' }).response
    assert.equal(res.status, 400)
    assert.equal(requests(r.events).length, 0)
  })

  return tests
}

function chunk (s) {
  return `${Buffer.byteLength(s).toString(16)}\r\n${s}\r\n`
}

module.exports = { contractTests, recorder }
