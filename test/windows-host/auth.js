'use strict'

// Windows authentication by HTTP.SYS (README "Windows authentication", docs/http-sys.md
// 8): a local account made for the run (`net user`, deleted again) signs in with NTLM
// (curl --ntlm -u) and the app reads its name and groups from req.windowsIdentity, with
// promote_server_vars' header; a request without credentials, or with a wrong password,
// gets 401 with the challenges and never reaches the app; Basic over https with the
// same account; and the worker's handles do not grow over a few hundred signed-in
// requests (each request's access token is closed). Kerberos needs a domain: test/windows/README.md.

const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const path = require('node:path')
const { need } = require('./lib/host')
const { binding } = require('./lib/binding')

const NO_AUTH = 'Wine\'s HTTP.SYS takes no authentication property (docs/wine.md 2.10): it authenticates nobody'
const GROUP = 'httpsys-auth-staff'

/** The account of the run, made once: { user, password, computer, name, group }. */
function account (t) {
  if (t.shared.account) return t.shared.account
  const h = t.host
  const user = `hsauth${crypto.randomBytes(3).toString('hex')}`
  // a password any local policy takes: long, four character classes
  const password = `Hs!${crypto.randomBytes(9).toString('base64').replace(/[^A-Za-z0-9]/g, 'x')}9a`
  t.cleanupAfterGroup(`delete the local account ${user}`, () => {
    const r = h.runSync('net', ['user', user, '/delete'])
    if (r.code !== 0 && !/could not be found|2221/.test(r.output)) throw new Error(r.output)
  })
  t.cleanupAfterGroup(`delete the local group ${GROUP}`, () => { h.runSync('net', ['localgroup', GROUP, '/delete']) })
  for (const args of [['user', user, password, '/add'], ['localgroup', GROUP, '/add'], ['localgroup', GROUP, user, '/add']]) {
    const r = h.runSync('net', args)
    if (r.code !== 0 && !(args[0] === 'localgroup' && args.length === 3 && /1379|already exists/.test(r.output))) {
      throw new Error(`net ${args.filter((a) => a !== password).join(' ')} exited ${r.code}: ${r.output}`)
    }
  }
  const computer = process.env.COMPUTERNAME
  t.shared.account = { user, password, computer, name: `${computer}\\${user}`, group: `${computer}\\${GROUP}` }
  return t.shared.account
}

/** curl.exe (Windows 10 1803 and later ship it): { status, headers: [[name, value]], body }. */
async function curl (h, args) {
  const r = await h.run('curl.exe', ['-s', '-i', '--max-time', '20', ...args])
  if (r.code !== 0) throw new Error(`curl ${args.filter((a) => !a.includes(':') || a.startsWith('http')).join(' ')} exited ${r.code}: ${r.stderr}`)
  // with --ntlm the 401 of the handshake comes first: the last response is the answer
  const responses = r.stdout.split(/(?=^HTTP\/1\.1 \d{3})/m)
  const last = responses[responses.length - 1]
  const [head, ...rest] = last.split(/\r?\n\r?\n/)
  const lines = head.split(/\r?\n/)
  return {
    status: Number(lines[0].split(' ')[1]),
    headers: lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    body: rest.join('\n\n')
  }
}

const challenges = (res) => res.headers.filter(([k]) => k === 'www-authenticate').map(([, v]) => v)

module.exports = {
  group: 'windows authentication',
  checks: [
    {
      name: 'NTLM with a local account (curl --ntlm -u): its name, its groups and x-iisnode-auth_user on the request',
      wine: NO_AUTH,
      async run (t) {
        const h = t.host
        const a = account(t)
        const port = await h.freePort()
        const config = h.writeConfig('auth', {
          backend: 'httpsys',
          apps: [{
            name: 'intranet',
            script: path.join(h.APPS, 'auth-app.js'),
            urls: [`http://localhost:${port}/`],
            auth: { schemes: ['negotiate', 'ntlm'], anonymous: false },
            promote_server_vars: ['AUTH_USER', 'AUTH_TYPE'],
            env: { AUTH_APP_ROLE: a.group },
            kill_timeout: '5s'
          }]
        })
        const sup = h.startSupervisor(t, 'auth', ['-c', config], { cwd: path.dirname(config), forGroup: true })
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        Object.assign(t.shared, { port, sup })
        const res = await curl(h, ['--ntlm', '-u', `${a.user}:${a.password}`, `http://localhost:${port}/whoami`])
        assert.equal(res.status, 200, res.body)
        const body = JSON.parse(res.body)
        assert.equal(body.identity.name.toLowerCase(), a.name.toLowerCase())
        assert.match(body.identity.sid, /^S-1-5-21-/)
        assert.equal(body.identity.scheme, 'NTLM')
        assert.ok(body.groups.some((g) => g.name && g.name.toLowerCase() === a.group.toLowerCase()), JSON.stringify(body.groups))
        assert.ok(body.groups.some((g) => g.sid === 'S-1-5-32-545'), 'BUILTIN\\Users among the groups')
        assert.equal(body.inRole, true)
        assert.equal(body.promoted['x-iisnode-auth_user'].toLowerCase(), a.name.toLowerCase())
        assert.equal(body.promoted['x-iisnode-auth_type'], 'NTLM')
      }
    },
    {
      name: 'no credentials, or a wrong password: 401 with Negotiate and NTLM, and the app never sees the request',
      wine: NO_AUTH,
      async run (t) {
        const h = t.host
        const a = account(t)
        const { port } = need(t.shared.sup && t.shared, 'the app of the NTLM check')
        const count = async () => JSON.parse((await curl(h, ['--ntlm', '-u', `${a.user}:${a.password}`, `http://localhost:${port}/count`])).body).n
        const before = await count()
        const anonymous = await curl(h, [`http://localhost:${port}/whoami`])
        assert.equal(anonymous.status, 401)
        assert.deepEqual(challenges(anonymous), ['Negotiate', 'NTLM'])
        const wrong = await curl(h, ['--ntlm', '-u', `${a.user}:not-${a.password}`, `http://localhost:${port}/whoami`])
        assert.equal(wrong.status, 401)
        // the count requests themselves reached it; the two refused ones did not
        assert.equal(await count(), before + 1)
      }
    },
    {
      name: 'the worker closes each request\'s access token: its handles do not grow over 300 signed-in requests',
      wine: NO_AUTH,
      async run (t) {
        const h = t.host
        const a = account(t)
        const { port, sup } = need(t.shared.sup && t.shared, 'the app of the NTLM check')
        const pid = JSON.parse((await curl(h, ['--ntlm', '-u', `${a.user}:${a.password}`, `http://localhost:${port}/handles`])).body).pid
        const handles = async () => Number((await h.run('powershell.exe', ['-NoProfile', '-Command', `(Get-Process -Id ${pid}).HandleCount`])).stdout.trim())
        const urls = (k) => Array.from({ length: 100 }, () => `http://localhost:${port}/whoami?k=${k}`)
        await curl(h, ['--ntlm', '-u', `${a.user}:${a.password}`, ...urls(0)]) // warm up
        const before = await handles()
        for (let k = 1; k <= 3; k++) await curl(h, ['--ntlm', '-u', `${a.user}:${a.password}`, ...urls(k)])
        const after = await handles()
        assert.ok(after - before < 50, `the worker's handles went from ${before} to ${after} over 300 requests`)
        await sup.stop()
      }
    },
    {
      name: 'Basic over https with the same account (curl --basic -u); without credentials 401 with its realm',
      wine: NO_AUTH,
      async run (t) {
        const h = t.host
        const a = account(t)
        const { port } = await binding(t, 'plain')
        const config = h.writeConfig('auth-basic', {
          backend: 'httpsys',
          apps: [{
            name: 'basic',
            script: path.join(h.APPS, 'auth-app.js'),
            urls: [`https://+:${port}/`],
            auth: { schemes: ['basic'], realm: 'httpsys-host', anonymous: false },
            env: { AUTH_APP_HTTPS: '1' },
            kill_timeout: '5s'
          }]
        })
        const sup = h.startSupervisor(t, 'auth-basic', ['-c', config], { cwd: path.dirname(config) })
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        // -k: what is checked here is Basic, not the chain (the TLS group checks that)
        const anonymous = await curl(h, ['-k', `https://localhost:${port}/whoami`])
        assert.equal(anonymous.status, 401)
        assert.deepEqual(challenges(anonymous), ['Basic realm="httpsys-host"'])
        const res = await curl(h, ['-k', '--basic', '-u', `${a.user}:${a.password}`, `https://localhost:${port}/whoami`])
        assert.equal(res.status, 200, res.body)
        const body = JSON.parse(res.body)
        assert.equal(body.identity.name.toLowerCase(), a.name.toLowerCase())
        assert.equal(body.identity.scheme, 'Basic')
        await sup.stop()
      }
    }
  ]
}
