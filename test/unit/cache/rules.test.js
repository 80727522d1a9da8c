'use strict'

// The output cache's rules table (src/cache/rules.js), shared by the worker (which
// computes a response's time to live) and the hub (which checks again before storing).
// Every rule is tested both ways: a case it allows and a case it refuses.

const {
  parseCacheControl,
  ruleFor,
  requestAllows,
  responseTtl,
  responseRefused,
  publicResponse,
  storable
} = require('../../../src/cache/rules')

const NONE = { public: false, private: false, noStore: false, noCache: false, maxAge: -1, sMaxAge: -1 }
const cc = (fields) => ({ ...NONE, ...fields })

describe('parseCacheControl', () => {
  test.each([
    ['', NONE],
    ['public', cc({ public: true })],
    ['private', cc({ private: true })],
    ['no-store', cc({ noStore: true })],
    ['no-cache', cc({ noCache: true })],
    ['max-age=60', cc({ maxAge: 60 })],
    ['s-maxage=30', cc({ sMaxAge: 30 })],
    ['max-age=0', cc({ maxAge: 0 })],
    ['public, max-age=3600, s-maxage=120', cc({ public: true, maxAge: 3600, sMaxAge: 120 })],
    ['private, no-store, no-cache', cc({ private: true, noStore: true, noCache: true })],
    // quoted values
    ['max-age="60"', cc({ maxAge: 60 })],
    ['s-maxage="7"', cc({ sMaxAge: 7 })],
    ['no-cache="Set-Cookie"', cc({ noCache: true })],
    ['private="X-Secret"', cc({ private: true })],
    // names are case-insensitive, whitespace around names and values is ignored
    ['PUBLIC, Max-Age=10', cc({ public: true, maxAge: 10 })],
    ['No-Store', cc({ noStore: true })],
    ['NO-CACHE', cc({ noCache: true })],
    ['Private', cc({ private: true })],
    ['S-MAXAGE=5', cc({ sMaxAge: 5 })],
    ['  public ,  max-age = 42  ', cc({ public: true, maxAge: 42 })],
    // unknown directives and near misses are ignored
    ['must-revalidate, immutable, stale-while-revalidate=5', NONE],
    ['publicity, privately, no-stored, max-ages=5', NONE],
    // the largest delta-seconds accepted: ten digits
    ['max-age=9999999999', cc({ maxAge: 9999999999 })]
  ])('%j', (value, expected) => {
    expect(parseCacheControl(value)).toEqual(expected)
  })

  test.each([
    ['max-age=abc'],
    ['max-age=-5'],
    ['max-age=1.5'],
    ['max-age=1e3'],
    ['max-age=0x10'],
    ['max-age='],
    ['max-age'],
    ['max-age=""'],
    ['max-age="'],
    ['max-age="60'],
    ['max-age=12345678901'], // eleven digits
    ['max-age=6 0']
  ])('bad number %j counts as absent (-1)', (value) => {
    expect(parseCacheControl(value).maxAge).toBe(-1)
    expect(parseCacheControl(value.replace('max-age', 's-maxage')).sMaxAge).toBe(-1)
  })

  test('a bad number does not hide the other directives', () => {
    expect(parseCacheControl('public, max-age=soon, s-maxage=9')).toEqual(cc({ public: true, sMaxAge: 9 }))
  })
})

describe('ruleFor', () => {
  const root = { path: '/', ttl: 1, query: false }
  const stat = { path: '/static/', ttl: 2, query: false }
  const img = { path: '/static/img/', ttl: 3, query: true }
  const api = { path: '/api', ttl: 4, query: true }
  const nested = [root, img, stat] // not sorted: the longest must win wherever it is

  test('no rules: null', () => {
    expect(ruleFor([], '/')).toBeNull()
    expect(ruleFor([], '/static/a.css')).toBeNull()
  })

  test.each([
    ['/static/img/a.png', img],
    ['/static/img/', img],
    ['/static/img', img], // the prefix without its trailing "/"
    ['/static/a.css', stat],
    ['/static/imgx', stat],
    ['/static', stat],
    ['/staticx', root],
    ['/', root],
    ['/other/page', root]
  ])('longest prefix wins: %s', (url, rule) => {
    expect(ruleFor(nested, url)).toBe(rule)
  })

  test.each([
    ['/static', true],
    ['/static/', true],
    ['/static/x', true],
    ['/static/x/y.js', true],
    ['/staticx', false],
    ['/stati', false],
    ['/Static/x', false], // paths are case-sensitive
    ['/other/static/x', false]
  ])('"/static/" and %s: %s', (url, hit) => {
    expect(ruleFor([stat], url)).toBe(hit ? stat : null)
  })

  test('a prefix without a trailing "/" is a plain prefix', () => {
    expect(ruleFor([api], '/api')).toBe(api)
    expect(ruleFor([api], '/api/v1')).toBe(api)
    expect(ruleFor([api], '/apiv2')).toBe(api)
    expect(ruleFor([api], '/ap')).toBeNull()
  })

  test('the "/" rule matches every path', () => {
    expect(ruleFor([root], '/anything/at/all')).toBe(root)
    expect(ruleFor([root], '/')).toBe(root)
  })

  test.each([
    ['/static/a.css?v=1', [stat], null], // the rule does not allow queries
    ['/static/img/a.png?w=10', [img], img], // it does
    ['/static?x', [stat], null],
    ['/static/?', [stat], null], // an empty query is still a query
    ['/static/img/?', [img], img],
    ['/api?x=1', [api], api],
    ['/nothing?x=1', [stat], null],
    ['/static/a.css', [stat], stat] // no query: any matching rule
  ])('query: %s', (url, rules, expected) => {
    expect(ruleFor(rules, url)).toBe(expected)
  })

  test('the query is not part of the path that is matched', () => {
    const q = { path: '/a/', ttl: 5, query: true }
    expect(ruleFor([q], '/b?next=/a/x')).toBeNull()
    expect(ruleFor([q], '/a?next=/b')).toBe(q)
  })

  test('with a query, the longest rule decides even when a shorter one allows queries', () => {
    const any = { path: '/', ttl: 1, query: true }
    expect(ruleFor([any, stat], '/static/a.css?v=1')).toBeNull()
    expect(ruleFor([any, stat], '/other?v=1')).toBe(any)
  })
})

describe('requestAllows', () => {
  test.each([
    [['Authorization', 'Bearer x']],
    [['authorization', 'Basic dTpw']],
    [['AUTHORIZATION', 'x']],
    [['aUtHoRiZaTiOn', 'x']],
    [['Host', 'example.com', 'Accept', '*/*', 'Authorization', 'x']],
    [['Authorization', '']]
  ])('refuses %j', (raw) => {
    expect(requestAllows(raw)).toBe(false)
  })

  test.each([
    [[]],
    [['Host', 'example.com']],
    [['Host', 'example.com', 'Accept', '*/*', 'Cookie', 'a=b']],
    [['X-Authorization', 'x']],
    [['Authorizations', 'x']],
    [['Authorizatio', 'x']],
    [['X-Note', 'Authorization']] // a value, not a name
  ])('allows %j', (raw) => {
    expect(requestAllows(raw)).toBe(true)
  })
})

describe('responseTtl', () => {
  const rule = { path: '/', ttl: 120, query: false }

  test.each([
    [201], [203], [204], [206], [301], [304], [404], [500]
  ])('status %i: 0, whatever the headers and the rule', (status) => {
    expect(responseTtl(status, ['Cache-Control', 'public, max-age=60, s-maxage=60'], rule)).toBe(0)
    expect(responseTtl(status, [], rule)).toBe(0)
  })

  test('status 200 with a rule and nothing against it: the rule\'s ttl', () => {
    expect(responseTtl(200, [], rule)).toBe(120)
    expect(responseTtl(200, ['Content-Type', 'text/plain', 'ETag', '"x"'], rule)).toBe(120)
  })

  test.each([
    ['Set-Cookie', 'a=b'],
    ['set-cookie', 'a=b'],
    ['SET-COOKIE', 'a=b'],
    ['Vary', 'Accept-Encoding'],
    ['vary', '*'],
    ['VARY', 'Origin'],
    ['Pragma', 'no-cache'],
    ['pragma', 'x'],
    ['PRAGMA', '']
  ])('%s: 0 even with a rule and s-maxage', (name, value) => {
    expect(responseTtl(200, ['Cache-Control', 'public, s-maxage=60', name, value], rule)).toBe(0)
    expect(responseTtl(200, [name, value, 'Content-Type', 'text/plain'], rule)).toBe(0)
  })

  test.each([
    ['Set-Cookies', 'a=b'], ['X-Vary', 'x'], ['Pragmas', 'x'], ['X-Set-Cookie', 'a=b']
  ])('a look-alike %s does not refuse', (name, value) => {
    expect(responseTtl(200, [name, value], rule)).toBe(120)
  })

  test.each([
    ['private'],
    ['no-store'],
    ['no-cache'],
    ['Private'],
    ['NO-STORE'],
    ['public, max-age=60, private'],
    ['s-maxage=60, no-store'],
    ['no-cache="Set-Cookie", s-maxage=60']
  ])('Cache-Control %j: 0 even with a rule', (value) => {
    expect(responseTtl(200, ['Cache-Control', value], rule)).toBe(0)
    expect(responseTtl(200, ['cache-control', value], null)).toBe(0)
  })

  test.each([
    ['s-maxage=30', 120, 30],
    ['s-maxage=30', 5, 30],
    ['public, max-age=600, s-maxage=30', 120, 30],
    ['s-maxage="45"', 120, 45],
    ['s-maxage=0', 120, 0]
  ])('s-maxage wins over a rule: %j, rule ttl %i → %i', (value, ttl, expected) => {
    expect(responseTtl(200, ['Cache-Control', value], { path: '/', ttl, query: false })).toBe(expected)
  })

  test('s-maxage counts without a rule and without public', () => {
    expect(responseTtl(200, ['Cache-Control', 's-maxage=30'], null)).toBe(30)
  })

  test('a bad s-maxage is absent: the rule decides', () => {
    expect(responseTtl(200, ['Cache-Control', 's-maxage=soon'], rule)).toBe(120)
  })

  test.each([
    ['public, max-age=0'], // express.static
    ['max-age=0'],
    ['public, max-age=3600'],
    ['max-age=5'],
    ['public'],
    ['must-revalidate']
  ])('a rule\'s ttl wins over %j', (value) => {
    expect(responseTtl(200, ['Cache-Control', value], rule)).toBe(120)
  })

  test('a rule\'s ttl wins over Expires', () => {
    const raw = ['Cache-Control', 'public', 'Date', 'Wed, 21 Oct 2015 07:28:00 GMT', 'Expires', 'Wed, 21 Oct 2015 07:38:00 GMT']
    expect(responseTtl(200, raw, rule)).toBe(120)
  })

  describe('without a rule', () => {
    const DATE = 'Wed, 21 Oct 2015 07:28:00 GMT'
    const NOW = Date.parse(DATE)

    test.each([
      ['public, max-age=60', 60],
      ['max-age=60, public', 60],
      ['PUBLIC, MAX-AGE=60', 60],
      ['public, max-age="90"', 90],
      ['public, max-age=0', 0],
      ['max-age=60', 0], // not public: a browser's, not the router's
      ['public', 0], // public without a lifetime
      ['public, max-age=bad', 0],
      ['must-revalidate', 0]
    ])('Cache-Control %j → %i', (value, expected) => {
      expect(responseTtl(200, ['Cache-Control', value], null)).toBe(expected)
    })

    test.each([
      ['public', 'Wed, 21 Oct 2015 07:38:00 GMT', DATE, 600],
      ['public', 'Wed, 21 Oct 2015 07:28:01 GMT', DATE, 1],
      ['public', 'Thu, 22 Oct 2015 07:28:00 GMT', DATE, 86400],
      ['public', 'Wed, 21 Oct 2015 07:28:00 GMT', DATE, 0], // expires at Date: stale
      ['public', 'Wed, 21 Oct 2015 07:18:00 GMT', DATE, 0], // in the past
      ['public', 'not a date', DATE, 0],
      ['public', '0', DATE, 0],
      ['public', 'Wed, 21 Oct 2015 07:38:00 GMT', 'not a date', 0],
      ['max-age=60', 'Wed, 21 Oct 2015 07:38:00 GMT', DATE, 0], // not public
      ['no-cache', 'Wed, 21 Oct 2015 07:38:00 GMT', DATE, 0],
      ['public, max-age=5', 'Wed, 21 Oct 2015 07:38:00 GMT', DATE, 5] // max-age wins over Expires
    ])('Cache-Control %j, Expires %j, Date %j → %i', (value, expires, date, expected) => {
      expect(responseTtl(200, ['Cache-Control', value, 'Expires', expires, 'Date', date], null, 0)).toBe(expected)
      // names in any case, any order
      expect(responseTtl(200, ['date', date, 'EXPIRES', expires, 'cache-control', value], null, 0)).toBe(expected)
    })

    test('public + Expires without Date: counted from now, rounded down', () => {
      const raw = ['Cache-Control', 'public', 'Expires', 'Wed, 21 Oct 2015 07:38:00 GMT']
      expect(responseTtl(200, raw, null, NOW)).toBe(600)
      expect(responseTtl(200, raw, null, NOW + 500)).toBe(599)
      expect(responseTtl(200, raw, null, NOW + 600000)).toBe(0)
      expect(responseTtl(200, raw, null, NOW + 700000)).toBe(0)
    })

    test('Expires without Cache-Control: 0', () => {
      expect(responseTtl(200, ['Expires', 'Wed, 21 Oct 2015 07:38:00 GMT', 'Date', DATE], null)).toBe(0)
    })

    test('no Cache-Control and no rule: 0', () => {
      expect(responseTtl(200, [], null)).toBe(0)
      expect(responseTtl(200, ['Content-Type', 'text/html', 'Content-Length', '5'], null)).toBe(0)
    })
  })

  test.each([
    [['Cache-Control', 'public', 'Cache-Control', 'max-age=60'], null, 60],
    [['Cache-Control', 'max-age=60', 'cache-control', 'public'], null, 60],
    [['Cache-Control', 'public', 'Content-Type', 'text/plain', 'CACHE-CONTROL', 's-maxage=7'], null, 7],
    [['Cache-Control', 'public, max-age=60', 'Cache-Control', 'no-store'], { path: '/', ttl: 120, query: false }, 0],
    [['Cache-Control', 's-maxage=60', 'Cache-Control', 'private'], null, 0]
  ])('several Cache-Control headers are joined: %j', (raw, r, expected) => {
    expect(responseTtl(200, raw, r)).toBe(expected)
  })
})

describe('responseRefused', () => {
  test.each([
    [['Set-Cookie', 'a=b']],
    [['set-cookie', 'a=b']],
    [['Vary', 'Accept']],
    [['VARY', 'Accept']],
    [['Pragma', 'no-cache']],
    [['pragma', 'x']],
    [['Cache-Control', 'private']],
    [['Cache-Control', 'no-store']],
    [['Cache-Control', 'no-cache']],
    [['cache-control', 'Public, No-Cache']],
    [['Cache-Control', 's-maxage=0']],
    [['Cache-Control', 'public, s-maxage=0, max-age=60']],
    [['Cache-Control', 'public', 'Cache-Control', 'private']]
  ])('refused: %j', (raw) => {
    expect(responseRefused(raw)).toBe(true)
  })

  test.each([
    [[]],
    [['Content-Type', 'text/html']],
    [['Cache-Control', 'public, max-age=0']], // max-age is for browsers
    [['Cache-Control', 'max-age=0']],
    [['Cache-Control', 'public']],
    [['Cache-Control', 's-maxage=10']],
    [['Cache-Control', 'must-revalidate']],
    [['Expires', '0']],
    [['ETag', '"x"', 'Last-Modified', 'Wed, 21 Oct 2015 07:28:00 GMT']]
  ])('not refused: %j', (raw) => {
    expect(responseRefused(raw)).toBe(false)
  })
})

// issue 23: a client certificate is treated like Authorization unless the app says public
describe('publicResponse', () => {
  test.each([
    [['Cache-Control', 'public']],
    [['cache-control', 'Public, max-age=60']],
    [['Cache-Control', 'max-age=60', 'Cache-Control', 'public']], // repeats are one list
    [['Cache-Control', 's-maxage=10, public']]
  ])('public: %j', (raw) => {
    expect(publicResponse(raw)).toBe(true)
  })

  test.each([
    [[]],
    [['Cache-Control', 's-maxage=60']], // how long, not for whom
    [['Cache-Control', 'max-age=60']],
    [['Cache-Control', 'publicity']],
    [['X-Cache-Control', 'public']],
    [['Expires', 'Wed, 21 Oct 2037 07:28:00 GMT']]
  ])('not public: %j', (raw) => {
    expect(publicResponse(raw)).toBe(false)
  })
})

describe('storable', () => {
  const stat = { path: '/static/', ttl: 60, query: false }
  const search = { path: '/search', ttl: 10, query: true }
  const rules = [stat, search]

  test('a plain GET without rules: storable, no rule', () => {
    expect(storable('GET', '/page', [], false, [])).toEqual({ rule: null })
  })

  test('a GET on a path with a rule: storable with that rule', () => {
    const s = storable('GET', '/static/a.css', ['Host', 'x'], false, rules)
    expect(s).not.toBeNull()
    expect(s.rule).toBe(stat)
  })

  test('a GET on a path without a rule: storable, no rule (the response decides)', () => {
    expect(storable('GET', '/other', [], false, rules)).toEqual({ rule: null })
  })

  test.each([
    ['HEAD'], ['POST'], ['PUT'], ['DELETE'], ['OPTIONS'], ['get'], ['Get']
  ])('%s: never', (method) => {
    expect(storable(method, '/static/a.css', [], false, rules)).toBeNull()
  })

  test('a GET with a body: never', () => {
    expect(storable('GET', '/static/a.css', [], true, rules)).toBeNull()
    expect(storable('GET', '/static/a.css', [], false, rules)).not.toBeNull()
  })

  test.each([
    ['Authorization'], ['authorization'], ['AUTHORIZATION']
  ])('a GET with %s: never', (name) => {
    expect(storable('GET', '/static/a.css', ['Host', 'x', name, 'Bearer t'], false, rules)).toBeNull()
    expect(storable('GET', '/page', [name, 'Bearer t'], false, [])).toBeNull()
  })

  test.each([
    ['/page?x=1', [], null], // no rule: a query is never stored
    ['/page?', [], null],
    ['/static/a.css?v=1', rules, null], // the rule does not allow queries
    ['/other?x=1', rules, null]
  ])('query refused: %s', (url, r) => {
    expect(storable('GET', url, [], false, r)).toBeNull()
  })

  test('query allowed by its rule', () => {
    const s = storable('GET', '/search?q=cats', [], false, rules)
    expect(s).not.toBeNull()
    expect(s.rule).toBe(search)
    // still refused for the other reasons
    expect(storable('GET', '/search?q=cats', ['Authorization', 'x'], false, rules)).toBeNull()
    expect(storable('GET', '/search?q=cats', [], true, rules)).toBeNull()
    expect(storable('HEAD', '/search?q=cats', [], false, rules)).toBeNull()
  })
})
