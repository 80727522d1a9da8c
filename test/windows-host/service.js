'use strict'

// `httpsys service install`, then the service control manager's start and stop, then
// `httpsys service uninstall` (test/windows/README.md, manual check 24), with the default account
// NT SERVICE\<name> and the HTTP.SYS router. The config lives under %ProgramData%,
// which the service's account can read; where the checkout is in a user profile, the
// install prints the icacls grants the account needs, which are made and removed again.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { firstJson, need } = require('./lib/host')

const WAIT_MS = 60000

/** The SCM's view of the service (QueryServiceStatusEx and QueryServiceConfigW, through the addon). */
function query (h, name) {
  return h.addon.serviceQuery(name)
}

async function waitState (h, name, state) {
  const end = Date.now() + WAIT_MS
  for (;;) {
    const s = query(h, name)
    if (s.code === 0 && s.state === state) return s
    if (Date.now() > end) throw new Error(`the service ${name} is ${s.state || `unknown (code ${s.code})`}, not ${state}, after ${WAIT_MS / 1000} s`)
    await h.sleep(200)
  }
}

module.exports = {
  group: 'service',
  checks: [
    {
      name: 'service install: a Windows service as NT SERVICE\\<name>, with the reservation its account needs',
      async run (t) {
        const h = t.host
        const name = `httpsys-host-${process.pid}`
        const port = await h.freePort()
        const prefix = `http://+:${port}/`
        const dir = path.join(process.env.ProgramData || 'C:\\ProgramData', `httpsys-host-test-${process.pid}`)
        // undone in this order: the service (stopped first by uninstall), its
        // reservation (uninstall keeps it), the folder
        t.cleanupAfterGroup(`remove the folder ${dir}`, () => fs.rmSync(dir, { recursive: true, force: true }))
        t.cleanupAfterGroup(`delete the URL reservation ${prefix}`, () => {
          const r = h.httpsysSync(['urlacl', 'delete', prefix])
          if (r.code !== 0) throw new Error(r.output)
        })
        t.cleanupAfterGroup(`uninstall the service ${name}`, () => {
          const r = h.httpsysSync(['service', 'uninstall', '--name', name], { timeout: 150000 })
          if (r.code !== 0) throw new Error(r.output)
        })
        fs.mkdirSync(dir, { recursive: true })
        const app = path.join(dir, 'app.js')
        fs.copyFileSync(path.join(h.APPS, 'host-app.js'), app)
        const config = path.join(dir, 'httpsys.config.js')
        fs.writeFileSync(config, `module.exports = ${JSON.stringify({
          backend: 'httpsys',
          apps: [{ name: 'svc', script: app, urls: [prefix], env: { HOST_APP: 'svc' }, kill_timeout: '5s' }]
        }, null, 2)}\n`)
        const r = await h.httpsys(['service', 'install', '-c', config, '--name', name, '--json'])
        assert.equal(r.code, 0, r.output)
        const result = firstJson(r.stdout)
        assert.equal(result.account, `NT SERVICE\\${name}`)
        assert.ok(result.done.some((d) => d.includes(prefix)), `no reservation was made for ${prefix}: ${JSON.stringify(result.done)}`)
        // a checkout in a user profile: grant the account what the install says it lacks
        for (const note of result.notes || []) {
          for (const m of note.matchAll(/icacls "([^"]+)" \/grant "([^"]+):\(OI\)\(CI\)RX"/g)) {
            const [, folder, account] = m
            t.cleanupAfterGroup(`remove ${account}'s read access to ${folder}`, () => {
              const x = h.runSync('icacls', [folder, '/remove:g', account, '/T', '/C', '/Q'], { timeout: 600000 })
              if (x.code !== 0) throw new Error(x.output)
            })
            const g = await h.run('icacls', [folder, '/grant', `${account}:(OI)(CI)RX`, '/T', '/C', '/Q'], { timeout: 600000 })
            assert.equal(g.code, 0, `icacls ${folder}: ${g.output}`)
            t.note(`granted ${account} read access to ${folder} (removed at the end)`)
          }
        }
        assert.equal(query(h, name).state, 'stopped')
        Object.assign(t.shared, { name, port })
      }
    },
    {
      name: 'sc.exe start: the service runs and serves the app',
      async run (t) {
        const h = t.host
        const name = need(t.shared.name, 'the service of the first service check')
        const r = await h.run('sc.exe', ['start', name])
        assert.equal(r.code, 0, r.output)
        const s = await waitState(h, name, 'running')
        t.shared.pid = s.pid
        const res = await h.eventually(() => h.getJson(`http://127.0.0.1:${t.shared.port}/x`, { timeout: 3000 }), WAIT_MS)
        assert.equal(res.app, 'svc')
      }
    },
    {
      name: 'sc.exe stop: stopped with exit code 0, no process left',
      async run (t) {
        const h = t.host
        const name = need(t.shared.pid && t.shared.name, 'the running service of the previous check')
        const r = await h.run('sc.exe', ['stop', name])
        assert.equal(r.code, 0, r.output)
        const s = await waitState(h, name, 'stopped')
        assert.equal(s.win32ExitCode, 0, `the service stopped with ${JSON.stringify({ win32: s.win32ExitCode, service: s.serviceExitCode })}`)
        await h.eventually(async () => assert.equal(h.alive(t.shared.pid), false, `pid ${t.shared.pid} is still running`), 15000)
      }
    },
    {
      name: 'service uninstall: the service is gone',
      async run (t) {
        const h = t.host
        const name = need(t.shared.name, 'the service of the first service check')
        const r = await h.httpsys(['service', 'uninstall', '--name', name, '--json'])
        assert.equal(r.code, 0, r.output)
        assert.equal(firstJson(r.stdout).removed, true)
        const q = query(h, name)
        assert.equal(q.code, 1060, `the service control manager still finds it: ${JSON.stringify(q)}`)
      }
    }
  ]
}
