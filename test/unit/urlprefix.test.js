'use strict'

const { describe, test, expect } = require('@jest/globals')
const { parse, normalize, fromListen, RoutingTable } = require('../../src/urlprefix')

function errorOf (fn) {
  try {
    fn()
  } catch (err) {
    return err
  }
  throw new Error('expected a throw')
}

describe('parse: valid prefixes are normalised', () => {
  test.each([
    // input, prefix, hostKind, port, path, ip
    ['http://+:8080/', 'http://+:8080/', 'strong', 8080, '/', null],
    ['https://*:443/', 'https://*:443/', 'weak', 443, '/', null],
    ['http://+:8080', 'http://+:8080/', 'strong', 8080, '/', null],
    ['HTTP://+:8080/api', 'http://+:8080/api/', 'strong', 8080, '/api/', null],
    ['HtTpS://+:8443/a/b', 'https://+:8443/a/b/', 'strong', 8443, '/a/b/', null],
    ['http://www.Adatum.COM:80/vroot/', 'http://www.adatum.com:80/vroot/', 'explicit', 80, '/vroot/', null],
    ['http://localhost:3000/', 'http://localhost:3000/', 'explicit', 3000, '/', null],
    ['http://my_host-1:3000/', 'http://my_host-1:3000/', 'explicit', 3000, '/', null],
    ['http://bücher.example:80/', 'http://xn--bcher-kva.example:80/', 'explicit', 80, '/', null],
    ['http://192.168.0.1:80/x/', 'http://192.168.0.1:80/x/', 'ip', 80, '/x/', '192.168.0.1'],
    ['http://[::1]:8080/api', 'http://[::1]:8080/api/', 'ip', 8080, '/api/', '::1'],
    ['http://[0:0:0:0:0:0:0:1]:8080/', 'http://[::1]:8080/', 'ip', 8080, '/', '::1'],
    ['http://[3ffe:ffff::6ECB:0101]:80/', 'http://[3ffe:ffff::6ecb:101]:80/', 'ip', 80, '/', '3ffe:ffff::6ecb:101'],
    ['http://[2001:db8:0:0:1:0:0:1]:80/', 'http://[2001:db8::1:0:0:1]:80/', 'ip', 80, '/', '2001:db8::1:0:0:1'],
    ['http://[::ffff:127.0.0.1]:80/', 'http://[::ffff:7f00:1]:80/', 'ip', 80, '/', '::ffff:7f00:1'],
    ['http://+:65535/', 'http://+:65535/', 'strong', 65535, '/', null],
    ['http://+:1/', 'http://+:1/', 'strong', 1, '/', null],
    ['http://+:80/Mixed/Case/', 'http://+:80/Mixed/Case/', 'strong', 80, '/Mixed/Case/', null],
    ['http://+:80/%7euser/a%2fb/', 'http://+:80/~user/a%2Fb/', 'strong', 80, '/~user/a%2Fb/', null],
    ["http://+:80/a:b@c!$&'()*+,;=/", "http://+:80/a:b@c!$&'()*+,;=/", 'strong', 80, "/a:b@c!$&'()*+,;=/", null]
  ])('%s -> %s', (input, prefix, hostKind, port, path, ip) => {
    const p = parse(input)
    expect(p).toMatchObject({ prefix, hostKind, port, path, ip })
    expect(p.prefix).toBe(`${p.scheme}://${p.host}:${p.port}${p.path}`)
    expect(Object.isFrozen(p)).toBe(true)
    expect(normalize(input)).toBe(prefix)
    // normalising is idempotent
    expect(normalize(prefix)).toBe(prefix)
  })

  test('port 0 only with allowPortZero', () => {
    expect(parse('http://+:0/', { allowPortZero: true }).port).toBe(0)
    expect(errorOf(() => parse('http://+:0/')).reason).toMatch(/out of range/)
    expect(errorOf(() => parse('http://+:00/', { allowPortZero: true })).reason).toMatch(/start with 0/)
  })
})

describe('parse: invalid prefixes name the broken rule', () => {
  test.each([
    [42, /must be a string/],
    [null, /must be a string/],
    ['', /empty/],
    ['+:8080/', /missing scheme/],
    ['//+:8080/', /missing scheme/],
    ['ftp://+:21/', /scheme must be http or https/],
    ['ws://+:80/', /scheme must be http or https/],
    ['http://+/', /port is required/],
    ['http://+:/', /port is required/],
    ['http://example.com/', /port is required/],
    ['http://[::1]/', /port is required/],
    ['http://+:*/', /decimal number/],
    ['http://+:80a/', /decimal number/],
    ['http://+:-1/', /decimal number/],
    ['http://+:65536/', /out of range/],
    ['http://+:99999999/', /out of range/],
    ['http://+:0/', /out of range/],
    ['http://+:080/', /start with 0/],
    ['http://:8080/', /host is empty/],
    ['http://[::1:8080/', /bad IPv6 literal/],
    ['http://[::1]x:8080/', /bad IPv6 literal/],
    ['http://[::g]:8080/', /bad IPv6 literal/],
    ['http://[1::2::3]:8080/', /bad IPv6 literal/],
    ['http://[1:2:3:4:5:6:7:8:9]:8080/', /bad IPv6 literal/],
    ['http://[fe80::1%eth0]:8080/', /zone/],
    ['http://[::]:8080/', /not an interface address/],
    ['http://::1:8080/', /IPv6 literal in brackets/],
    ['http://+:8080/api/?x=1', /query/],
    ['http://+:8080/api/#top', /fragment/],
    ['http://*.example.com:80/', /wildcard/],
    ['http://+example:80/', /wildcard/],
    ['http://exa*mple:80/', /wildcard/],
    ['http://+:80 /', /whitespace/],
    [' http://+:80/', /whitespace/],
    ['http://+:80/a b/', /whitespace/],
    ['http://+:80/a\tb/', /whitespace/],
    ['http://user@+:80/', /user info/],
    ['http://256.1.1.1:80/', /bad IPv4 literal/],
    ['http://1.2.3:80/', /bad IPv4 literal/],
    ['http://01.2.3.4:80/', /bad IPv4 literal/],
    ['http://0.0.0.0:80/', /not an interface address/],
    ['http://exa..mple:80/', /empty label/],
    ['http://example.com.:80/', /empty label/],
    ['http://exa!mple:80/', /bad host name/],
    [`http://${'a'.repeat(64)}.com:80/`, /63 characters/],
    ['http://+:80/a%zz/', /percent-encoding/],
    ['http://+:80/a%2/', /percent-encoding/],
    ['http://+:80/a\\b/', /backslash/],
    ['http://+:80/a<b>/', /not allowed in the path/],
    ['http://+:80/a//b/', /empty path segment/],
    ['http://+:80/a/../b/', /dot segments/],
    ['http://+:80/a/./b/', /dot segments/],
    ['http://+:80/a/%2e%2E/', /dot segments/]
  ])('%p is rejected (%p)', (input, reason) => {
    const err = errorOf(() => parse(input))
    expect(err.code).toBe('ERR_HTTPSYS_BAD_PREFIX')
    expect(err.prefix).toBe(input)
    expect(err.reason).toMatch(reason)
    expect(err.message).toContain(err.reason)
  })
})

describe('fromListen', () => {
  test.each([
    [{ port: 8080 }, 'http://+:8080/'],
    [{ port: 0 }, 'http://+:0/'],
    [{ port: '3000' }, 'http://+:3000/'],
    [{ port: 8080, host: '0.0.0.0' }, 'http://+:8080/'],
    [{ port: 8080, host: '::' }, 'http://+:8080/'],
    [{ port: 8080, host: '' }, 'http://+:8080/'],
    [{ port: 8080, host: '127.0.0.1' }, 'http://127.0.0.1:8080/'],
    [{ port: 8080, host: '::1' }, 'http://[::1]:8080/'],
    [{ port: 8080, host: '[::1]' }, 'http://[::1]:8080/'],
    [{ port: 8080, host: 'localhost' }, 'http://127.0.0.1:8080/'],
    [{ port: 8080, host: 'LocalHost' }, 'http://127.0.0.1:8080/'],
    [{ port: 8080, host: 'Example.com' }, 'http://example.com:8080/'],
    [{ port: 8443, scheme: 'https' }, 'https://+:8443/']
  ])('%p -> %s', (args, prefix) => {
    expect(fromListen(args)).toBe(prefix)
  })

  test.each([
    [{ port: 70000 }, /out of range/],
    [{ port: -1 }, /decimal number/],
    [{ port: 80, host: '*.example.com' }, /wildcard/]
  ])('%p is rejected', (args, reason) => {
    const err = errorOf(() => fromListen(args))
    expect(err.code).toBe('ERR_HTTPSYS_BAD_PREFIX')
    expect(err.reason).toMatch(reason)
  })
})

describe('RoutingTable: registration and conflicts', () => {
  test('add returns the parsed prefix; has/remove/entries/ports/size follow', () => {
    const t = new RoutingTable()
    const p = t.add('HTTP://+:8080/api', 'a')
    expect(p.prefix).toBe('http://+:8080/api/')
    t.add('http://*:80/', 'b')
    t.add('https://example.com:443/', 'c')
    expect(t.size).toBe(3)
    expect(t.ports()).toEqual([80, 443, 8080])
    expect(t.has('http://+:8080/API/')).toBe(true)
    expect(t.has('http://*:8080/api/')).toBe(false)
    expect(t.has('not a prefix')).toBe(false)
    expect(t.entries().map((e) => [e.prefix, e.target])).toEqual([
      ['http://+:8080/api/', 'a'], ['http://*:80/', 'b'], ['https://example.com:443/', 'c']
    ])
    expect(t.remove('http://+:8080/Api')).toBe(true)
    expect(t.remove('http://+:8080/api/')).toBe(false)
    expect(t.remove('garbage')).toBe(false)
    expect(t.size).toBe(2)
    expect(t.ports()).toEqual([80, 443])
    expect(t.route({ port: 8080, host: 'x', path: '/api/' })).toEqual({ status: 400 })
  })

  test('add rejects a malformed prefix', () => {
    const t = new RoutingTable()
    expect(errorOf(() => t.add('http://+/', 'a')).code).toBe('ERR_HTTPSYS_BAD_PREFIX')
    expect(errorOf(() => t.add('http://+:0/', 'a')).code).toBe('ERR_HTTPSYS_BAD_PREFIX')
  })

  test.each([
    ['http://+:8080/api/', 'http://+:8080/api/'],
    ['http://+:8080/api/', 'HTTP://+:8080/API'],
    ['http://Example.com:80/', 'http://example.COM:80/'],
    ['http://[::1]:80/', 'http://[0:0::1]:80/'],
    ['http://127.0.0.1:80/', 'http://[::ffff:127.0.0.1]:80/'],
    ['http://*:80/~u/', 'http://*:80/%7Eu/'],
    ['http://+:80/café/', 'http://+:80/caf%C3%A9/']
  ])('%s then %s conflicts within its category', (first, second) => {
    const t = new RoutingTable()
    t.add(first, { name: 'app-one' })
    const err = errorOf(() => t.add(second, { name: 'app-two' }))
    expect(err.code).toBe('ERR_HTTPSYS_URL_CONFLICT')
    expect(err.owner).toBe('app-one')
    expect(err.message).toContain('app-one')
    expect(t.size).toBe(1)
  })

  test('owner falls back to String(target)', () => {
    const t = new RoutingTable()
    t.add('http://+:80/', 'queue-7')
    expect(errorOf(() => t.add('http://+:80/', 'x')).owner).toBe('queue-7')
  })

  test.each([
    ['http://+:80/vroot/', 'http://*:80/vroot/'],
    ['http://+:80/vroot/', 'http://www.adatum.com:80/vroot/'],
    ['http://127.0.0.1:80/', 'http://*:80/'],
    ['http://127.0.0.1:80/', 'http://+:80/'],
    ['http://+:80/', 'https://+:80/'],
    ['http://+:80/', 'http://+:81/'],
    ['http://+:80/a/', 'http://+:80/b/'],
    ['http://a.com:80/', 'http://b.com:80/']
  ])('%s and %s do not conflict', (a, b) => {
    const t = new RoutingTable()
    t.add(a, 'one')
    t.add(b, 'two')
    expect(t.size).toBe(2)
  })
})

describe('RoutingTable: routing as HTTP.SYS', () => {
  const req = (over) => ({ port: 8080, host: 'example.com:8080', localAddress: '127.0.0.1', path: '/', ...over })

  function table (prefixes) {
    const t = new RoutingTable()
    for (const [prefix, target] of prefixes) t.add(prefix, target)
    return t
  }

  test.each([
    // [registrations, request overrides, expected target or status]
    // a strong wildcard hides an explicit host on the same path
    [[['http://+:8080/', 'plus'], ['http://example.com:8080/', 'host']], {}, 'plus'],
    [[['http://+:8080/', 'plus'], ['http://example.com:8080/', 'host']], { path: '/x/y' }, 'plus'],
    [[['http://+:8080/', 'plus'], ['http://example.com:8080/', 'host']], { host: 'other.org' }, 'plus'],
    // a strong wildcard with a longer path beside an explicit host with /
    [[['http://+:8080/api/', 'plus'], ['http://example.com:8080/', 'host']], { path: '/api/users' }, 'plus'],
    [[['http://+:8080/api/', 'plus'], ['http://example.com:8080/', 'host']], { path: '/api' }, 'plus'],
    [[['http://+:8080/api/', 'plus'], ['http://example.com:8080/', 'host']], { path: '/apix' }, 'host'],
    [[['http://+:8080/api/', 'plus'], ['http://example.com:8080/', 'host']], { path: '/' }, 'host'],
    [[['http://+:8080/api/', 'plus'], ['http://example.com:8080/', 'host']], { path: '/', host: 'other.org' }, 404],
    // explicit: Host with and without port, case-insensitive, missing Host
    [[['http://example.com:8080/', 'host']], { host: 'EXAMPLE.com' }, 'host'],
    [[['http://example.com:8080/', 'host']], { host: 'example.com:9999' }, 'host'],
    [[['http://example.com:8080/', 'host']], { host: 'www.example.com' }, 400],
    [[['http://example.com:8080/', 'host']], { host: undefined }, 400],
    [[['http://example.com:8080/', 'host']], { host: '' }, 400],
    [[['http://example.com:8080/', 'host'], ['http://*:8080/', 'weak']], { host: undefined }, 'weak'],
    // explicit beats IP-bound beats weak
    [[['http://example.com:8080/', 'host'], ['http://127.0.0.1:8080/', 'ip'], ['http://*:8080/', 'weak']], {}, 'host'],
    [[['http://example.com:8080/', 'host'], ['http://127.0.0.1:8080/', 'ip'], ['http://*:8080/', 'weak']], { host: 'x.org' }, 'ip'],
    [[['http://example.com:8080/', 'host'], ['http://127.0.0.1:8080/', 'ip'], ['http://*:8080/', 'weak']], { host: 'x.org', localAddress: '10.0.0.1' }, 'weak'],
    // IP-bound vs weak: the IP-bound path must match, else weak takes it
    [[['http://127.0.0.1:8080/ip/', 'ip'], ['http://*:8080/', 'weak']], { path: '/ip/a' }, 'ip'],
    [[['http://127.0.0.1:8080/ip/', 'ip'], ['http://*:8080/', 'weak']], { path: '/other' }, 'weak'],
    [[['http://127.0.0.1:8080/ip/', 'ip'], ['http://*:8080/', 'weak']], { path: '/ip/a', localAddress: '10.0.0.2' }, 'weak'],
    // IP-bound matches the local address, never the Host header
    [[['http://127.0.0.1:8080/', 'ip']], { host: '127.0.0.1:8080', localAddress: '10.0.0.1' }, 400],
    [[['http://127.0.0.1:8080/', 'ip']], { host: 'anything', localAddress: '::ffff:127.0.0.1' }, 'ip'],
    [[['http://127.0.0.1:8080/', 'ip']], { localAddress: undefined }, 400],
    // IPv6 literals
    [[['http://[::1]:8080/', 'v6']], { host: '[::1]:8080', localAddress: '::1' }, 'v6'],
    [[['http://[::1]:8080/', 'v6']], { host: '[::1]', localAddress: '0:0:0:0:0:0:0:1' }, 'v6'],
    [[['http://[::1]:8080/', 'v6']], { localAddress: '127.0.0.1' }, 400],
    [[['http://[fe80::1]:8080/', 'v6']], { localAddress: 'fe80::1%eth0' }, 'v6'],
    [[['http://[::ffff:127.0.0.1]:8080/', 'mapped']], { localAddress: '127.0.0.1' }, 'mapped'],
    // weak catches what nobody else takes
    [[['http://*:8080/', 'weak']], { host: undefined, localAddress: undefined }, 'weak'],
    // longest path within a category
    [[['http://+:8080/', 'root'], ['http://+:8080/dir/sna/', 'sna']], { path: '/dir/sna/snadefault.htm' }, 'sna'],
    [[['http://+:8080/', 'root'], ['http://+:8080/dir/sna/', 'sna']], { path: '/dir/app.htm' }, 'root'],
    [[['http://+:8080/', 'root'], ['http://+:8080/dir/sna/', 'sna']], { path: '/dir/sna' }, 'sna'],
    [[['http://+:8080/a/', 'a'], ['http://+:8080/a/b/', 'ab'], ['http://+:8080/a/b/c/', 'abc']], { path: '/a/b/x' }, 'ab'],
    // segment boundaries
    [[['http://+:8080/api/', 'api']], { path: '/api' }, 'api'],
    [[['http://+:8080/api/', 'api']], { path: '/api/' }, 'api'],
    [[['http://+:8080/api/', 'api']], { path: '/apix' }, 404],
    [[['http://+:8080/api/', 'api']], { path: '/ap' }, 404],
    // case-insensitive paths
    [[['http://+:8080/Api/', 'api']], { path: '/aPI/Users' }, 'api'],
    [[['http://+:8080/api/', 'api']], { path: '/API' }, 'api'],
    // query strings
    [[['http://+:8080/api/', 'api']], { path: '/api?x=/y' }, 'api'],
    [[['http://+:8080/api/', 'api']], { path: '/apix?/api/' }, 404],
    [[['http://+:8080/api/', 'api']], { path: '/api/%41?q' }, 'api'],
    // percent-encoding of unreserved characters is decoded before matching
    [[['http://+:8080/api/', 'api']], { path: '/%61%50i/x' }, 'api'],
    [[['http://+:8080/~user/', 'u']], { path: '/%7Euser/' }, 'u'],
    [[['http://+:8080/a%20b/', 'sp']], { path: '/A%20B/c' }, 'sp'],
    [[['http://+:8080/café/', 'cafe']], { path: '/CAF%C3%A9/menu' }, 'cafe'],
    // an encoded / stays data, never a separator
    [[['http://+:8080/api/', 'api']], { path: '/api%2Fx' }, 404],
    // dot segments are resolved and never climb above /
    [[['http://+:8080/api/', 'api'], ['http://+:8080/', 'root']], { path: '/api/../admin' }, 'root'],
    [[['http://+:8080/api/', 'api']], { path: '/api/../admin' }, 404],
    [[['http://+:8080/api/', 'api']], { path: '/api/%2e%2e/admin' }, 404],
    [[['http://+:8080/api/', 'api']], { path: '/x/../api/y' }, 'api'],
    [[['http://+:8080/api/', 'api']], { path: '/../../api/y' }, 'api'],
    [[['http://+:8080/api/', 'api']], { path: '/./api/./y' }, 'api'],
    [[['http://+:8080/api/', 'api']], { path: '/api/x/..' }, 'api'],
    [[['http://+:8080/api/', 'api']], { path: '/api/..' }, 404],
    [[['http://+:8080/api/', 'api']], { path: '/.well-known/api/' }, 404],
    // backslash is a separator for HTTP.SYS (KB 896287)
    [[['http://+:8080/api/', 'api']], { path: '/api\\x' }, 'api'],
    [[['http://+:8080/api/', 'api']], { path: '/api\\..\\admin' }, 404],
    // malformed percent-encoding is a bad request
    [[['http://+:8080/', 'root']], { path: '/a%zz' }, 400],
    // absolute-form target: its authority is the host
    [[['http://example.com:8080/', 'host']], { host: 'other', path: 'http://Example.com:8080/x?y' }, 'host'],
    [[['http://+:8080/', 'root']], { path: 'OPTIONS-garbage' }, 400],
    [[['http://+:8080/', 'root']], { path: '*' }, 'root'],
    // nothing registered on that port, or for that scheme
    [[['http://+:8080/', 'root']], { port: 8081 }, 400],
    [[['http://+:8080/', 'root']], { scheme: 'https' }, 400],
    [[['https://+:8080/', 'tls']], { scheme: 'https' }, 'tls'],
    [[['https://+:8080/', 'tls'], ['http://+:8080/', 'plain']], {}, 'plain'],
    [[], {}, 400]
  ])('%j + %j -> %p', (prefixes, over, expected) => {
    const t = table(prefixes)
    const res = t.route(req(over))
    if (typeof expected === 'number') {
      expect(res).toEqual({ status: expected })
    } else {
      expect(res.target).toBe(expected)
      expect(res.prefix).toBe(normalize(prefixes.find(([, target]) => target === expected)[0]))
    }
  })

  test('a removed prefix stops routing and the next category takes over', () => {
    const t = table([['http://+:8080/', 'plus'], ['http://example.com:8080/', 'host']])
    expect(t.route(req()).target).toBe('plus')
    t.remove('http://+:8080/')
    expect(t.route(req()).target).toBe('host')
    t.remove('http://example.com:8080/')
    expect(t.route(req())).toEqual({ status: 400 })
  })

  test('registration order does not change the longest match', () => {
    const a = table([['http://+:8080/a/b/', 'ab'], ['http://+:8080/', 'root'], ['http://+:8080/a/', 'a']])
    const b = table([['http://+:8080/', 'root'], ['http://+:8080/a/', 'a'], ['http://+:8080/a/b/', 'ab']])
    for (const path of ['/a/b/c', '/a/x', '/z']) {
      expect(a.route(req({ path })).target).toBe(b.route(req({ path })).target)
    }
    expect(a.route(req({ path: '/a/b/c' })).target).toBe('ab')
  })

  test('route answers with the registered target object itself', () => {
    const target = { name: 'app', queue: {} }
    const t = table([['http://+:8080/', target]])
    expect(t.route(req()).target).toBe(target)
  })

  test('many distinct Host headers do not break explicit routing', () => {
    const t = table([['http://example.com:8080/', 'host'], ['http://*:8080/', 'weak']])
    for (let i = 0; i < 1000; i++) {
      expect(t.route(req({ host: `h${i}.test` })).target).toBe('weak')
    }
    expect(t.route(req()).target).toBe('host')
  })
})
