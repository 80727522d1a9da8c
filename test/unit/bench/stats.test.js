'use strict'

const { median, ratio, pairedRatio, roundOrder, summarise } = require('../../../bench/lib/stats')

test('median of odd and even counts, unsorted input, missing values left out', () => {
  expect(median([3, 1, 2])).toBe(2)
  expect(median([4, 1, 3, 2])).toBe(2.5)
  expect(median([10, null, undefined, NaN, 20])).toBe(15)
  expect(median([])).toBeNull()
  expect(median([null])).toBeNull()
  // sorted as numbers, not as strings
  expect(median([100, 9, 20])).toBe(20)
})

test('ratio is null for a missing or non-positive base', () => {
  expect(ratio(3, 2)).toBe(1.5)
  expect(ratio(0, 2)).toBe(0)
  expect(ratio(3, 0)).toBeNull()
  expect(ratio(null, 2)).toBeNull()
  expect(ratio(3, undefined)).toBeNull()
})

test('pairedRatio is the median of per-round ratios, not the ratio of medians', () => {
  // the machine got slower in round 2: both targets dropped, their ratio did not
  const rounds = [
    { a: { rps: 110 }, b: { rps: 100 } },
    { a: { rps: 55 }, b: { rps: 50 } },
    { a: { rps: 300 }, b: { rps: 200 } }
  ]
  expect(pairedRatio(rounds, 'rps', 'a', 'b')).toBeCloseTo(1.1)
  // a round where one side failed does not count
  expect(pairedRatio([...rounds.slice(0, 2), { b: { rps: 100 } }], 'rps', 'a', 'b')).toBeCloseTo(1.1)
  expect(pairedRatio([{ b: { rps: 1 } }], 'rps', 'a', 'b')).toBeNull()
})

test('roundOrder: each pair of rounds gives every target the same mean position, and the first target changes', () => {
  const t = ['a', 'b', 'c', 'd', 'e']
  expect(roundOrder(t, 0)).toEqual(['a', 'b', 'c', 'd', 'e'])
  expect(roundOrder(t, 1)).toEqual(['e', 'd', 'c', 'b', 'a'])
  expect(roundOrder(t, 2)).toEqual(['b', 'c', 'd', 'e', 'a'])
  for (let pair = 0; pair < 4; pair++) {
    const a = roundOrder(t, 2 * pair)
    const b = roundOrder(t, 2 * pair + 1)
    for (const x of t) expect(a.indexOf(x) + b.indexOf(x)).toBe(t.length - 1)
  }
  expect(new Set([0, 1, 2, 3].map((r) => roundOrder(t, r)[0])).size).toBe(3)
  for (let r = 0; r < 7; r++) expect([...roundOrder(t, r)].sort()).toEqual(t)
  expect(roundOrder([], 3)).toEqual([])
})

test('summarise takes each figure\'s median and sums the errors', () => {
  const s = summarise([
    { rps: 100, p50: 1, p99: 5, cpuUsPerRequest: 20, rssMB: 50, errors: 2 },
    { rps: 300, p50: 3, p99: 9, cpuUsPerRequest: null, rssMB: 70, errors: 0 },
    { rps: 200, p50: 2, p99: 7, cpuUsPerRequest: 40, rssMB: 60 }
  ])
  expect(s).toEqual({ rps: 200, p50: 2, p99: 7, cpuUsPerRequest: 30, rssMB: 60, errors: 2, rounds: 3 })
})
