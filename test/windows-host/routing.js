'use strict'

// Two apps on one port through the supervisor's queues (docs/http-sys.md 1): both answer
// 200, not 503 (issue 24, defect 1: a queue-state call that turned every queue off); a
// stopped app answers 503 at once while the other keeps serving, and serves again after
// `httpsys restart` (test/windows/README.md, manual check 25).

const assert = require('node:assert/strict')
const path = require('node:path')
const { need } = require('./lib/host')

const STATE = 'Wine does not implement HttpServerStateProperty (docs/wine.md 2.10): a stopped app\'s requests hang there instead of a 503'

module.exports = {
  group: 'routing',
  checks: [
    {
      name: 'two apps on one port (http://+:P/api/ and http://+:P/) both answer 200, not 503',
      async run (t) {
        const h = t.host
        const port = await h.freePort()
        const config = h.writeConfig('routing', {
          backend: 'httpsys',
          apps: [
            { name: 'api', script: path.join(h.APPS, 'host-app.js'), urls: [`http://+:${port}/api/`], env: { HOST_APP: 'api' }, kill_timeout: '5s' },
            { name: 'web', script: path.join(h.APPS, 'host-app.js'), urls: [`http://+:${port}/`], env: { HOST_APP: 'web' }, kill_timeout: '5s' }
          ]
        })
        const sup = h.startSupervisor(t, 'routing', ['-c', config], { cwd: path.dirname(config), forGroup: true })
        const backend = await sup.waitRecord((r) => r.event === 'backend', 'the backend record')
        assert.equal(backend.backend, 'httpsys', `the supervisor chose ${backend.backend}: ${backend.reason}`)
        await sup.waitRecord((r) => r.event === 'all-ready', 'every app ready')
        const api = await h.request(`http://127.0.0.1:${port}/api/x`)
        assert.equal(api.status, 200, `/api/x answered ${api.status} ${api.body}`)
        assert.equal(JSON.parse(api.body).app, 'api')
        const web = await h.request(`http://127.0.0.1:${port}/x`)
        assert.equal(web.status, 200, `/x answered ${web.status} ${web.body}`)
        assert.equal(JSON.parse(web.body).app, 'web')
        Object.assign(t.shared, { sup, port })
      }
    },
    {
      name: 'httpsys stop api: /api/ answers 503 at once, / still 200',
      wine: STATE,
      async run (t) {
        const h = t.host
        const sup = need(t.shared.sup, 'the supervisor of the first routing check')
        const { port } = t.shared
        const r = await sup.httpsys(['stop', 'api'])
        assert.equal(r.code, 0, r.output)
        const res = await h.request(`http://127.0.0.1:${port}/api/x`, { timeout: 5000 })
        assert.equal(res.status, 503, `a stopped app answered ${res.status}`)
        // at once: not after the queue's timeout (HTTP.SYS answers an inactive queue itself)
        assert.ok(res.ms < 2000, `the 503 took ${res.ms} ms`)
        const web = await h.request(`http://127.0.0.1:${port}/x`)
        assert.equal(web.status, 200)
        t.shared.stopped = true
      }
    },
    {
      name: 'httpsys restart api: /api/ answers 200 again',
      async run (t) {
        const h = t.host
        const sup = need(t.shared.sup, 'the supervisor of the first routing check')
        const { port } = t.shared
        // under Wine the stop check is skipped: stop here, as it would have
        if (!t.shared.stopped) {
          const r = await sup.httpsys(['stop', 'api'])
          assert.equal(r.code, 0, r.output)
        }
        const before = sup.records().length
        const r = await sup.httpsys(['restart', 'api'])
        assert.equal(r.code, 0, r.output)
        await sup.waitRecord((x) => x.event === 'ready' && x.app === 'api', 'api ready again', { after: before })
        const api = await h.eventually(async () => {
          const res = await h.request(`http://127.0.0.1:${port}/api/x`, { timeout: 3000 })
          assert.equal(res.status, 200, `/api/x answered ${res.status}`)
          return res
        }, 15000)
        assert.equal(JSON.parse(api.body).app, 'api')
        const web = await h.request(`http://127.0.0.1:${port}/x`)
        assert.equal(web.status, 200)
        await sup.stop()
      }
    }
  ]
}
