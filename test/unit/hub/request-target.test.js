'use strict'

const { isInvalidUrl } = require('../../../src/hub/request-target')

describe('isInvalidUrl (why routing said 400)', () => {
  test.each(['/x%zz', '/100%', '/a%4', '/%', 'http://h/%zz', 'HTTPS://h/a%g1', 'ftp://x/', 'relative'])('%s is an invalid URL', (t) => {
    expect(isInvalidUrl(t)).toBe(true)
  })

  test.each(['/', '*', '/ok%41', '/%2F%2f', '/q?x=%zz', '/p#%', 'http://h/ok', 'http://h%zz/a', 'http://h?%'])('%s is a valid URL (a 400 for it is about the host)', (t) => {
    expect(isInvalidUrl(t)).toBe(false)
  })
})
