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

test('coded errors look like node\'s own: name is the class\'s, the code shows in toString() and the stack\'s first line', () => {
  const http = require('node:http')
  let nodeErr
  try { http.validateHeaderName('bad name') } catch (err) { nodeErr = err }
  const ours = new codes.ERR_INVALID_HTTP_TOKEN({ label: 'Header name', value: 'bad name' })
  expect(nodeErr.name).toBe('TypeError')
  expect(ours.name).toBe(nodeErr.name)
  expect(String(ours)).toBe(String(nodeErr))
  // node's stack header (jest formats node's own stacks itself, so it is written out here)
  expect(ours.stack.split('\n')[0]).toBe('TypeError [ERR_INVALID_HTTP_TOKEN]: Header name must be a valid HTTP token ["bad name"]')
  expect(ours).toBeInstanceOf(TypeError)
  ours.name = 'Renamed' // assignable, as node's
  expect(ours.name).toBe('Renamed')
})
