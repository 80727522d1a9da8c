'use strict'

// Unmodified koa and ESM apps under `httpsys start`.

const path = require('node:path')
const { startHttpsys, freePort } = require('../helpers/httpsys-process')

const fixtures = path.join(__dirname, '..', 'fixtures', 'compat')

describe('koa', () => {
  let handle
  let base
  beforeAll(async () => {
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    handle = await startHttpsys(['start', path.join(fixtures, 'koa-app.js')], { env: { PORT: String(port) }, readyUrl: `${base}/items/0` })
  })
  afterAll(() => handle && handle.stop())

  test('router params, JSON body, 201', async () => {
    expect(await (await fetch(`${base}/items/7`)).json()).toEqual({ id: '7', method: 'GET' })
    const res = await fetch(`${base}/items`, { method: 'POST', body: JSON.stringify({ n: 1 }) })
    expect(res.status).toBe(201)
    expect(await res.json()).toEqual({ created: { n: 1 } })
  })

  test('cookies in and out', async () => {
    const res = await fetch(`${base}/cookie`, { headers: { cookie: 'in=yes' } })
    expect(await res.json()).toEqual({ seen: 'yes' })
    expect(res.headers.getSetCookie().map((c) => c.split(';')[0])).toEqual(['k1=v1', 'k2=v2'])
  })

  test('a stream body, a thrown error with its status, 404 and 405', async () => {
    const text = await (await fetch(`${base}/stream`)).text()
    expect(text.split('\n')).toHaveLength(101)
    const fail = await fetch(`${base}/fail`)
    expect(fail.status).toBe(418)
    expect(await fail.json()).toEqual({ error: 'teapot' })
    expect((await fetch(`${base}/missing`)).status).toBe(404)
    expect((await fetch(`${base}/items/1`, { method: 'DELETE' })).status).toBe(405)
  })
})

describe('ESM', () => {
  let handle
  let base
  beforeAll(async () => {
    // The app listens on APP_PORT but its queue is registered on another port: only an
    // app whose createServer is httpsys's (the preload reached the ESM named import)
    // answers there; node's own server would sit on APP_PORT instead.
    const [port, appPort] = [await freePort(), await freePort()]
    base = `http://127.0.0.1:${port}`
    handle = await startHttpsys(['start', path.join(fixtures, 'esm-app.mjs'), '-u', `http://+:${port}/`],
      { env: { APP_PORT: String(appPort) }, readyUrl: `${base}/` })
  })
  afterAll(() => handle && handle.stop())

  test('import { createServer } from "node:http" is served through the queue', async () => {
    const body = await (await fetch(`${base}/x?y=1`)).json()
    expect(body).toEqual({ esm: true, url: '/x?y=1', ok: 'OK', ctor: 'IncomingMessage' })
  })
})
