'use strict'

// Issue 23, the worker's half of the output cache rules (src/http/server-handle.js
// cacheTtl, src/cache/rules.js), which both routers use: HTTP.SYS caches what the worker
// gives a time to live, the hub checks it again. The config rules see the URL the client
// sent, whatever the app's routers did to req.url; a client certificate makes a response
// private unless it says Cache-Control: public.

const { start, stopAll, settle } = require('./start')

afterEach(() => {
  delete process.env.HTTPSYS_CACHE
  return stopAll()
})

/** The cacheTtl of the one respond() for a GET `request` answered by `handler`. */
async function ttlOf (handler, request) {
  const { mq } = await start(handler)
  const h = mq.request({ method: 'GET', ...request })
  await settle()
  const calls = mq.calls.filter((c) => c.op === 'respond' && c.id === h.id)
  expect(calls).toHaveLength(1)
  return calls[0].cacheTtl
}

// what express does to req.url under app.use(mount, router) while the router runs
function mounted (mount, handler) {
  return (req, res) => {
    if (req.url.startsWith(mount + '/')) req.url = req.url.slice(mount.length)
    handler(req, res)
  }
}

describe('a config rule is looked up on the URL the client sent', () => {
  beforeEach(() => {
    process.env.HTTPSYS_CACHE = JSON.stringify([{ path: '/static/', ttl: 30 }])
  })

  test('a router mounted at /account sees /static/x.css: its page is not cached under the /static/ rule', async () => {
    let seen = null
    const page = mounted('/account', (req, res) => {
      seen = req.url
      res.setHeader('Content-Type', 'text/html')
      res.end('<p>the account of whoever is signed in</p>')
    })
    expect(await ttlOf(page, { url: '/account/static/x.css', rawHeaders: ['Host', 'a', 'Cookie', 'user=victim'] })).toBe(0)
    expect(seen).toBe('/static/x.css')
  })

  test('a static handler mounted at /static sees /x.css: cached for the rule\'s ttl over its own max-age=0', async () => {
    const files = mounted('/static', (req, res) => {
      res.setHeader('Cache-Control', 'public, max-age=0')
      res.end('body { color: teal }')
    })
    expect(await ttlOf(files, { url: '/static/x.css' })).toBe(30)
  })

  test('the request\'s own headers are the client\'s too: Authorization beyond maxHeadersCount still counts', async () => {
    const { mq, server } = await start((req, res) => res.end('x'))
    server.maxHeadersCount = 1
    const h = mq.request({ url: '/static/a.css', rawHeaders: ['Host', 'a', 'Authorization', 'Bearer t'] })
    // the same beyond the count without Authorization: cached, so the 0 above is Authorization's
    const other = mq.request({ url: '/static/a.css', rawHeaders: ['Host', 'a', 'X-Other', 't'] })
    await settle()
    expect(mq.calls.find((c) => c.op === 'respond' && c.id === h.id).cacheTtl).toBe(0)
    expect(mq.calls.find((c) => c.op === 'respond' && c.id === other.id).cacheTtl).toBe(30)
  })
})

describe('a client certificate: private unless the response says public', () => {
  const withCert = { encrypted: true, tls: { protocol: 'TLSv1.3', authorized: false, peerCertificate: Buffer.from('DER') } }
  const withoutCert = { encrypted: true, tls: { protocol: 'TLSv1.3', authorized: false, peerCertificate: null } }
  const answer = (cc) => (req, res) => {
    res.setHeader('Cache-Control', cc)
    res.end('hello')
  }

  test.each([
    ['s-maxage=60', 'with', 0],
    ['s-maxage=60', 'without', 60],
    ['public, max-age=60', 'with', 60],
    ['public, s-maxage=20', 'with', 20],
    ['private, max-age=60', 'without', 0]
  ])('Cache-Control %s, a client %s a certificate: ttl %i', async (cc, cert, ttl) => {
    expect(await ttlOf(answer(cc), { url: '/p', ...(cert === 'with' ? withCert : withoutCert) })).toBe(ttl)
  })

  test('a config rule does not make it public', async () => {
    process.env.HTTPSYS_CACHE = JSON.stringify([{ path: '/', ttl: 30 }])
    expect(await ttlOf((req, res) => res.end('hello CN=alice'), { url: '/me', ...withCert })).toBe(0)
    expect(await ttlOf((req, res) => res.end('hello'), { url: '/me', ...withoutCert })).toBe(30)
  })
})
