'use strict'

// An app with Windows authentication (auth) on the hub (README "Windows
// authentication"): there is no Windows logon here, so `httpsys start` refuses it with
// ERR_HTTPSYS_AUTH_UNAVAILABLE before anything runs, unless a development identity is
// given (auth.dev_identity, or HTTPSYS_DEV_IDENTITY); then every request carries that
// identity, and promote_server_vars adds iisnode's headers, a client's forged ones
// dropped. The same app code as on HTTP.SYS.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { start, writeConfig, freePort, get } = require('../fixtures/apps/harness')
const { REGISTER, standaloneEnv } = require('../helpers/standalone')

let run
let dir
beforeEach(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-auth-')) })
afterEach(async () => {
  if (run) await run.cleanup()
  run = null
  fs.rmSync(dir, { recursive: true, force: true })
})

const env = (more = {}) => ({ HTTPSYS_RUNTIME_DIR: path.join(dir, 'run'), HTTPSYS_DEV_IDENTITY: '', ...more })

function app () {
  const file = path.join(dir, 'whoami.js')
  fs.writeFileSync(file, `
    const http = require('node:http')
    http.createServer((req, res) => {
      const id = req.windowsIdentity
      res.setHeader('Content-Type', 'application/json')
      res.end(JSON.stringify({
        identity: id && id.toJSON(),
        groups: id && id.groups,
        staff: id ? id.isInRole('DEV\\\\Staff') : null,
        admins: id ? id.isInRole('S-1-5-32-544') : null,
        iisnode: Object.fromEntries(Object.entries(req.headers).filter(([k]) => k.startsWith('x-iisnode-')))
      }))
    }).listen(process.env.PORT)
  `)
  return file
}

test('with auth.dev_identity every request carries that identity, and promote_server_vars its headers (a forged one dropped)', async () => {
  const port = await freePort()
  const config = writeConfig(dir, {
    apps: [{
      name: 'intranet',
      script: app(),
      urls: [`http://127.0.0.1:${port}/`],
      auth: { schemes: ['negotiate', 'ntlm'], anonymous: false, dev_identity: { user: 'DEV\\alice', groups: ['DEV\\Staff', { name: 'BUILTIN\\Administrators', sid: 'S-1-5-32-544' }] } },
      promote_server_vars: ['AUTH_USER', 'AUTH_TYPE', 'LOGON_USER']
    }]
  })
  run = start(['-c', config], { env: env() })
  const warning = await run.waitFor((r) => r.event === 'auth')
  expect(warning.msg).toMatch(/every request carries the development identity DEV\\alice \(auth\.dev_identity\): the native router authenticates nobody/)
  await run.waitFor((r) => r.event === 'ready')
  const res = await get(port, '/', { headers: { 'X-IISNode-Logon_User': 'CONTOSO\\ceo' } })
  expect(res.status).toBe(200)
  const body = JSON.parse(res.body)
  expect(body.identity).toEqual({ name: 'DEV\\alice', sid: expect.stringMatching(/^S-1-5-21-0-0-0-\d+$/), scheme: 'Development' })
  expect(body.groups).toEqual([{ name: 'DEV\\Staff', sid: expect.stringMatching(/^S-1-5-21-0-0-0-\d+$/) }, { name: 'BUILTIN\\Administrators', sid: 'S-1-5-32-544' }])
  expect(body.staff).toBe(true)
  expect(body.admins).toBe(true)
  expect(body.iisnode).toEqual({ 'x-iisnode-auth_user': 'DEV\\alice', 'x-iisnode-auth_type': 'Development', 'x-iisnode-logon_user': 'DEV\\alice' })
  // the same made-up SID on every run: an app keying something by it keeps working
  const again = JSON.parse((await get(port, '/')).body)
  expect(again.identity.sid).toBe(body.identity.sid)
})

test('HTTPSYS_DEV_IDENTITY gives one where the config has none, and wins over the config\'s', async () => {
  const port = await freePort()
  const config = writeConfig(dir, { apps: [{ name: 'intranet', script: app(), urls: [`http://127.0.0.1:${port}/`], auth: { schemes: ['ntlm'], dev_identity: 'DEV\\alice' } }] })
  run = start(['-c', config], { env: env({ HTTPSYS_DEV_IDENTITY: '{"user":"DEV\\\\bob","groups":["DEV\\\\Staff"]}' }) })
  await run.waitFor((r) => r.event === 'ready')
  const body = JSON.parse((await get(port, '/')).body)
  expect(body.identity.name).toBe('DEV\\bob')
  expect(body.staff).toBe(true)
})

test('without a development identity the hub refuses the app before anything runs', async () => {
  const port = await freePort()
  const config = writeConfig(dir, { apps: [{ name: 'intranet', script: app(), urls: [`http://127.0.0.1:${port}/`], auth: { schemes: ['negotiate', 'ntlm'] } }] })
  run = start(['-c', config], { env: env() })
  expect(await run.exited).toEqual({ code: 1, signal: null })
  expect(run.stderr + JSON.stringify(run.records)).toMatch(/ERR_HTTPSYS_AUTH_UNAVAILABLE/)
  expect(run.stderr + JSON.stringify(run.records)).toMatch(/App "intranet" asks for Windows authentication \(auth: negotiate, ntlm\), which only HTTP\.SYS does/)
  expect(run.pids()).toEqual([])
})

test('an app without auth gets no identity, whatever HTTPSYS_DEV_IDENTITY says', async () => {
  const port = await freePort()
  const config = writeConfig(dir, { apps: [{ name: 'plain', script: app(), urls: [`http://127.0.0.1:${port}/`] }] })
  run = start(['-c', config], { env: env({ HTTPSYS_DEV_IDENTITY: 'DEV\\alice' }) })
  await run.waitFor((r) => r.event === 'ready')
  const body = JSON.parse((await get(port, '/', { headers: { 'x-iisnode-auth_user': 'DEV\\ceo' } })).body)
  expect(body.identity).toBe(null)
  // no promote_server_vars: the app's headers are the client's, as on node
  expect(body.iisnode).toEqual({ 'x-iisnode-auth_user': 'DEV\\ceo' })
})

test('standalone (node --require httpsys-cli/register, no config), HTTPSYS_DEV_IDENTITY puts the identity on every request', async () => {
  const { spawn } = require('node:child_process')
  const port = await freePort()
  const child = spawn(process.execPath, ['--require', REGISTER, app()], {
    env: standaloneEnv(env({ HTTPSYS_DEV_IDENTITY: 'DEV\\alice', PORT: String(port) })),
    stdio: 'ignore'
  })
  try {
    let res = null
    for (let i = 0; i < 100 && res === null; i++) {
      try { res = await get(port, '/') } catch { await new Promise((resolve) => setTimeout(resolve, 50)) }
    }
    expect(JSON.parse(res.body).identity).toEqual({ name: 'DEV\\alice', sid: expect.any(String), scheme: 'Development' })
  } finally {
    child.kill('SIGKILL')
  }
})

test('examples/windows-auth runs on the hub with its development identity: name, groups, a route for one group', async () => {
  const port = await freePort()
  const config = path.join(__dirname, '..', '..', 'examples', 'windows-auth', 'httpsys.config.js')
  run = start(['-c', config], { env: env({ HTTPSYS_EXAMPLE_PORT: String(port), HTTPSYS_EXAMPLE_HOST: '127.0.0.1' }) })
  await run.waitFor((r) => r.event === 'ready')
  expect((await get(port, '/')).body).toBe('Hello DEV\\alice (Development)\n')
  const me = JSON.parse((await get(port, '/me')).body)
  expect(me).toEqual({ name: 'DEV\\alice', sid: expect.any(String), scheme: 'Development', groups: [{ name: 'DEV\\Staff', sid: expect.any(String) }, { name: 'BUILTIN\\Administrators', sid: 'S-1-5-32-544' }] })
  expect(JSON.parse((await get(port, '/admin')).body)).toEqual({ admin: 'DEV\\alice' })
})
