'use strict'

// The time to live a GET response goes to the router with (respond()'s cacheTtl, from
// src/cache/rules.js): whichever way the app made its head.

const { start, stopAll, settle } = require('./start')

afterEach(() => {
  delete process.env.HTTPSYS_CACHE
  return stopAll()
})

/** The cacheTtl of the one respond() for a GET of `url` answered by `handler`. */
async function ttlOf (handler, url = '/') {
  const { mq } = await start(handler)
  const h = mq.request({ method: 'GET', url })
  await settle()
  const calls = mq.calls.filter((c) => c.op === 'respond' && c.id === h.id)
  expect(calls).toHaveLength(1)
  return calls[0].cacheTtl
}

describe('the time to live respond() carries', () => {
  test('none without Cache-Control or a rule', async () => {
    expect(await ttlOf((req, res) => res.end('x'))).toBe(0)
    expect(await ttlOf((req, res) => res.writeHead(200, { 'Content-Type': 'text/plain' }).end('x'))).toBe(0)
  })

  test('Cache-Control from setHeader(), writeHead() (object, flat and nested arrays) and appendHeader()', async () => {
    const cc = 'public, max-age=7'
    expect(await ttlOf((req, res) => { res.setHeader('Cache-Control', cc); res.end('x') })).toBe(7)
    expect(await ttlOf((req, res) => res.writeHead(200, { 'cache-control': cc }).end('x'))).toBe(7)
    expect(await ttlOf((req, res) => res.writeHead(200, ['Cache-Control', cc]).end('x'))).toBe(7)
    expect(await ttlOf((req, res) => res.writeHead(200, [['CACHE-CONTROL', cc]]).end('x'))).toBe(7)
    expect(await ttlOf((req, res) => { res.setHeader('X-A', '1'); res.writeHead(200, ['Cache-Control', cc]).end('x') })).toBe(7)
    expect(await ttlOf((req, res) => { res.appendHeader('Cache-Control', cc); res.write('x'); res.end() })).toBe(7)
    expect(await ttlOf((req, res) => { res.setHeader('Cache-Control', 'private, max-age=7'); res.end('x') })).toBe(0)
  })

  test('a raw response written to req.socket', async () => {
    const ttl = await ttlOf((req) => req.socket.write('HTTP/1.1 200 OK\r\nCache-Control: public, max-age=9\r\nContent-Length: 1\r\n\r\nx'))
    expect(ttl).toBe(9)
  })

  test('a config rule without Cache-Control; none when the cache is off', async () => {
    process.env.HTTPSYS_CACHE = JSON.stringify([{ path: '/static/', ttl: 3 }])
    expect(await ttlOf((req, res) => res.end('x'), '/static/a.css')).toBe(3)
    expect(await ttlOf((req, res) => res.end('x'), '/other')).toBe(0)
    process.env.HTTPSYS_CACHE = 'off'
    expect(await ttlOf((req, res) => { res.setHeader('Cache-Control', 'public, max-age=7'); res.end('x') })).toBe(0)
  })
})
