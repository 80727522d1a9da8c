'use strict'

const { distance, didYouMean } = require('../../../src/config/suggest')

test.each([
  ['', 'abc', 3],
  ['kitten', 'sitting', 3],
  ['instances', 'instances', 0],
  ['instance', 'instances', 1],
  ['wacth', 'watch', 1], // two neighbours swapped: one slip of the fingers
  ['ca', 'abc', 3]
])('distance(%p, %p) = %p', (a, b, d) => {
  expect(distance(a, b)).toBe(d)
  expect(distance(b, a)).toBe(d)
})

const KEYS = ['name', 'script', 'urls', 'instances', 'args', 'node_args', 'env', 'cwd', 'kill_timeout']

test.each([
  ['instance', 'instances'],
  ['url', 'urls'],
  ['scirpt', 'script'],
  ['nodeArgs', 'node_args'],
  ['KILL_TIMEOUT', 'kill_timeout'],
  ['environment', undefined],
  ['x', undefined]
])('%p -> %p', (typed, expected) => {
  expect(didYouMean(typed, KEYS)).toBe(expected)
})

test('aliases win over distance', () => {
  expect(didYouMean('prefix', KEYS, { prefix: 'urls' })).toBe('urls')
})
