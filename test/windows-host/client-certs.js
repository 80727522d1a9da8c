'use strict'

// Client certificates on HTTP.SYS (README "HTTPS and HTTP/2", client certificates): a
// binding made with `cert add --client-cert` asks clients for one; a config tls entry
// with requestCert and ca decides, in the worker, who is let in: a certificate its CA
// issued reaches the app (authorized, its CN), none or a stranger's gets 403.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { need } = require('./lib/host')
const { binding } = require('./lib/binding')

const HTTPS = 'Wine\'s HTTP.SYS has no HTTPS (docs/wine.md 2.9)'

module.exports = {
  group: 'client certificates',
  checks: [
    {
      name: 'a client certificate the config\'s ca issued reaches the app: authorized, with its CN',
      wine: HTTPS,
      async run (t) {
        const h = t.host
        const { port, certs } = await binding(t, 'client-cert')
        const ca = h.scratch('client-certs/client-ca.crt', certs.clientCaPem)
        const config = h.writeConfig('client-certs', {
          backend: 'httpsys',
          tls: [{ port, pfx: certs.serverPfx, passphrase: certs.passphrase, ca, requestCert: true, rejectUnauthorized: true }],
          apps: [{ name: 'mtls', script: path.join(h.APPS, 'host-app.js'), urls: [`https://+:${port}/`], env: { HOST_APP: 'mtls', HOST_APP_HTTPS: '1' }, kill_timeout: '5s' }]
        })
        const sup = h.startSupervisor(t, 'client-certs', ['-c', config], { cwd: path.dirname(config), forGroup: true })
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        Object.assign(t.shared, { port, certs, sup })
        const res = await h.getJson(`https://127.0.0.1:${port}/tls`, {
          ca: certs.rootPem, servername: 'localhost', pfx: fs.readFileSync(certs.clientPfx), passphrase: certs.passphrase
        })
        assert.equal(res.authorized, true, `authorizationError ${res.authorizationError}`)
        assert.equal(res.peer, 'httpsys-host-client')
      }
    },
    {
      name: 'no client certificate: 403, and the app never sees the request',
      wine: HTTPS,
      async run (t) {
        const h = t.host
        const { port, certs } = need(t.shared.sup && t.shared, 'the app of the first client certificate check')
        const res = await h.request(`https://127.0.0.1:${port}/tls`, { ca: certs.rootPem, servername: 'localhost' })
        assert.equal(res.status, 403, `answered ${res.status}: ${res.body}`)
      }
    },
    {
      name: 'a certificate no CA of the config issued: 403',
      wine: HTTPS,
      async run (t) {
        const h = t.host
        const { port, certs } = need(t.shared.sup && t.shared, 'the app of the first client certificate check')
        const res = await h.request(`https://127.0.0.1:${port}/tls`, {
          ca: certs.rootPem, servername: 'localhost', pfx: fs.readFileSync(certs.strangerPfx), passphrase: certs.passphrase
        })
        assert.equal(res.status, 403, `answered ${res.status}: ${res.body}`)
        await t.shared.sup.stop()
      }
    }
  ]
}
