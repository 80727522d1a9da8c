'use strict'

const { LineSplitter } = require('../../../src/supervisor/line-splitter')

function split (chunks, options) {
  const lines = []
  const splitter = new LineSplitter((line, truncated) => lines.push(truncated ? [line, 'truncated'] : line), options)
  for (const c of chunks) splitter.push(typeof c === 'string' ? Buffer.from(c) : c)
  splitter.end()
  return lines
}

test.each([
  ['one line per newline', ['a\nb\n'], ['a', 'b']],
  ['a line split across chunks', ['hel', 'lo\nwor', 'ld\n'], ['hello', 'world']],
  ['CRLF endings lose the CR', ['dos\r\nline\r\n'], ['dos', 'line']],
  ['a last line without newline is flushed at the end', ['done\npartial'], ['done', 'partial']],
  ['empty lines are skipped', ['\n\na\n\r\n'], ['a']]
])('%s', (name, chunks, expected) => {
  expect(split(chunks)).toEqual(expected)
})

test('a multi-byte character cut between chunks survives', () => {
  const bytes = Buffer.from('caf\u00e9\n')
  expect(split([bytes.subarray(0, 4), bytes.subarray(4)])).toEqual(['caf\u00e9'])
})

test('a line longer than maxLength is cut once, the rest of it dropped', () => {
  expect(split(['x'.repeat(10), 'y'.repeat(10), 'z\nnext\n'], { maxLength: 8 }))
    .toEqual([['x'.repeat(8), 'truncated'], 'next'])
})

test('every line over maxLength is cut, also when it arrives whole in one chunk', () => {
  const long = 'a'.repeat(20)
  expect(split([`${long}\nshort\n${'b'.repeat(12)}\r\n${'c'.repeat(9)}`], { maxLength: 8 })).toEqual([
    ['a'.repeat(8), 'truncated'], 'short', ['b'.repeat(8), 'truncated'], ['c'.repeat(8), 'truncated']
  ])
})

test('the default 64 KiB cap holds for 70 KB and 100 KB lines written in one go', () => {
  const lines = split([`L70K:${'a'.repeat(70000)}\nL100K:${'b'.repeat(100000)}:END\nok\n`])
  expect(lines.map((l) => Array.isArray(l) ? [l[0].length, l[1]] : l)).toEqual([[65536, 'truncated'], [65536, 'truncated'], 'ok'])
})
