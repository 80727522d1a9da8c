'use strict'

// The matrix's --targets list: httpsys-1/-N are the router; the names the router's columns
// had while the JS hub was the default still work, as the same columns.

const { targets, pickTargets } = require('../../../bench/lib/targets')

const names = (list) => list.map((t) => t.name)

test('the servers: one httpsys pair, on the router, none named for the hub', () => {
  expect(names(targets(2))).toEqual(['node', 'cluster', 'nginx', 'httpsys-1', 'httpsys-N', 'unit', 'ceiling'])
  expect(targets(2).filter((t) => t.name.startsWith('httpsys')).every((t) => t.needs === 'router')).toBe(true)
})

test('pickTargets: native-1/-N are httpsys-1/-N, each once, in the matrix\'s order, with a note', () => {
  const { targets: picked, notes } = pickTargets(targets(2), 'native-N, node,httpsys-1,native-1')
  expect(names(picked)).toEqual(['node', 'httpsys-1', 'httpsys-N'])
  expect(notes).toEqual([
    '--targets native-N is httpsys-N (the router is the only one: the JS hub is gone)',
    '--targets native-1 is httpsys-1 (the router is the only one: the JS hub is gone)'
  ])
  expect(names(pickTargets(targets(2)).targets)).toEqual(names(targets(2)))
  expect(() => pickTargets(targets(2), 'node,hub-1')).toThrow('unknown target hub-1: one of node, cluster, nginx, httpsys-1, httpsys-N, unit, ceiling')
})
