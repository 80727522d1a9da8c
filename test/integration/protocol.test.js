'use strict'

// HTTP/1.1 corners through the hub and src/http, against a plain node app under
// `httpsys start`: what a client sees must be what bare node would send.

const crypto = require('node:crypto')
const http = require('node:http')
const path = require('node:path')
const { startHttpsys, freePort } = require('../helpers/httpsys-process')
const { rawRequest, parseResponses } = require('../helpers/raw-http')

const app = path.join(__dirname, '..', 'fixtures', 'compat', 'semantics-app.js')
let handle
let port
let base

beforeAll(async () => {
  port = await freePort()
  base = `http://127.0.0.1:${port}`
  handle = await startHttpsys(['start', app], { env: { PORT: String(port) }, readyUrl: `${base}/count` })
})
afterAll(() => handle && handle.stop())

const count = async () => (await (await fetch(`${base}/count`)).json()).requests

test('HEAD gets the headers and no body; the connection stays usable', async () => {
  const out = await rawRequest(port, 'HEAD /h HTTP/1.1\r\nHost: a\r\n\r\nGET /g HTTP/1.1\r\nHost: a\r\n\r\n')
  const end = out.indexOf('\r\n\r\n') + 4
  expect(out.slice(0, end)).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
  // the next response starts right after the HEAD response's head: no body bytes between
  const rest = out.slice(end)
  expect(rest).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
  expect(parseResponses(rest)).toMatchObject([{ status: 200, body: 'hello GET /g' }])
})

test('204 and 304 carry no body', async () => {
  const noContent = await fetch(`${base}/nocontent`)
  expect(noContent.status).toBe(204)
  expect(await noContent.text()).toBe('')
  const fresh = await fetch(`${base}/cached`)
  expect(fresh.headers.get('etag')).toBe('"v1"')
  const cached = await fetch(`${base}/cached`, { headers: { 'if-none-match': '"v1"' } })
  expect(cached.status).toBe(304)
  expect(await cached.text()).toBe('')
})

test('several Set-Cookie headers stay separate', async () => {
  const res = await fetch(`${base}/cookies`)
  expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; HttpOnly', 'c=3'])
})

test('pipelined requests are answered in order even when the first is slowest', async () => {
  const reqs = ['/slow?ms=300', '/slow?ms=10', '/fast'].map((p) => `GET ${p} HTTP/1.1\r\nHost: a\r\n\r\n`).join('')
  const responses = parseResponses(await rawRequest(port, reqs, { idleMs: 1500 }))
  expect(responses.map((r) => r.body)).toEqual(['slow 300', 'slow 10', 'hello GET /fast'])
})

test('Expect: 100-continue gets 100 before the body; a denied one gets 417 without it', async () => {
  const body = 'x'.repeat(1000)
  const out = await new Promise((resolve, reject) => {
    const req = http.request({ port, method: 'POST', path: '/sha256', headers: { expect: '100-continue', 'content-length': body.length } })
    let continued = false
    req.on('continue', () => { continued = true; req.end(body) })
    req.on('response', async (res) => {
      let text = ''
      for await (const c of res) text += c
      resolve({ continued, status: res.statusCode, json: JSON.parse(text) })
    })
    req.on('error', reject)
  })
  expect(out.continued).toBe(true)
  expect(out.json).toEqual({ sha256: crypto.createHash('sha256').update(body).digest('hex'), bytes: 1000 })

  const denied = await rawRequest(port, 'POST /sha256 HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nX-Deny: 1\r\nContent-Length: 10\r\n\r\n', { idleMs: 500 })
  expect(denied).not.toMatch(/100 Continue/)
  expect(denied).toMatch(/^HTTP\/1\.1 417 /)
})

test('a 10 MB POST body arrives intact', async () => {
  const body = crypto.randomBytes(10 * 1024 * 1024)
  const res = await fetch(`${base}/sha256`, { method: 'POST', body })
  expect(await res.json()).toEqual({ sha256: crypto.createHash('sha256').update(body).digest('hex'), bytes: body.length })
})

test('a chunked upload arrives intact', async () => {
  const hash = crypto.createHash('sha256')
  const json = await new Promise((resolve, reject) => {
    const req = http.request({ port, method: 'POST', path: '/sha256' }, async (res) => {
      let text = ''
      for await (const c of res) text += c
      resolve(JSON.parse(text))
    })
    req.on('error', reject)
    for (let i = 0; i < 200; i++) {
      const chunk = crypto.randomBytes(1000 + i * 37)
      hash.update(chunk)
      req.write(chunk)
    }
    req.end()
  })
  expect(json.sha256).toBe(hash.digest('hex'))
})

test('a rejected async handler is answered 500 and the app keeps serving', async () => {
  const res = await fetch(`${base}/reject`)
  expect(res.status).toBe(500)
  expect((await fetch(`${base}/`)).status).toBe(200)
})

describe('bad input is answered by the router and never reaches the app', () => {
  test.each([
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400],
    ['a header without a colon', 'GET / HTTP/1.1\r\nHost: a\r\nNoColonHere\r\n\r\n', 400],
    ['Content-Length with Transfer-Encoding', 'POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
    ['HTTP/1.1 without Host', 'GET / HTTP/1.1\r\n\r\n', 400],
    ['headers over 16 KB', `GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(17 * 1024)}\r\n\r\n`, 431]
  ])('%s', async (_, data, status) => {
    const before = await count()
    const out = await rawRequest(port, data)
    expect(out).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `))
    expect(out).toMatch(/connection: close/i)
    expect(await count()).toBe(before)
  })
})
