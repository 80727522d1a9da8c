'use strict'

// HTTPS on HTTP.SYS with a certificate the run made (lib/certs.js): `httpsys cert add
// --pfx` imports an RSA leaf with its intermediate and binds it (docs/http-sys.md 4;
// issue 24, defect 4: the key in the CNG provider, the intermediate in LocalMachine\CA);
// a client that trusts only the root then verifies the server, which it can only if
// HTTP.SYS sends the intermediate; and the handshake is TLS 1.3 where Windows has it.

const assert = require('node:assert/strict')
const path = require('node:path')
const tls = require('node:tls')
const { need } = require('./lib/host')
const { binding } = require('./lib/binding')
const { thumbprint } = require('./lib/certs')

const HTTPS = 'Wine\'s HTTP.SYS has no HTTPS (docs/wine.md 2.9)'
// HTTP.SYS serves TLS 1.3 from Windows Server 2022 and Windows 11 (build 20348) on
const TLS13_BUILD = 20348

/** A TLS connection to the binding; resolves with the socket once the handshake is done. */
function handshake (port, certs, options = {}) {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: certs.rootPem, ...options })
    socket.setTimeout(10000, () => socket.destroy(new Error('the TLS handshake did not complete within 10 s')))
    socket.once('secureConnect', () => resolve(socket))
    socket.once('error', reject)
  })
}

/** The subjects' CNs from the leaf up, as the client saw the chain. */
function chainOf (socket) {
  const out = []
  let cert = socket.getPeerCertificate(true)
  const seen = new Set()
  while (cert && cert.subject && !seen.has(cert.fingerprint256)) {
    seen.add(cert.fingerprint256)
    out.push(cert.subject.CN)
    cert = cert.issuerCertificate
  }
  return out
}

module.exports = {
  group: 'tls',
  checks: [
    {
      name: 'cert add --pfx binds a certificate made here (RSA; the PFX holds its intermediate)',
      wine: HTTPS,
      timeout: 180000,
      async run (t) {
        const { port, result, certs } = await binding(t)
        t.note(`certificates made with ${certs.tool}`)
        assert.equal(result.thumbprint.toUpperCase(), thumbprint(certs.leafPem))
        assert.equal(result.binding, `0.0.0.0:${port}`)
        assert.deepEqual(result.warnings || [], [], 'the import warned (a legacy CryptoAPI key cannot sign TLS 1.3\'s RSA-PSS)')
        const inter = thumbprint(certs.intermediatePem)
        assert.ok((result.intermediates || []).some((i) => i.thumbprint.toUpperCase() === inter),
          `the intermediate ${inter} was not put in LocalMachine\\CA: ${JSON.stringify(result.intermediates)}`)
        const netsh = await t.host.run('netsh', ['http', 'show', 'sslcert', `ipport=0.0.0.0:${port}`])
        assert.match(netsh.output.replace(/\s/g, ''), new RegExp(thumbprint(certs.leafPem), 'i'), netsh.output)
      }
    },
    {
      name: 'a client that trusts only the root verifies the server: HTTP.SYS sends leaf and intermediate',
      wine: HTTPS,
      async run (t) {
        const h = t.host
        const { port, certs } = await binding(t)
        const config = h.writeConfig('tls', {
          backend: 'httpsys',
          apps: [{ name: 'secure', script: path.join(h.APPS, 'host-app.js'), urls: [`https://+:${port}/`], env: { HOST_APP: 'secure', HOST_APP_HTTPS: '1' }, kill_timeout: '5s' }]
        })
        const sup = h.startSupervisor(t, 'tls', ['-c', config], { cwd: path.dirname(config), forGroup: true })
        await sup.waitRecord((r) => r.event === 'all-ready', 'the app ready')
        const socket = await handshake(port, certs)
        try {
          assert.equal(socket.authorized, true, `not verified: ${socket.authorizationError}`)
          assert.deepEqual(chainOf(socket), ['localhost', 'httpsys host test intermediate', 'httpsys host test root'])
          t.note(`negotiated ${socket.getProtocol()} ${socket.getCipher().name}`)
        } finally {
          socket.destroy()
        }
        const res = await h.getJson(`https://127.0.0.1:${port}/tls`, { ca: certs.rootPem, servername: 'localhost' })
        assert.equal(res.encrypted, true)
        Object.assign(t.shared, { port, certs, sup })
      }
    },
    {
      name: 'TLS 1.3: the handshake and a request over it (Windows Server 2022 / Windows 11 and later)',
      wine: HTTPS,
      async run (t) {
        const h = t.host
        const { port, certs } = need(t.shared.certs && t.shared, 'the app of the previous tls check')
        const build = h.windowsBuild()
        if (build < TLS13_BUILD) t.skip(`HTTP.SYS serves TLS 1.3 from build ${TLS13_BUILD} (Server 2022, Windows 11); this is build ${build}`)
        const socket = await handshake(port, certs, { minVersion: 'TLSv1.3', maxVersion: 'TLSv1.3' })
        try {
          assert.equal(socket.getProtocol(), 'TLSv1.3')
          assert.equal(socket.authorized, true, `not verified: ${socket.authorizationError}`)
        } finally {
          socket.destroy()
        }
        const res = await h.getJson(`https://127.0.0.1:${port}/tls`, { ca: certs.rootPem, servername: 'localhost', minVersion: 'TLSv1.3' })
        assert.equal(res.protocol, 'TLSv1.3', `the app's socket says ${res.protocol}`)
        await t.shared.sup.stop()
      }
    }
  ]
}
