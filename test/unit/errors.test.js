'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { codes } = require('../../src/errors')

const readme = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8')
// The README's error table: rows of the form | `ERR_HTTPSYS_X` | meaning | fix |
const documented = new Map()
for (const line of readme.split('\n')) {
  const m = /^\|\s*`(ERR_[A-Z_]+)`\s*\|([^|]+)\|([^|]+)\|/.exec(line)
  if (m) documented.set(m[1], { meaning: m[2].trim(), fix: m[3].trim() })
}
const ours = Object.keys(codes).filter((code) => code.startsWith('ERR_HTTPSYS_'))

describe('errors', () => {
  test.each(ours)('%s is in the README error table with a meaning and a fix', (code) => {
    expect(documented.has(code)).toBe(true)
    expect(documented.get(code).meaning.length).toBeGreaterThan(5)
    expect(documented.get(code).fix.length).toBeGreaterThan(5)
  })

  test('the README documents no code that does not exist', () => {
    const stale = [...documented.keys()].filter((code) => !(code in codes))
    expect(stale).toEqual([])
  })

  test('errors carry their code, details and a message naming the fix', () => {
    const err = new codes.ERR_HTTPSYS_PORT_IN_USE({ port: 8080, owner: 'pid 42 (nginx)' })
    expect(err).toBeInstanceOf(Error)
    expect(err.code).toBe('ERR_HTTPSYS_PORT_IN_USE')
    expect(err.port).toBe(8080)
    expect(err.message).toMatch(/8080.*pid 42 \(nginx\)/)
    expect(err.message).toMatch(/choose another port/)
  })

  test('node-compatible codes keep node\'s classes', () => {
    expect(new codes.ERR_INVALID_ARG_TYPE({ name: 'x', expected: 'a string' })).toBeInstanceOf(TypeError)
    expect(new codes.ERR_HTTP_INVALID_STATUS_CODE({ value: 42 })).toBeInstanceOf(RangeError)
    expect(new codes.ERR_HTTP_HEADERS_SENT({ action: 'set' }).message).toBe('Cannot set headers after they are sent to the client')
  })
})
