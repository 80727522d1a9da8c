'use strict'

// examples/express under httpsys: what a real express app does (routing, JSON and form
// bodies, cookies, static files with Range, a streamed download, 404 and error
// handlers) works through the hub as it does on plain node.

const fs = require('node:fs')
const path = require('node:path')
const { start, freePort, get, request, ROOT } = require('../fixtures/apps/harness')

const BIG = fs.readFileSync(path.join(ROOT, 'examples', 'express', 'public', 'data', 'big.txt'))

let run
let port
beforeAll(async () => {
  port = await freePort()
  run = start(['examples/express/app.js', '-n', 'express', '-u', `http://127.0.0.1:${port}/`])
  await run.waitFor((r) => r.event === 'ready')
})
afterAll(async () => {
  run.signal('SIGINT')
  await run.exited
  await run.cleanup()
})

test('JSON API: create and read a note', async () => {
  const created = await request(port, {
    method: 'POST', path: '/api/notes', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'buy milk' })
  })
  expect(created.status).toBe(201)
  const note = JSON.parse(created.body)
  expect(note).toMatchObject({ text: 'buy milk', id: expect.any(Number) })
  expect(created.headers.location).toBe(`/api/notes/${note.id}`)
  const read = await get(port, `/api/notes/${note.id}`)
  expect(JSON.parse(read.body)).toEqual(note)
  const bad = await request(port, { method: 'POST', path: '/api/notes', headers: { 'content-type': 'application/json' }, body: '{"text":' })
  expect(bad.status).toBe(400)
})

test('a form login sets a signed cookie that the next request carries', async () => {
  const login = await request(port, {
    method: 'POST', path: '/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'name=ada'
  })
  expect(login.status).toBe(303)
  expect(login.headers.location).toBe('/')
  const cookie = login.headers['set-cookie'].map((c) => c.split(';')[0]).join('; ')
  const me = await get(port, '/whoami', { headers: { cookie } })
  expect(JSON.parse(me.body)).toMatchObject({ user: 'ada', visits: 1 })
})

test('static files: whole, a byte range, and a conditional request', async () => {
  const whole = await get(port, '/data/big.txt', { raw: true })
  expect(whole.status).toBe(200)
  expect(whole.body.equals(BIG)).toBe(true)
  const range = await get(port, '/data/big.txt', { raw: true, headers: { range: 'bytes=100000-100063' } })
  expect(range.status).toBe(206)
  expect(range.headers['content-range']).toBe(`bytes 100000-100063/${BIG.length}`)
  expect(range.body.equals(BIG.subarray(100000, 100064))).toBe(true)
  const again = await get(port, '/data/big.txt', { headers: { 'if-none-match': whole.headers.etag } })
  expect(again.status).toBe(304)
  expect((await get(port, '/')).body).toContain('<h1>express under httpsys</h1>')
})

test('a streamed download arrives whole, chunked', async () => {
  const size = 3 * 1024 * 1024 + 17
  const res = await get(port, `/download?size=${size}`, { raw: true })
  expect(res.status).toBe(200)
  expect(res.headers['transfer-encoding']).toBe('chunked')
  expect(res.body.length).toBe(size)
  expect(res.body.subarray(0, 16).toString()).toBe('httpsys streams ')
})

test('unknown paths get the 404 handler, thrown errors the error middleware', async () => {
  const missing = await get(port, '/nope')
  expect(missing.status).toBe(404)
  expect(JSON.parse(missing.body)).toEqual({ error: 'not found', path: '/nope' })
  const boom = await get(port, '/boom')
  expect(boom.status).toBe(500)
  expect(JSON.parse(boom.body)).toEqual({ error: 'internal server error' })
  // the app's console.error, as an error record of that app
  await run.waitFor((r) => r.app === 'express' && r.stream === 'stderr' && /GET \/boom failed/.test(r.msg))
})
