'use strict'

// The router's output cache under `httpsys start` (docs/output-cache.md): an app with
// a config rule and Cache-Control responses, two instances, on two ports. Every body
// names the process that made it and how many requests that process had seen
// (fixtures/apps/cache-app.js): the same body twice means the router answered the
// second time without the app. A second app, express with a router mounted at /account
// and express.static at /static under a /static/ rule (fixtures/apps/cache-express-app.js),
// checks that the rules see the URL the client sent, not the one express rewrote (issue 23).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, request, writeConfig, sleep, APPS } = require('../fixtures/apps/harness')

let run
let dir
let port
let port2 // the app's second URL: the same paths on another listener
let shopPort // the express app
let env
let config

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-cache-'))
  port = await freePort()
  do port2 = await freePort(); while (port2 === port)
  do shopPort = await freePort(); while (shopPort === port || shopPort === port2)
  env = { HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  const staticDir = path.join(dir, 'public')
  fs.mkdirSync(staticDir)
  fs.writeFileSync(path.join(staticDir, 'site.css'), 'body { color: teal }\n')
  config = writeConfig(dir, {
    limits: { cache_size: '150K', cache_max_response: '40K' },
    apps: [
      {
        name: 'site',
        script: path.join(APPS, 'cache-app.js'),
        urls: [`http://127.0.0.1:${port}/`, `http://127.0.0.1:${port2}/`],
        instances: 2,
        cache: [{ path: '/static/', ttl: '60s' }, { path: '/search', ttl: '60s', query: true }]
      },
      {
        name: 'shop',
        script: path.join(APPS, 'cache-express-app.js'),
        urls: [`http://127.0.0.1:${shopPort}/`],
        env: { STATIC_DIR: staticDir },
        cache: [{ path: '/static/', ttl: '60s' }]
      }
    ]
  })
  run = start(['-c', config], { env })
  await run.waitFor((r) => r.event === 'ready', { count: 3, timeout: 20000 })
}, 30000)

afterAll(async () => {
  if (run) await run.cleanup()
  fs.rmSync(dir, { recursive: true, force: true })
})

async function cacheStats (app = 'site') {
  const ls = await cli(['ls', '--json', '-c', config], { env })
  expect(ls.code).toBe(0)
  return JSON.parse(ls.stdout)[0].apps.find((a) => a.name === app).cache
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

// issue 23: the rules see the URL the client sent, as the router keys on it; express
// strips a mount point from req.url before its routers run
test('cache deception: /account/static/x.css is the /account router\'s page, never stored under the /static/ rule', async () => {
  const victim = await get(shopPort, '/account/static/x.css', { headers: { cookie: 'user=victim' } })
  expect(victim.status).toBe(200)
  expect(victim.body).toContain('account of victim')
  expect(victim.body).toContain('path /static/x.css') // what the router saw as req.url
  for (let i = 0; i < 3; i++) {
    const anyone = await get(shopPort, '/account/static/x.css')
    expect(anyone.status).toBe(200)
    expect(anyone.headers.age).toBeUndefined()
    expect(anyone.body).toContain('account of nobody')
    expect(anyone.body).not.toContain('victim')
  }
  expect((await cacheStats('shop')).stores).toBe(0)
})

test('express.static mounted at /static is cached under a /static/ rule, as the README says', async () => {
  const first = await get(shopPort, '/static/site.css')
  expect(first.status).toBe(200)
  expect(first.body).toBe('body { color: teal }\n')
  expect(first.headers['cache-control']).toBe('public, max-age=0') // express.static's, for browsers
  expect(first.headers.age).toBeUndefined()
  for (let i = 0; i < 3; i++) {
    const again = await get(shopPort, '/static/site.css')
    expect(again.body).toBe(first.body)
    expect(again.headers.age).toMatch(/^\d+$/)
    expect(again.headers['x-seen']).toBe(first.headers['x-seen']) // the app made it once
  }
  const stats = await cacheStats('shop')
  expect(stats.stores).toBe(1)
  expect(stats.hits).toBeGreaterThanOrEqual(3)
})

// issue 23: the budget counts each entry's key (Host + URL, up to 16 KB), so long Hosts
// cannot hold more than cache_size (3000 entries kept 48 MB under a 1 MB budget)
test('entries with 8 KB Hosts count their Hosts: no more than the 150K budget holds stay', async () => {
  const host = (i) => 'h'.repeat(8000) + i
  for (let i = 0; i < 40; i++) {
    const res = await get(port, '/public', { headers: { host: host(i) } })
    expect(res.status).toBe(200)
  }
  let kept = 0
  for (let i = 39; i >= 0; i--) { // most recent first: a miss stores again and evicts the least recently used
    if ((await get(port, '/public', { headers: { host: host(i) } })).headers.age !== undefined) kept++
  }
  expect(kept).toBeGreaterThan(0)
  expect(kept * 8000).toBeLessThanOrEqual(150 * 1024)
  const stats = await cacheStats()
  expect(stats.bytes).toBeLessThanOrEqual(150 * 1024)
}, 30000)

test('the byte budget evicts the least recently used entry; a response above cache_max_response is not stored', async () => {
  const before = await cacheStats()
  const big = async (n) => (await get(port, `/static/big/${n}`)).body
  const made = {}
  for (const n of [29001, 29002, 29003, 29004]) made[n] = await big(n)
  // the first is asked for again: of the four, 29002 is now the least recently used
  expect(await big(29001)).toBe(made[29001])
  for (const n of [29005, 29006]) made[n] = await big(n)
  // budget 150K: five 29 KB entries fit (with their keys, heads and objects), six do not;
  // the least recently used go first (what earlier tests stored, then 29002), not the
  // first stored (29001)
  expect(await big(29006)).toBe(made[29006])
  expect(await big(29001)).toBe(made[29001])
  expect(await big(29002)).not.toBe(made[29002])
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
