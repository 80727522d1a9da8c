'use strict'

const { targetFor, parseListenArgs } = require('../../../src/http/listen-target')

describe('targetFor', () => {
  test('standalone: no queue, the prefix derived from port and host', () => {
    const cb = () => {}
    const t = targetFor([8080, '0.0.0.0', 511, cb], {})
    expect(t.queue).toBeUndefined()
    expect(t.urls).toEqual(['http://+:8080/'])
    expect(t.callback).toBe(cb)
    expect(t.port).toBe(8080)
  })

  test('under the supervisor: the queue from HTTPSYS_QUEUE, the derived prefix along', () => {
    const t = targetFor([3000], { HTTPSYS_QUEUE: 'shop' })
    expect(t.queue).toBe('shop')
    expect(t.urls).toEqual(['http://+:3000/'])
  })

  test('a URL prefix string is normalised', () => {
    expect(targetFor(['HTTP://+:8080/api'], {}).urls).toEqual(['http://+:8080/api/'])
    expect(targetFor(['http://127.0.0.1:0/'], {}).urls).toEqual(['http://127.0.0.1:0/'])
    expect(targetFor(['http://127.0.0.1:0/'], {}).address).toBe('127.0.0.1')
  })

  test('a Unix path: the path standalone (a backend that can listens there), the app\'s queue under the supervisor', () => {
    expect(targetFor(['/tmp/x.sock'], {})).toMatchObject({ queue: undefined, urls: [], path: '/tmp/x.sock' })
    expect(targetFor([{ path: '/tmp/x.sock' }], {})).toMatchObject({ urls: [], path: '/tmp/x.sock' })
    expect(targetFor(['/tmp/x.sock'], { HTTPSYS_QUEUE: 'q' })).toMatchObject({ queue: 'q', urls: [] })
  })
})

describe('parseListenArgs (node\'s shapes)', () => {
  test.each([
    [[], { port: 0 }],
    [[() => {}], { port: 0 }],
    [[undefined], { port: 0 }],
    [[null, () => {}], { port: 0 }],
    [['3000'], { port: 3000 }],
    [[3000, 'example.com'], { port: 3000, host: 'example.com' }],
    [[3000, 511], { port: 3000, host: undefined }],
    [[{ port: '81', host: '::' }], { port: 81, host: '::' }],
    [[{ port: 0 }], { port: 0 }]
  ])('%j', (args, expected) => {
    expect(parseListenArgs(args)).toMatchObject(expected)
  })

  test('invalid ports and handles', () => {
    for (const bad of [65536, -1, 1.5, '70000']) {
      expect(() => parseListenArgs([bad])).toThrow(expect.objectContaining({ code: 'ERR_SOCKET_BAD_PORT' }))
    }
    expect(() => parseListenArgs([{ port: 'abc' }])).toThrow(expect.objectContaining({ code: 'ERR_SOCKET_BAD_PORT' }))
    expect(() => parseListenArgs([{ handle: {} }])).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE' }))
  })
})
