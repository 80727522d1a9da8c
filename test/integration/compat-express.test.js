'use strict'

// An unmodified express app under `httpsys start`: routing, bodies, cookies, static files
// with Range and 304, streaming, 404s and error middleware all behave as on bare node.

const http = require('node:http')
const path = require('node:path')
const { startHttpsys, freePort } = require('../helpers/httpsys-process')

const app = path.join(__dirname, '..', 'fixtures', 'compat', 'express-app.js')
let handle
let base

beforeAll(async () => {
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  handle = await startHttpsys(['start', app], { env: { PORT: String(port) }, readyUrl: `${base}/count` })
})
afterAll(() => handle && handle.stop())

test('routes with params and query', async () => {
  const res = await fetch(`${base}/api/users/42?q=x`)
  expect(res.status).toBe(200)
  expect(await res.json()).toEqual({ id: '42', q: 'x' })
})

test('JSON and urlencoded bodies', async () => {
  let res = await fetch(`${base}/api/echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: [1, 2], b: 'é' }) })
  expect(res.status).toBe(201)
  expect(await res.json()).toEqual({ body: { a: [1, 2], b: 'é' }, type: 'application/json' })
  res = await fetch(`${base}/api/form`, { method: 'POST', body: new URLSearchParams({ x: '1', y: 'two words' }) })
  expect(await res.json()).toEqual({ x: '1', y: 'two words' })
})

test('cookies: two Set-Cookie headers out, Cookie header in', async () => {
  const res = await fetch(`${base}/cookies/set`)
  const cookies = res.headers.getSetCookie()
  expect(cookies).toHaveLength(2)
  expect(cookies[0]).toMatch(/^a=1; Path=\/; HttpOnly/)
  expect(cookies[1]).toMatch(/^b=2; Path=\/cookies/)
  const back = await fetch(`${base}/cookies/get`, { headers: { cookie: 'a=1; b=2' } })
  expect(await back.json()).toEqual({ a: '1', b: '2' })
})

test('express.static: full file, Range and 304', async () => {
  const full = await fetch(`${base}/static/big.txt`)
  expect(full.status).toBe(200)
  const text = await full.text()
  expect(text.length).toBeGreaterThan(150000)
  expect(Number(full.headers.get('content-length'))).toBe(text.length)
  const etag = full.headers.get('etag')

  const range = await fetch(`${base}/static/big.txt`, { headers: { range: 'bytes=100-199' } })
  expect(range.status).toBe(206)
  expect(range.headers.get('content-range')).toBe(`bytes 100-199/${text.length}`)
  expect(await range.text()).toBe(text.slice(100, 200))

  // node's http client, not fetch: fetch adds `Cache-Control: no-cache` to conditional
  // requests, and express rightly answers those 200
  const notModified = await new Promise((resolve, reject) => {
    http.get(`${base}/static/big.txt`, { headers: { 'if-none-match': etag } }, (res) => {
      let body = ''
      res.on('data', (c) => { body += c })
      res.on('end', () => resolve({ status: res.statusCode, body }))
    }).on('error', reject)
  })
  expect(notModified).toEqual({ status: 304, body: '' })
})

test('a streamed response written with backpressure arrives whole', async () => {
  const res = await fetch(`${base}/stream`)
  expect(res.headers.get('transfer-encoding')).toBe('chunked')
  const body = Buffer.from(await res.arrayBuffer())
  expect(body.length).toBe(64 * 16 * 1024)
  expect(body.every((b) => b === 0x78)).toBe(true)
})

test('404 handler and error middleware', async () => {
  const missing = await fetch(`${base}/nope`)
  expect(missing.status).toBe(404)
  expect(await missing.json()).toEqual({ error: 'not found', path: '/nope' })
  const boom = await fetch(`${base}/boom`)
  expect(boom.status).toBe(500)
  expect(await boom.json()).toEqual({ error: 'kaboom' })
  const asyncBoom = await fetch(`${base}/async-boom`)
  expect(asyncBoom.status).toBe(500)
  expect(await asyncBoom.json()).toEqual({ error: 'async kaboom' })
})
