'use strict'

// A config edit that changes an app's urls or redirect_http, applied by `httpsys reload`
// without a restart (issue 28), on the router the supervisor drives: the native router
// (native-router.js, the router's setUrls command, issue 25; the JS hub's hub-router.js
// setUrls was held to it too until src/hub was removed). New prefixes are bound before the dropped ones go; a conflict or
// a port in use refuses the edit with the hub's error, and the app keeps its old URLs.

const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { start, cli, freePort, get, request, writeConfig, APPS } = require('../fixtures/apps/harness')
const { routerBin } = require('../helpers/native-router')
const { makeCerts } = require('../helpers/tls-certs')

jest.setTimeout(60000)

let certs
beforeAll(() => { certs = makeCerts() })
afterAll(() => certs.cleanup())

const ROUTERS = [
  ['the native router', () => ({ HTTPSYS_ROUTER: 'native', HTTPSYS_ROUTER_PATH: routerBin() })]
]

describe.each(ROUTERS)('%s', (routerName, routerEnv) => {
  let dir
  let run
  let env
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-router-reload-'))
    env = { ...routerEnv(), HTTPSYS_RUNTIME_DIR: path.join(dir, 'run') }
  })
  afterEach(async () => {
    if (run) await run.cleanup()
    run = null
    fs.rmSync(dir, { recursive: true, force: true })
  })

  const app = { script: path.join(APPS, 'pid-server.js'), kill_timeout: '5s' }
  const appOf = async (port, p) => JSON.parse((await get(port, p)).body).app

  test('an app moved to another port: the new one serves, the old port stops listening', async () => {
    const [p1, p2] = [await freePort(), await freePort()]
    const config = writeConfig(dir, { apps: [{ name: 'api', ...app, urls: [`http://127.0.0.1:${p1}/`] }] })
    run = start(['-c', config], { env })
    await run.waitFor((r) => r.event === 'all-ready')
    expect(await appOf(p1, '/')).toBe('api')
    writeConfig(dir, { apps: [{ name: 'api', ...app, urls: [`http://127.0.0.1:${p2}/`] }] })
    const reload = await cli(['reload', 'all', '-c', config], { env })
    expect(reload.stderr).toBe('')
    expect(reload.stdout).toMatch(new RegExp(`^api \\[.*\\]: reloaded in \\d+ ms \\(pid \\d+\\); applied: urls \\+ http://127\\.0\\.0\\.1:${p2}/ - http://127\\.0\\.0\\.1:${p1}/\\n$`))
    expect(await appOf(p2, '/')).toBe('api')
    await expect(get(p1, '/', { timeout: 2000 })).rejects.toThrow(/ECONNREFUSED/)
    const [ls] = JSON.parse((await cli(['ls', '--json', '-c', config], { env })).stdout)
    expect(ls.apps[0].urls).toEqual([`http://127.0.0.1:${p2}/`])
  })

  test('a prefix another app holds, or a port another process holds: refused with the error, the app keeps its URLs', async () => {
    const [port, other, taken] = [await freePort(), await freePort(), await freePort()]
    const holder = net.createServer().listen(taken, '127.0.0.1')
    await new Promise((resolve) => holder.once('listening', resolve))
    try {
      // c has no urls: its listen() takes its port, which the config cannot know of
      const apps = [
        { name: 'a', ...app, urls: [`http://127.0.0.1:${port}/a/`] },
        { name: 'c', ...app, env: { PORT: String(other) } }
      ]
      const config = writeConfig(dir, { apps })
      run = start(['-c', config], { env })
      await run.waitFor((r) => r.event === 'all-ready')
      expect(await appOf(other, '/')).toBe('c')

      writeConfig(dir, { apps: [{ ...apps[0], urls: [`http://127.0.0.1:${port}/a2/`, `http://+:${other}/`] }, apps[1]] })
      const conflict = await cli(['reload', 'a', '-c', config], { env })
      expect(conflict.code).toBe(1)
      expect(conflict.stderr).toMatch(new RegExp(`Reloading "a" failed: its new settings were not applied \\(it runs as before\\): .*http://\\+:${other}/.*\\(ERR_HTTPSYS_RELOAD_FAILED\\)`))

      writeConfig(dir, { apps: [{ ...apps[0], urls: [`http://127.0.0.1:${port}/a2/`, `http://127.0.0.1:${taken}/`] }, apps[1]] })
      const inUse = await cli(['reload', 'a', '-c', config], { env })
      expect(inUse.code).toBe(1)
      expect(inUse.stderr).toMatch(new RegExp(`Reloading "a" failed: its new settings were not applied \\(it runs as before\\): .*${taken}`))
      // nothing of a refused edit was kept: not the prefix that could be bound first
      expect(await appOf(port, '/a/x')).toBe('a')
      expect((await get(port, '/a2/x')).status).toBe(404)
      expect(await appOf(other, '/')).toBe('c')
      const [ls] = JSON.parse((await cli(['ls', '--json', '-c', config], { env })).stdout)
      expect(ls.apps[0].urls).toEqual([`http://127.0.0.1:${port}/a/`])
    } finally {
      holder.close()
    }
  })

  test('an app given urls for the first time lets go of what its listen() took', async () => {
    const [port, own] = [await freePort(), await freePort()]
    const apps = [{ name: 'c', ...app, env: { PORT: String(own) } }]
    const config = writeConfig(dir, { apps })
    run = start(['-c', config], { env })
    await run.waitFor((r) => r.event === 'all-ready')
    expect(await appOf(own, '/')).toBe('c')
    writeConfig(dir, { apps: [{ ...apps[0], urls: [`http://127.0.0.1:${port}/c/`] }] })
    const reload = await cli(['reload', 'all', '-c', config], { env })
    expect(reload.stderr).toBe('')
    expect(await appOf(port, '/c/x')).toBe('c')
    await expect(get(own, '/', { timeout: 2000 })).rejects.toThrow(/ECONNREFUSED/)
    const [ls] = JSON.parse((await cli(['ls', '--json', '-c', config], { env })).stdout)
    expect(ls.apps[0].urls).toEqual([`http://127.0.0.1:${port}/c/`])
  })

  test('an app removed from the config: its prefixes go first, so a new request goes where the rest of the config routes it while its request in flight finishes', async () => {
    const port = await freePort()
    const apps = [
      { name: 'stay', ...app, urls: [`http://127.0.0.1:${port}/`] },
      { name: 'old', ...app, urls: [`http://127.0.0.1:${port}/old/`] }
    ]
    const config = writeConfig(dir, { apps })
    run = start(['-c', config], { env })
    await run.waitFor((r) => r.event === 'all-ready')
    const held = get(port, '/old/?delay=1500')
    await new Promise((resolve) => setTimeout(resolve, 200))
    writeConfig(dir, { apps: [apps[0]] })
    const reload = cli(['reload', 'all', '-c', config], { env })
    await run.waitFor((r) => r.event === 'config')
    await new Promise((resolve) => setTimeout(resolve, 300))
    // draining: the prefix is gone (the longest match now is stay's), not a 503 from a queue on its way out
    const during = await get(port, '/old/x')
    expect(JSON.parse(during.body).app).toBe('stay')
    const res = await held
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body).app).toBe('old')
    expect((await reload).stdout).toMatch(/^old \[.*\]: removed \(no longer in the config\): drained and stopped in \d+ ms$/m)
  })

  test('redirect_http added by a reload, then dropped: the plain port answers 308, then stops listening', async () => {
    const [port, plain] = [await freePort(), await freePort()]
    const script = path.join(APPS, 'https-app.js')
    const base = { name: 'site', script, urls: [`https://localhost:${port}/`], env: { APP_PORT: String(port) } }
    const tls = [{ port, cert: certs.localhost.cert, key: certs.localhost.key }]
    const config = writeConfig(dir, { tls, apps: [base] })
    run = start(['-c', config], { env })
    await run.waitFor((r) => r.event === 'all-ready')
    await expect(get(plain, '/', { timeout: 2000 })).rejects.toThrow(/ECONNREFUSED/)

    writeConfig(dir, { tls, apps: [{ ...base, redirect_http: plain }] })
    const added = await cli(['reload', 'all', '-c', config], { env })
    expect(added.stderr).toBe('')
    expect(added.stdout).toMatch(/^site \[.*\]: reloaded in \d+ ms \(pid \d+\); applied: redirect_http\n$/)
    const moved = await request(plain, { path: '/x?y', headers: { host: `localhost:${plain}` } })
    expect(moved.status).toBe(308)
    expect(moved.headers.location).toBe(`https://localhost:${port}/x?y`)

    writeConfig(dir, { tls, apps: [base] })
    expect((await cli(['reload', 'all', '-c', config], { env })).code).toBe(0)
    await expect(get(plain, '/', { timeout: 2000 })).rejects.toThrow(/ECONNREFUSED/)
  })
})
