'use strict'

const {
  validateHeaderName, validateHeaderValue, buildHeaders, buildDistinct, utcDate
} = require('../../../src/http/headers')

describe('validation (node\'s rules)', () => {
  test.each(['Content-Type', 'x-a', "!#$%&'*+-.^_`|~09azAZ"])('token %s is a valid name', (name) => {
    expect(() => validateHeaderName(name)).not.toThrow()
  })

  test.each(['', 'a b', 'a:b', 'é', 'a\nb', '(x)', undefined, 5])('%j is not a header name', (name) => {
    expect(() => validateHeaderName(name)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_HTTP_TOKEN' }))
  })

  test('values: tab, visible ASCII and obs-text pass; CR, LF, NUL do not', () => {
    expect(() => validateHeaderValue('x', 'a\tb ~\u00ff')).not.toThrow()
    expect(() => validateHeaderValue('x', 42)).not.toThrow()
    for (const bad of ['a\rb', 'a\nb', 'a\u0000b', 'a\u007fb', 'ā']) {
      expect(() => validateHeaderValue('x', bad)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_CHAR' }))
    }
    expect(() => validateHeaderValue('x', undefined)).toThrow(expect.objectContaining({ code: 'ERR_HTTP_INVALID_HEADER_VALUE' }))
  })
})

describe('req.headers folding', () => {
  test('names such as "constructor" or "__proto__" do not break the object', () => {
    const h = buildHeaders(['Constructor', 'a', 'constructor', 'b', '__proto__', 'x'], false)
    expect(h.constructor).toBe('a, b')
    expect(Object.getPrototypeOf(h)).toBe(Object.prototype)
  })

  test('headersDistinct keeps every value, null prototype', () => {
    const d = buildDistinct(['A', '1', 'a', '2', '__proto__', 'p'])
    expect(d.a).toEqual(['1', '2'])
    expect(d.__proto__).toEqual(['p']) // eslint-disable-line no-proto
    expect(Object.getPrototypeOf(d)).toBe(null)
  })
})

test('utcDate is an IMF-fixdate and is cached within the second', () => {
  const a = utcDate()
  expect(a).toMatch(/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT$/)
  expect(utcDate()).toBe(a)
})
