'use strict'

// The router's output cache under `httpsys start` (docs/output-cache.md): an app with
// a config rule and Cache-Control responses, two instances, on two ports. Every body
// names the process that made it and how many requests that process had seen
// (fixtures/apps/cache-app.js): the same body twice means the router answered the
// second time without the app.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, request, writeConfig, sleep, APPS } = require('../fixtures/apps/harness')

let run
let dir
let port
let port2 // the app's second URL: the same paths on another listener
let env
let config

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-cache-'))
  port = await freePort()
  do port2 = await freePort(); while (port2 === port)
  env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  config = writeConfig(dir, {
    limits: { cache_size: '150K', cache_max_response: '40K' },
    apps: [
      {
        name: 'site',
        script: path.join(APPS, 'cache-app.js'),
        urls: [`http://127.0.0.1:${port}/`, `http://127.0.0.1:${port2}/`],
        instances: 2,
        cache: [{ path: '/static/', ttl: '60s' }, { path: '/search', ttl: '60s', query: true }]
      }
    ]
  })
  run = start(['-c', config], { env })
  await run.waitFor((r) => r.event === 'ready', { count: 2, timeout: 20000 })
}, 30000)

afterAll(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

async function cacheStats () {
  const ls = await cli(['ls', '--json', '-c', config], { env })
  expect(ls.code).toBe(0)
  return JSON.parse(ls.stdout)[0].apps[0].cache
}

/** n GETs, `concurrency` at a time: their bodies. */
async function many (urlPath, n, concurrency = 10, headers = {}) {
  const bodies = []
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      next++
      const res = await get(port, urlPath, { headers })
      expect(res.status).toBe(200)
      bodies.push(res.body)
    }
  }))
  return bodies
}

test('1000 GETs of a cached path: the app makes one response, ls --json counts the hits', async () => {
  const before = await cacheStats()
  const first = await get(port, '/static/app.js')
  expect(first.status).toBe(200)
  expect(first.headers.age).toBeUndefined() // made by the app
  const bodies = await many('/static/app.js', 1000)
  expect(new Set(bodies)).toEqual(new Set([first.body]))
  const again = await get(port, '/static/app.js')
  expect(again.headers.age).toMatch(/^\d+$/)
  expect(again.headers['content-length']).toBe(String(Buffer.byteLength(first.body)))
  expect(again.headers['content-type']).toBe('text/plain')
  const after = await cacheStats()
  expect(after.hits - before.hits).toBe(1001)
  expect(after.stores - before.stores).toBe(1)
  expect(after.entries).toBeGreaterThanOrEqual(1)
  expect(after.bytes).toBeGreaterThanOrEqual(Buffer.byteLength(first.body))
}, 60000)

test.each([
  ['a request with Authorization', '/static/auth.js', { authorization: 'Bearer x' }],
  ['a response with Set-Cookie', '/cookie', {}],
  ['a response with Vary', '/vary', {}],
  ['a private response', '/private', {}],
  ['a no-store response under a cached path', '/static/nostore', {}],
  ['a query string the rule does not allow', '/static/app.js?v=2', {}],
  ['a response without a cache rule or Cache-Control', '/plain', {}]
])('%s reaches the app every time', async (what, urlPath, headers) => {
  const bodies = await many(urlPath, 6, 2, headers)
  expect(new Set(bodies).size).toBe(6)
})

test('a request with Authorization is not answered from an entry a request without it stored', async () => {
  const stored = await get(port, '/static/auth-stored.js')
  expect((await get(port, '/static/auth-stored.js')).body).toBe(stored.body) // the entry is there
  const bodies = await many('/static/auth-stored.js', 6, 2, { authorization: 'Bearer x' })
  expect(new Set(bodies).size).toBe(6)
  expect(bodies).not.toContain(stored.body)
  // and still answers the requests without
  expect((await get(port, '/static/auth-stored.js')).body).toBe(stored.body)
})

test('the listener\'s port is part of the key: the same path on the app\'s other port is another entry', async () => {
  const a = await get(port, '/static/ports.js')
  const b = await get(port2, '/static/ports.js')
  expect(b.status).toBe(200)
  expect(b.headers.age).toBeUndefined() // made by the app
  expect(b.body).not.toBe(a.body)
  expect((await get(port, '/static/ports.js')).body).toBe(a.body)
  const again = await get(port2, '/static/ports.js')
  expect(again.body).toBe(b.body)
  expect(again.headers.age).toMatch(/^\d+$/)
})

test('Cache-Control: public, max-age caches without a rule; a streamed body with a Content-Length too', async () => {
  // writeHead() then end(), and write() then end(): src/http frames them chunked; the
  // cache stores them bare and answers with a Content-Length
  for (const urlPath of ['/public', '/streamed', '/chunked', '/written-head']) {
    // (requests that arrive before the first response is stored all reach the app)
    await get(port, urlPath)
    const bodies = await many(urlPath, 20, 4)
    expect(new Set(bodies).size).toBe(1)
    const cached = await get(port, urlPath)
    expect(cached.headers['content-length']).toBe(String(Buffer.byteLength(bodies[0])))
    expect(cached.headers['transfer-encoding']).toBeUndefined()
  }
  // a query allowed by its rule: each query its own entry
  const a = await many('/search?q=a', 5, 1)
  const b = await many('/search?q=b', 5, 1)
  expect(new Set(a).size).toBe(1)
  expect(new Set(b).size).toBe(1)
  expect(a[0]).not.toBe(b[0])
})

test('HEAD, Range and conditional requests are answered from the cached GET', async () => {
  const full = await get(port, '/public')
  const cached = await get(port, '/public')
  expect(cached.body).toBe(full.body)
  const len = Buffer.byteLength(full.body)

  const head = await request(port, { method: 'HEAD', path: '/public' })
  expect(head.status).toBe(200)
  expect(head.body).toBe('')
  expect(head.headers['content-length']).toBe(String(len))

  const part = await get(port, '/public', { headers: { range: 'bytes=4-9' } })
  expect(part.status).toBe(206)
  expect(part.headers['content-range']).toBe(`bytes 4-9/${len}`)
  expect(part.body).toBe(full.body.slice(4, 10))

  const suffix = await get(port, '/public', { headers: { range: 'bytes=-3' } })
  expect(suffix.body).toBe(full.body.slice(-3))

  const beyond = await get(port, '/public', { headers: { range: `bytes=${len + 10}-` } })
  expect(beyond.status).toBe(416)
  expect(beyond.headers['content-range']).toBe(`bytes */${len}`)

  const notModified = await get(port, '/public', { headers: { 'if-none-match': '"v1"' } })
  expect(notModified.status).toBe(304)
  expect(notModified.headers.etag).toBe('"v1"')
  expect(notModified.body).toBe('')

  // a stale If-Range: the whole body
  const stale = await get(port, '/public', { headers: { range: 'bytes=0-1', 'if-range': '"v0"' } })
  expect(stale.status).toBe(200)
  expect(stale.body).toBe(full.body)
  // If-Range compares strongly (RFC 9110 13.1.5): the entry's own ETag gives the range,
  // a weak one the whole body
  const valid = await get(port, '/public', { headers: { range: 'bytes=0-1', 'if-range': '"v1"' } })
  expect(valid.status).toBe(206)
  const weakTag = await get(port, '/public', { headers: { range: 'bytes=0-1', 'if-range': 'W/"v1"' } })
  expect(weakTag.status).toBe(200)
  expect(weakTag.body).toBe(full.body)
})

test('an entry lives for its time to live (s-maxage=1)', async () => {
  const first = await get(port, '/short')
  expect((await get(port, '/short')).body).toBe(first.body)
  await sleep(2100)
  const later = await get(port, '/short')
  expect(later.body).not.toBe(first.body)
})

test('the byte budget evicts the least recently used entry; a response above cache_max_response is not stored', async () => {
  const before = await cacheStats()
  const big = async (n) => (await get(port, `/static/big/${n}`)).body
  const made = {}
  for (const n of [30001, 30002, 30003, 30004]) made[n] = await big(n)
  // the first is asked for again: of the four, 30002 is now the least recently used
  expect(await big(30001)).toBe(made[30001])
  for (const n of [30005, 30006]) made[n] = await big(n)
  // budget 150K: five 30 KB entries fit, six do not; the least recently used go first
  // (what earlier tests stored, then 30002), not the first stored (30001)
  expect(await big(30006)).toBe(made[30006])
  expect(await big(30001)).toBe(made[30001])
  expect(await big(30002)).not.toBe(made[30002])
  const after = await cacheStats()
  expect(after.evictions).toBeGreaterThan(before.evictions)
  expect(after.bytes).toBeLessThanOrEqual(150 * 1024)
  const tooBig = await many('/static/big/50000', 3, 1)
  expect(new Set(tooBig).size).toBe(3)
})

test('httpsys reload empties the app\'s entries: the new build answers', async () => {
  const first = await get(port, '/static/reload.js')
  expect((await get(port, '/static/reload.js')).body).toBe(first.body)
  const reload = await cli(['reload', 'site', '-c', config], { env })
  expect(reload.code).toBe(0)
  const after = await get(port, '/static/reload.js')
  expect(after.body).not.toBe(first.body)
  const oldPid = /pid=(\d+)/.exec(first.body)[1]
  expect(after.body).not.toContain(`pid=${oldPid} `)
  // and it is cached again
  expect((await get(port, '/static/reload.js')).body).toBe(after.body)
}, 30000)
