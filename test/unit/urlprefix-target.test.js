'use strict'

// canonicalizeTarget(): the request target an app sees, on both routers (README "The
// router's rules"). Its one promise: the app sees the path the router routed on, so
// routing the app's url gives the same answer as routing the raw target.

const { canonicalizeTarget, RoutingTable } = require('../../src/urlprefix')

const app = (url, rawHeaders = ['Host', 'a']) => {
  const req = { url, rawHeaders }
  const host = canonicalizeTarget(req)
  return { host, url: req.url, rawHeaders: req.rawHeaders }
}

describe('canonicalizeTarget', () => {
  test.each([
    ['/', '/'],
    ['/a/b?x=/../y', '/a/b?x=/../y'],
    ['/a/./b/../c', '/a/c'],
    ['/a/b/..', '/a/'],
    ['/a/b/.', '/a/b/'],
    ['/..', '/'],
    ['/../../x', '/x'],
    ['/a\\b\\..\\c', '/a/c'],
    ['/%2e%2E/x', '/x'],
    ['/a/%2e/b', '/a/b'],
    ['/%41%62c%7e%2d%5f%2E', '/Abc~-_.'],
    ['/a%2Fb/%2f', '/a%2Fb/%2f'],
    ['/a%20b/%C3%A9/%25', '/a%20b/%C3%A9/%25'],
    ['/%252e%252e/x', '/%252e%252e/x'],
    ['/a%5C..%5Cb', '/a%5C..%5Cb'],
    ['/.well-known/x', '/.well-known/x'],
    ['/a/...', '/a/...'],
    ['/a//b/../c', '/a//c'],
    ['/A/B/../C?Q=%2e', '/A/C?Q=%2e'],
    ['/a/..?x', '/?x'],
    ['/a#frag/../b', '/a#frag/../b'],
    ['*', '*']
  ])('origin-form %s -> %s, Host kept', (raw, url) => {
    expect(app(raw)).toEqual({ host: '', url, rawHeaders: ['Host', 'a'] })
  })

  test.each([
    ['http://internal.local/reset', '/reset', 'internal.local'],
    ['HTTP://Internal.Local:8080/a/../b?x=1', '/b?x=1', 'Internal.Local:8080'],
    ['https://h', '/', 'h'],
    ['http://h?q', '/?q', 'h'],
    ['http://[::1]:81/x', '/x', '[::1]:81']
  ])('absolute-form %s -> %s with Host %s', (raw, url, host) => {
    expect(app(raw, ['Host', 'evil.example', 'host', 'evil.example', 'X', '1'])).toEqual({ host, url, rawHeaders: ['Host', host, 'host', host, 'X', '1'] })
  })

  test('absolute-form without a Host header (HTTP/1.0) gets one', () => {
    expect(app('http://h/x', ['X', '1'])).toEqual({ host: 'h', url: '/x', rawHeaders: ['X', '1', 'Host', 'h'] })
  })

  test.each([
    '/x%zz', '/100%', '/a%4', 'ftp://h/x', 'http:/x', 'http:///x', 'http://:80/x', 'http://u@h/x',
    'http://h"/x', 'http://h<>/x', 'x/y', ''
  ])('%j is malformed (null), nothing changed', (raw) => {
    expect(app(raw)).toEqual({ host: null, url: raw, rawHeaders: ['Host', 'a'] })
  })

  // a deterministic walk through targets built from the characters that matter
  const PIECES = ['a', 'B', '.', '..', '/', '/', '%2e', '%2E', '%41', '%2f', '%25', '\\', '~', '%7e', '?', '/..', '/.', 'x']
  function * targets (n) {
    let seed = 12345
    const rand = (k) => {
      seed = (seed * 1103515245 + 12345) >>> 0
      return seed % k
    }
    for (let i = 0; i < n; i++) {
      let t = '/'
      const len = 1 + rand(10)
      for (let j = 0; j < len; j++) t += PIECES[rand(PIECES.length)]
      yield t
    }
  }

  test('routing the app\'s url gives what routing the raw target gave', () => {
    const table = new RoutingTable()
    for (const p of ['/', '/a/', '/a/b/', '/b/', '/A./', '/~/', '/.a/', '/a%2fb/']) table.add(`http://+:80${p}`, p)
    for (const raw of targets(3000)) {
      const { url, host } = app(raw)
      if (host === null) continue
      expect([raw, table.route({ port: 80, host: 'a', path: url })]).toEqual([raw, table.route({ port: 80, host: 'a', path: raw })])
    }
  })

  test('canonical is a fixed point: a second pass changes nothing', () => {
    for (const raw of targets(3000)) {
      const once = app(raw)
      if (once.host === null) continue
      expect([raw, app(once.url).url]).toEqual([raw, once.url])
    }
  })
})
