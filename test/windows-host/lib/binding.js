'use strict'

// The certificates of the run (lib/certs.js) and the certificate bindings the TLS
// groups share, made once, on first use, with `httpsys cert add` as a user would, and
// undone at the end of the run: the bindings deleted, the leaf deleted from
// LocalMachine\My with its key, the intermediates the import added deleted from
// LocalMachine\CA.

const path = require('node:path')
const { firstJson } = require('./host')
const { makeCertificates, thumbprint } = require('./certs')
const { expected } = require('./harness')

const kState = Symbol('httpsys.windows-host.tls')

function state (h) {
  if (!h[kState]) h[kState] = { certs: null, bindings: new Map() }
  return h[kState]
}

/** The run's certificates (made on the first call). */
function certificates (t) {
  const s = state(t.host)
  if (s.certs === null) s.certs = makeCertificates(path.join(t.host.tmpDir, 'certs'))
  return s.certs
}

/**
 * A binding of the run's server.pfx on 0.0.0.0:<port>, made by `httpsys cert add --pfx`
 * (once per kind: 'plain', or 'client-cert' with --client-cert --no-revocation-check).
 * @returns {Promise<{port: number, result: object, certs: object}>} result: cert add's JSON
 */
async function binding (t, kind = 'plain') {
  const s = state(t.host)
  if (!s.bindings.has(kind)) s.bindings.set(kind, make(t, kind))
  return s.bindings.get(kind)
}

async function make (t, kind) {
  const h = t.host
  const certs = certificates(t)
  const port = await h.freePort()
  // registered before the add: a binding half made is undone too
  t.cleanupAtEnd(`delete the certificate binding 0.0.0.0:${port}`, () => {
    const r = h.httpsysSync(['cert', 'delete', '--port', String(port)])
    if (r.code !== 0) throw new Error(r.output)
  })
  const leaf = thumbprint(certs.leafPem)
  t.cleanupAtEnd(`delete the test certificate ${leaf} (and its key) from LocalMachine\\My`, () => removeFromStore(h, 'My', leaf))
  const args = ['cert', 'add', '--port', String(port), '--pfx', certs.serverPfx, '--passphrase', certs.passphrase, '--json']
  if (kind === 'client-cert') args.push('--client-cert', '--no-revocation-check')
  const r = await h.httpsys(args)
  if (r.code !== 0) throw expected(`httpsys ${args.slice(0, -3).join(' ')} exited ${r.code}:\n${r.output}`)
  const result = firstJson(r.stdout)
  for (const i of result.intermediates || []) {
    if (i.added) t.cleanupAtEnd(`delete the test intermediate ${i.thumbprint} from LocalMachine\\CA`, () => removeFromStore(h, 'CA', i.thumbprint))
  }
  return { port, result, certs, leaf }
}

/** Deletes a certificate (and its private key, where it has one) from a LocalMachine store. */
function removeFromStore (h, store, thumb) {
  const item = `Cert:\\LocalMachine\\${store}\\${thumb}`
  const r = h.runSync('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command',
    `if (Test-Path '${item}') { Remove-Item -Path '${item}'${store === 'My' ? ' -DeleteKey' : ''} }`])
  if (r.code !== 0) throw new Error(`Remove-Item ${item}: ${r.output}`)
}

module.exports = { certificates, binding }
