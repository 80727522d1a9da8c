'use strict'

// The router's rules HTTP.SYS does not apply itself, applied by the worker's HTTP.SYS
// attachment before src/http (and the app) sees a request, so an app behaves the same
// on both routers (README "The router's rules"; the hub's side is
// test/integration/router-rules.test.js). HTTP.SYS hands over any verb
// (HttpVerbUnknown) and the raw URL as sent, while it routes on its cooked URL.

const { createBackend } = require('../../../src/queue/httpsys')
const { RESPONSE_CLOSE } = require('../../../src/wire/contract')
const { createFakeAddon, fakeRequest, EVENT } = require('../../helpers/fake-addon')

async function attached () {
  const binding = createFakeAddon()
  const backend = createBackend(() => binding)
  const seen = []
  const handlers = {
    onRequest: (req) => seen.push(req),
    onAbort: (id) => seen.push(['abort', id])
  }
  await backend.attach({ urls: ['http://+:8080/'], handlers })
  return { queue: binding.queues[binding.queues.length - 1], seen }
}

const host = (req) => {
  const out = []
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i].toLowerCase() === 'host') out.push(req.rawHeaders[i + 1])
  return out
}

describe('HTTP.SYS attachment: methods node does not know', () => {
  test.each(['post', 'Get', 'BREW', 'FROB', 'PRI'])('%s is answered 400 with a close and never reaches the app', async (method) => {
    const { queue, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { method, url: '/admin/x' })])
    expect(seen).toEqual([])
    const [[id, status, reason, headers, , flags]] = queue.callsOf('respond')
    expect([id, status, reason, flags & RESPONSE_CLOSE]).toEqual([1, 400, 'Bad Request', RESPONSE_CLOSE])
    expect(headers).toEqual(expect.arrayContaining(['Connection', 'close']))
  })

  test('its body, if any, never reaches the app either', async () => {
    const { queue, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { method: 'post', hasBody: true, rawHeaders: ['Host', 'x', 'Content-Length', '3'] }),
      EVENT.BODY, 1, Buffer.from('abc'), EVENT.BODY_END, 1, 0])
    expect(seen).toEqual([])
  })

  test.each(['GET', 'PURGE', 'M-SEARCH', 'QUERY', 'MKCALENDAR'])('%s reaches the app', async (method) => {
    const { queue, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { method })])
    expect(seen.map((r) => r.method)).toEqual([method])
    expect(queue.callsOf('respond')).toEqual([])
  })
})

describe('HTTP.SYS attachment: the app sees the path HTTP.SYS routed on', () => {
  test.each([
    ['/api/../admin/x', '/admin/x'],
    ['/api/%2e%2e/admin/x', '/admin/x'],
    ['/api\\..\\admin\\x', '/admin/x'],
    ['/%61dmin/x?next=/../y', '/admin/x?next=/../y'],
    ['/admin/a%2Fb/%7Euser', '/admin/a%2Fb/~user'],
    ['/plain/path.txt?q=1', '/plain/path.txt?q=1']
  ])('raw URL %s reaches the app as %s', async (url, expected) => {
    const { queue, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { url })])
    expect(seen[0].url).toBe(expected)
  })

  test('an absolute-form raw URL: origin-form url, and its authority replaces the Host header', async () => {
    const { queue, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { url: 'http://internal.local/reset?u=1', rawHeaders: ['Host', 'evil.example', 'X-A', '1'] })])
    expect(seen[0].url).toBe('/reset?u=1')
    expect(host(seen[0])).toEqual(['internal.local'])
    expect(seen[0].rawHeaders).toEqual(['Host', 'internal.local', 'X-A', '1'])
  })

  test.each(['/x%zz', 'http://user@internal.local/x', 'http:///x'])('a target that cannot be canonicalised (%s) is 400', async (url) => {
    const { queue, seen } = await attached()
    queue.emit([EVENT.REQUEST, 1, fakeRequest(1, { url })])
    expect(seen).toEqual([])
    expect(queue.callsOf('respond').map((c) => c[1])).toEqual([400])
  })
})
