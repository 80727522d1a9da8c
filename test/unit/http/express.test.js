'use strict'

// Express on an httpsys Server over the in-memory queue: proof that the request,
// response and socket objects satisfy a real framework. As under the preload, node's
// http classes are swapped before express loads (express builds its req/res
// prototypes from http.IncomingMessage/ServerResponse when first required).

const fs = require('node:fs')
const path = require('node:path')
const nodeHttp = require('node:http')
const ours = require('../../../src/http')
const { start, stopAll } = require('./start')

const PUBLIC = path.join(__dirname, '..', '..', 'fixtures', 'compat', 'public')
const saved = {}
let express

beforeAll(() => {
  for (const k of ['IncomingMessage', 'ServerResponse', 'Server', 'createServer']) {
    saved[k] = nodeHttp[k]
    nodeHttp[k] = ours[k]
  }
  jest.isolateModules(() => { express = require('express') })
})

afterAll(() => {
  Object.assign(nodeHttp, saved)
})

afterEach(stopAll)

function app () {
  const a = express()
  a.get('/users/:id', (req, res) => {
    res.set('X-Powered', 'test')
    res.cookie('seen', '1')
    res.cookie('again', '2')
    res.json({ id: req.params.id, q: req.query.q, ip: req.ip, protocol: req.protocol, host: req.hostname })
  })
  a.post('/echo', express.json(), (req, res) => {
    res.status(201).json({ got: req.body, type: req.get('content-type') })
  })
  a.get('/redirect', (req, res) => res.redirect('/users/1'))
  a.get('/fail', () => { throw new Error('express catches this') })
  a.use('/static', express.static(PUBLIC))
  return a
}

test('GET with res.json, params, query, req.ip, cookies', async () => {
  const { mq } = await start(app())
  const h = mq.request({ url: '/users/42?q=x', rawHeaders: ['Host', 'shop.example:8080'], remoteAddress: '10.0.0.9' })
  const r = await h.done
  expect(r.statusCode).toBe(200)
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8')
  expect(r.headers['x-powered']).toBe('test')
  expect(r.headers['set-cookie']).toEqual(['seen=1; Path=/', 'again=2; Path=/'])
  expect(JSON.parse(h.text)).toEqual({ id: '42', q: 'x', ip: '10.0.0.9', protocol: 'http', host: 'shop.example' })
  expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(h.text))
  expect(mq.callsOf('respond', h.id)).toHaveLength(1)
})

test('POST with express.json()', async () => {
  const { mq } = await start(app())
  const body = JSON.stringify({ hello: 'wörld', n: [1, 2, 3] })
  const h = mq.request({
    method: 'POST',
    url: '/echo',
    rawHeaders: ['Host', 'a', 'Content-Type', 'application/json', 'Content-Length', String(Buffer.byteLength(body))],
    body: [body.slice(0, 5), body.slice(5)]
  })
  const r = await h.done
  expect(r.statusCode).toBe(201)
  expect(JSON.parse(h.text)).toEqual({ got: { hello: 'wörld', n: [1, 2, 3] }, type: 'application/json' })
})

test('404, redirect and error handling go through finalhandler', async () => {
  const { mq } = await start(app())
  const missing = mq.request({ url: '/nope' })
  expect((await missing.done).statusCode).toBe(404)
  const redirect = mq.request({ url: '/redirect' })
  const r = await redirect.done
  expect(r.statusCode).toBe(302)
  expect(r.headers.location).toBe('/users/1')
  const fail = mq.request({ url: '/fail' })
  expect((await fail.done).statusCode).toBe(500)
})

test('express.static streams a file with backpressure (send + on-finished)', async () => {
  const { mq } = await start(app())
  mq.window = false // every piece closes the window: the stream has to wait for drains
  const h = mq.request({ url: '/static/big.txt' })
  const deadline = Date.now() + 5000
  for (let i = 0; h.live && Date.now() < deadline; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1))
    mq.window = i % 2 === 0
    h.drain()
  }
  const r = await h.done
  const file = fs.readFileSync(path.join(PUBLIC, 'big.txt'))
  expect(r.statusCode).toBe(200)
  expect(r.headers['content-length']).toBe(String(file.length))
  expect(r.raw.equals(file)).toBe(true)
  expect(mq.callsOf('sendBody', h.id).length).toBeGreaterThan(0)
})
