'use strict'

// `httpsys start --setup` on HTTP.SYS, worker side (src/httpsys/app-cert.js): an
// https server attaching to a port with no certificate binding has the key and
// certificate its app passed imported into LocalMachine\My and bound, over the fake addon
// (the real store and bindings: test/windows/README.md, "The setup commands").

const { execFileSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { createBackend } = require('../../../src/queue/httpsys')
const { HTTPSYS_APP_ID } = require('../../../src/httpsys/service-config')
const { ENV } = require('../../../src/worker-interface')
const { HttpsysRouter } = require('../../../src/supervisor/httpsys-router')
const { setupEnv } = require('../../../src/cli/start')
const { createFakeAddon } = require('../../helpers/fake-addon')
const { makeCerts, selfSigned } = require('../../helpers/tls-certs')
const { makeChain } = require('../../helpers/tls-chain')

const OTHER = 'cc'.repeat(20)
const PASSPHRASE = 'correct horse battery staple'

let certs
let site // { cert, key } PEM text of a certificate for localhost
let stranger // another certificate's PEM text
let thumbprint // the site certificate's SHA-1, as Windows names it
let pfx // the site certificate and key as a PKCS#12, under PASSPHRASE
let encryptedKey // the site key as an encrypted PKCS#8, under PASSPHRASE
beforeAll(() => {
  certs = makeCerts()
  site = { cert: certs.read(certs.localhost.cert), key: certs.read(certs.localhost.key) }
  stranger = { cert: certs.read(certs.stranger.cert), key: certs.read(certs.stranger.key) }
  thumbprint = new crypto.X509Certificate(site.cert).fingerprint.replace(/:/g, '').toLowerCase()
  const pfxFile = path.join(certs.dir, 'site.pfx')
  execFileSync('openssl', ['pkcs12', '-export', '-in', certs.localhost.cert, '-inkey', certs.localhost.key,
    '-out', pfxFile, '-passout', `pass:${PASSPHRASE}`], { stdio: ['ignore', 'ignore', 'pipe'] })
  pfx = fs.readFileSync(pfxFile)
  encryptedKey = crypto.createPrivateKey(site.key).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: PASSPHRASE })
})
afterAll(() => certs.cleanup())

const saved = process.env[ENV.SETUP]
afterEach(() => {
  if (saved === undefined) delete process.env[ENV.SETUP]
  else process.env[ENV.SETUP] = saved
})

/**
 * A worker's https server attaching over the fake addon.
 * @param {object} [options]
 * @param {boolean} [options.setup=true] under `httpsys start --setup`
 * @param {object} [options.tls] what the app passed (default: the site's PEM key and cert)
 * @param {string[]} [options.urls]
 * @param {object} [options.addon] a fake addon to share (a second instance of the app)
 * @param {Date} [options.now]
 */
async function attachHttps ({ setup = true, tls = { key: site.key, cert: site.cert }, urls = ['https://+:8443/'], addon = createFakeAddon(), now } = {}) {
  if (setup) process.env[ENV.SETUP] = '1'
  else delete process.env[ENV.SETUP]
  const records = []
  const backend = createBackend(() => addon, {
    log: (level, fields, message) => records.push({ level, fields, message }),
    now: now && (() => now)
  })
  const attachment = await backend.attach({ urls, handlers: { onRequest () {} }, tls })
  const calls = (name) => addon.configCalls.filter((c) => c[0] === name)
  return { addon, attachment, records, calls, queue: addon.queues[addon.queues.length - 1] }
}

const shown = (records) => records.filter((r) => r.level !== 'debug')

describe('httpsys start --setup: an https app\'s own certificate on a port with no binding', () => {
  test('an app that asks clients for a certificate (requestCert) gets a binding that has HTTP.SYS ask for one', async () => {
    const { addon, records } = await attachHttps({ tls: { key: site.key, cert: site.cert, requestCert: true } })
    expect(addon.sslCertList(false).records).toEqual([expect.objectContaining({ port: 8443, flags: 0x2 })])
    expect(shown(records).map((r) => r.fields.event)).toEqual(['tls-bound'])
  })

  test('is imported into LocalMachine\\My and bound to 0.0.0.0:port with httpsys\'s AppId, in one record', async () => {
    const addon = createFakeAddon()
    const imported = []
    const certImport = addon.certImport
    addon.certImport = (source) => {
      imported.push(source)
      return certImport(source)
    }
    const { records, calls } = await attachHttps({ addon })
    expect(calls('certImport')).toEqual([['certImport', ['certPem', 'keyPem', 'store']]])
    // the certificate and the key the app passed, as the addon reads them
    expect(imported[0].store).toBe('My')
    expect(new crypto.X509Certificate(imported[0].certPem).fingerprint).toBe(new crypto.X509Certificate(site.cert).fingerprint)
    expect(crypto.createPrivateKey(imported[0].keyPem).export({ type: 'pkcs8', format: 'der' }))
      .toEqual(crypto.createPrivateKey(site.key).export({ type: 'pkcs8', format: 'der' }))
    const hash = 'b2'.repeat(20) // the fake store's thumbprint for an imported PEM pair
    expect(addon.sslCertList(false).records).toEqual([{ ip: '0.0.0.0', port: 8443, host: undefined, hash, appId: HTTPSYS_APP_ID, store: 'MY', flags: 0, checkMode: 0 }])
    expect(calls('sslCertSet')).toEqual([['sslCertSet', expect.objectContaining({ ip: '0.0.0.0', port: 8443 }), false]])

    expect(shown(records)).toHaveLength(1)
    const [record] = records
    const notAfter = new Date(new crypto.X509Certificate(site.cert).validTo).toISOString()
    expect(record.level).toBe('info')
    expect(record.fields).toEqual({
      event: 'tls-bound',
      binding: '0.0.0.0:8443',
      port: 8443,
      host: undefined,
      prefixes: ['https://+:8443/'],
      thumbprint: hash,
      subject: 'CN=localhost',
      notAfter,
      store: 'My',
      imported: true,
      appId: HTTPSYS_APP_ID
    })
    expect(record.message).toBe('bound the certificate the app passed to https.createServer() to 0.0.0.0:8443 for https://+:8443/: ' +
      `CN=localhost, thumbprint ${hash}, valid until ${notAfter.slice(0, 10)}, imported into LocalMachine\\My. ` +
      'The binding stays after the app stops: `httpsys cert list` shows it, `httpsys cert delete --port 8443` removes it.')
  })

  test('a prefix that names its host gets an SNI binding host:port', async () => {
    const { addon, records } = await attachHttps({ urls: ['https://a.localhost:8443/'] })
    expect(addon.sslCertList(false).records).toEqual([])
    expect(addon.sslCertList(true).records).toEqual([expect.objectContaining({ host: 'a.localhost', port: 8443, appId: HTTPSYS_APP_ID })])
    expect(records[0].fields).toMatchObject({ event: 'tls-bound', binding: 'a.localhost:8443', host: 'a.localhost' })
    expect(records[0].message).toContain('`httpsys cert delete --port 8443 --host a.localhost` removes it')
  })

  test('a pfx is imported with its passphrase; an encrypted PEM key is opened with it', async () => {
    const p = await attachHttps({ tls: { pfx, passphrase: PASSPHRASE } })
    // cng: the key goes into a CNG key storage provider (PKCS12_ALWAYS_CNG_KSP), where it can sign for TLS 1.3
    expect(p.calls('certImport')).toEqual([['certImport', ['cng', 'passphrase', 'pfx', 'store']]])
    expect(p.records[0].fields).toMatchObject({ event: 'tls-bound', thumbprint: 'a1'.repeat(20), subject: 'CN=localhost' })
    const e = await attachHttps({ tls: { key: encryptedKey, cert: site.cert, passphrase: PASSPHRASE } })
    expect(e.records[0].fields).toMatchObject({ event: 'tls-bound', binding: '0.0.0.0:8443' })
  })

  test('a certificate in the store whose machine key this account cannot open is bound as it is, not imported again', async () => {
    // what CryptAcquireCertificatePrivateKey answers an unelevated token for a key an
    // elevated import made; HTTP.SYS uses it through LSASS all the same
    const addon = createFakeAddon()
    addon.addCertificate(thumbprint, { privateKeyCode: 0x80090016 })
    const { records, calls } = await attachHttps({ addon })
    expect(calls('certImport')).toEqual([])
    expect(addon.sslCertList(false).records).toEqual([expect.objectContaining({ port: 8443, hash: thumbprint })])
    expect(records[0].fields).toMatchObject({ event: 'tls-bound', thumbprint, imported: false })
  })

  test('a certificate passed with its chain: the intermediate goes into LocalMachine\\CA, where HTTP.SYS sends it from', async () => {
    const chain = makeChain()
    try {
      const { addon, records } = await attachHttps({ tls: { key: chain.pem.key, cert: chain.pem.bundle }, urls: ['https://site.test:8443/'] })
      expect(records.map((r) => r.fields.event)).toEqual(['tls-bound'])
      expect([...addon.certificates('CA').keys()]).toEqual([chain.thumbprint.intermediate])
      expect(addon.certificates('Root').size).toBe(0)
    } finally {
      chain.cleanup()
    }
  })

  test('a certificate already in the store with its key is bound without importing it again', async () => {
    const addon = createFakeAddon()
    addon.addCertificate(thumbprint)
    const { records, calls } = await attachHttps({ addon })
    expect(calls('certImport')).toEqual([])
    expect(addon.sslCertList(false).records).toEqual([expect.objectContaining({ port: 8443, hash: thumbprint })])
    expect(records[0].fields).toMatchObject({ event: 'tls-bound', thumbprint, imported: false })
    expect(records[0].message).toContain(', already in LocalMachine\\My.')
  })
})

describe('what --setup leaves alone', () => {
  test('without --setup nothing is imported or bound: the warning says `httpsys start --setup` does it', async () => {
    const { records, calls } = await attachHttps({ setup: false })
    expect(calls('certImport')).toEqual([])
    expect(calls('sslCertSet')).toEqual([])
    expect(records).toHaveLength(1)
    expect(records[0].level).toBe('warn')
    expect(records[0].fields).toEqual({ event: 'tls-unbound', port: 8443, prefixes: ['https://+:8443/'] })
    expect(records[0].message).toContain('`httpsys start --setup`, run once from an elevated prompt, imports and binds them for you')
    expect(records[0].message).toContain('`httpsys cert add --port 8443 --cert <its certificate file> --key <its key file>`')
  })

  test.each([
    ['a binding of the port', 'https://+:8443/', { ip: '0.0.0.0', port: 8443 }],
    ['an IP-specific binding of the port', 'https://+:8443/', { ip: '10.0.0.5', port: 8443 }],
    ['an SNI binding on the port of a wildcard prefix', 'https://+:8443/', { host: 'other.example', port: 8443 }],
    ['the host\'s SNI binding', 'https://a.localhost:8443/', { host: 'a.localhost', port: 8443 }],
    ['the port\'s IP binding for a named host', 'https://a.localhost:8443/', { ip: '0.0.0.0', port: 8443 }]
  ])('%s is never replaced', async (_, url, existing) => {
    const addon = createFakeAddon()
    addon.sslCertSet({ ...existing, hash: Buffer.from(OTHER, 'hex'), appId: '{someone-else}', store: 'MY' }, false)
    const before = [...addon.sslCertList(false).records, ...addon.sslCertList(true).records]
    const { records, calls } = await attachHttps({ addon, urls: [url] })
    expect(calls('certImport')).toEqual([])
    expect(calls('sslCertSet')).toHaveLength(1) // the test's own
    expect([...addon.sslCertList(false).records, ...addon.sslCertList(true).records]).toEqual(before)
    expect(records).toEqual([])
  })

  test('an SNI binding of another host does not cover a named host: that one is bound', async () => {
    const addon = createFakeAddon()
    addon.sslCertSet({ host: 'other.example', port: 8443, hash: Buffer.from(OTHER, 'hex'), appId: '{someone-else}', store: 'MY' }, false)
    const { records } = await attachHttps({ addon, urls: ['https://a.localhost:8443/'] })
    expect(addon.sslCertList(true).records.map((r) => `${r.host}:${r.hash}`)).toEqual([`other.example:${OTHER}`, `a.localhost:${'b2'.repeat(20)}`])
    expect(records[0].fields.event).toBe('tls-bound')
  })

  test('an http server, or an https one with no key of its own, binds nothing', async () => {
    const h = await attachHttps({ urls: ['http://+:8080/'] })
    expect(h.addon.configCalls).toEqual([])
    expect(h.records).toEqual([])
    const s = await attachHttps({ tls: null })
    expect(s.addon.configCalls).toEqual([])
    expect(s.records).toEqual([])
  })

  test('two instances of the app: the second finds the first one\'s binding', async () => {
    const addon = createFakeAddon()
    const first = await attachHttps({ addon })
    const second = await attachHttps({ addon })
    expect(first.records.map((r) => r.fields.event)).toEqual(['tls-bound'])
    expect(second.records).toEqual([])
    expect(addon.configCalls.filter((c) => c[0] === 'certImport')).toHaveLength(1)
    expect(addon.sslCertList(false).records).toHaveLength(1)
  })

  test('two instances racing: the second\'s set finds the first one\'s binding (183) and logs no second record', async () => {
    const addon = createFakeAddon()
    await attachHttps({ addon })
    // the second looked before the first had bound: its look finds nothing
    const list = addon.sslCertList
    let looks = 0
    addon.sslCertList = (sni) => (looks++ < 2 ? { code: 2, records: [] } : list(sni))
    const second = await attachHttps({ addon })
    expect(shown(second.records)).toEqual([])
    expect(second.records.map((r) => r.fields.event)).toEqual(['tls-bound-meanwhile'])
    const sets = addon.configCalls.filter((c) => c[0] === 'sslCertSet')
    expect(sets).toHaveLength(2) // the second answered 183 and changed nothing
    expect(list(false).records).toEqual([expect.objectContaining({ port: 8443, hash: 'b2'.repeat(20), appId: HTTPSYS_APP_ID })])
  })

  test('under Wine, which stores no binding, it stays a warning and imports nothing', async () => {
    const { records, calls } = await attachHttps({ addon: createFakeAddon({ wine: '9.0' }) })
    expect(calls('certImport')).toEqual([])
    expect(calls('sslCertSet')).toEqual([])
    expect(records.map((r) => [r.level, r.fields.event])).toEqual([['warn', 'tls-unbound']])
    expect(records[0].message).toContain('Under Wine, which stores no certificate binding, `httpsys start --setup` cannot bind one.')
  })
})

describe('a certificate --setup cannot bind: one coded error record with the fix, and the app runs on', () => {
  async function failing (options, prepare = () => {}) {
    const addon = createFakeAddon()
    prepare(addon)
    const t = await attachHttps({ addon, ...options })
    // attached and receiving all the same
    expect(t.queue.started).toBe(true)
    expect(t.attachment.info.urls).toEqual(['https://+:8443/'])
    expect(t.records).toHaveLength(1)
    expect(t.records[0].level).toBe('error')
    expect(t.records[0].fields).toMatchObject({ event: 'tls-bind-failed', binding: '0.0.0.0:8443', port: 8443, prefixes: ['https://+:8443/'] })
    expect(t.records[0].fields.err.code).toBe(t.records[0].fields.code)
    expect(t.records[0].message).toMatch(/^https:\/\/\+:8443\/: no certificate is bound to 0\.0\.0\.0:8443, so HTTP\.SYS refuses every TLS handshake there, and httpsys start --setup could not bind the app's: /)
    expect(addon.sslCertList(false).records).toEqual([])
    return t
  }

  test('a key that does not belong to the certificate: ERR_HTTPSYS_TLS_CERT, nothing imported', async () => {
    const t = await failing({ tls: { key: stranger.key, cert: site.cert } })
    expect(t.records[0].fields.code).toBe('ERR_HTTPSYS_TLS_CERT')
    expect(t.records[0].message).toContain('the private key does not belong to the certificate')
    expect(t.records[0].message).toContain('Fix the key and cert (or pfx and passphrase) the app passes to https.createServer()')
    expect(t.calls('certImport')).toEqual([])
  })

  test('an expired certificate: ERR_HTTPSYS_TLS_CERT with its date, nothing imported', async () => {
    const expired = selfSigned(certs.dir, 'expired', ['expired.localhost'], 1)
    const cert = certs.read(expired.cert)
    const notAfter = new Date(new crypto.X509Certificate(cert).validTo)
    const t = await failing({ tls: { key: certs.read(expired.key), cert }, now: new Date(notAfter.getTime() + 86400000) })
    expect(t.records[0].fields.code).toBe('ERR_HTTPSYS_TLS_CERT')
    expect(t.records[0].message).toContain(`the certificate (CN=expired.localhost) expired on ${notAfter.toISOString()}`)
    expect(t.calls('certImport')).toEqual([])
  })

  test('a wrong passphrase: ERR_HTTPSYS_TLS_CERT saying so', async () => {
    const p = await failing({ tls: { pfx, passphrase: 'wrong' } })
    expect(p.records[0].fields.code).toBe('ERR_HTTPSYS_TLS_CERT')
    expect(p.records[0].message).toContain('the passphrase is wrong')
    const k = await failing({ tls: { key: encryptedKey, cert: site.cert, passphrase: 'wrong' } })
    expect(k.records[0].message).toContain('the private key is encrypted and the passphrase is wrong or missing')
    // about one wrong passphrase in 256 decrypts to bytes whose padding checks: OpenSSL's
    // error is then the decoder's ("unsupported"), and it is still the passphrase
    let lucky = null
    for (let i = 0; i < 5000 && lucky === null; i++) {
      try {
        crypto.createPrivateKey({ key: encryptedKey, passphrase: `wrong${i}` })
      } catch (err) {
        if (!/bad decrypt/i.test(err.message)) lucky = `wrong${i}`
      }
    }
    expect(lucky).not.toBeNull()
    const l = await failing({ tls: { key: encryptedKey, cert: site.cert, passphrase: lucky } })
    expect(l.records[0].message).toContain('the private key is encrypted and the passphrase is wrong or missing')
  })

  test('no Administrator rights: ERR_HTTPSYS_NOT_ELEVATED naming the elevated command', async () => {
    const t = await failing({}, (addon) => { addon.machine.denied = true })
    expect(t.records[0].fields.code).toBe('ERR_HTTPSYS_NOT_ELEVATED')
    expect(t.records[0].fields.err).toMatchObject({ win32: 5, syscall: 'PFXImportCertStore' })
    expect(t.records[0].message).toContain('Importing the certificate the app passed to https.createServer() (CN=localhost) into LocalMachine\\My needs Administrator rights')
    expect(t.records[0].message).toContain('Open an elevated prompt (right-click Terminal > Run as administrator) and run: `httpsys start --setup`')
  })

  test('the certificate is in the store already but binding it is denied: the same, from the binding', async () => {
    const t = await failing({}, (addon) => {
      addon.addCertificate(thumbprint)
      addon.machine.denied = true
    })
    expect(t.records[0].fields.code).toBe('ERR_HTTPSYS_NOT_ELEVATED')
    expect(t.records[0].fields.err.syscall).toBe('HttpSetServiceConfiguration')
    expect(t.records[0].message).toContain(`Binding the certificate the app passed to https.createServer() (CN=localhost, thumbprint ${thumbprint}) to 0.0.0.0:8443 needs Administrator rights`)
  })
})

test('no record ever holds the private key, the pfx or the passphrase', async () => {
  const all = []
  const run = async (options, prepare = () => {}) => {
    const addon = createFakeAddon()
    prepare(addon)
    all.push(...(await attachHttps({ addon, ...options })).records)
  }
  await run({})
  await run({ setup: false })
  await run({ tls: { pfx, passphrase: PASSPHRASE } })
  await run({ tls: { pfx, passphrase: 'wrong' } })
  await run({ tls: { key: encryptedKey, cert: site.cert, passphrase: PASSPHRASE } })
  await run({ tls: { key: stranger.key, cert: site.cert } })
  await run({}, (addon) => { addon.machine.denied = true })
  expect(all.length).toBeGreaterThanOrEqual(7)
  const text = all.map((r) => JSON.stringify(r.fields) + '\n' + r.message).join('\n')
  const secrets = [
    ...pemLines(site.key), ...pemLines(stranger.key), ...pemLines(encryptedKey),
    ...pemLines(crypto.createPrivateKey(site.key).export({ type: 'pkcs8', format: 'pem' })),
    pfx.toString('base64').slice(0, 64), pfx.toString('hex').slice(0, 64), PASSPHRASE
  ]
  for (const secret of secrets) expect(text).not.toContain(secret)
  expect(text).not.toMatch(/PRIVATE KEY/)
})

function pemLines (pem) {
  return pem.split('\n').filter((line) => line.length >= 40 && !line.startsWith('-----'))
}

describe('the supervisor hands --setup to its HTTP.SYS workers (HTTPSYS_SETUP)', () => {
  const app = { name: 'web', urls: ['https://+:8443/'] }

  test('the HTTP.SYS router sets it under --setup and removes it otherwise', () => {
    expect(new HttpsysRouter({ setup: true }).workerEnv(app)[ENV.SETUP]).toBe('1')
    expect(ENV.SETUP in new HttpsysRouter({ setup: false }).workerEnv(app)).toBe(true)
    expect(new HttpsysRouter({ setup: false }).workerEnv(app)[ENV.SETUP]).toBeUndefined()
    process.env[ENV.SETUP] = '1'
    expect(new HttpsysRouter().workerEnv(app)[ENV.SETUP]).toBe('1')
  })

  test('only `httpsys start --setup` turns it on: an inherited value is dropped, except in its daemon', () => {
    const env = {}
    setupEnv(true, env)
    expect(env[ENV.SETUP]).toBe('1')
    setupEnv(undefined, env)
    expect(env[ENV.SETUP]).toBeUndefined()
    const daemon = { [ENV.SETUP]: '1', HTTPSYS_DAEMON: '1' }
    setupEnv(undefined, daemon)
    expect(daemon[ENV.SETUP]).toBe('1')
  })
})
