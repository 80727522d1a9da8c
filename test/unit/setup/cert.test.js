'use strict'

// `httpsys cert`: bindings by IP:port or SNI host:port, certificates checked before
// binding, files imported first, rotations reported, shadowing explained.

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createServiceConfig } = require('../../../src/httpsys/service-config')
const { createCert } = require('../../../src/setup/cert')
const { createFakeAddon } = require('../../helpers/fake-addon')
const { makeChain } = require('../../helpers/tls-chain')

const A = 'aa'.repeat(20)
const B = 'bb'.repeat(20)

function setup () {
  const addon = createFakeAddon()
  const cert = createCert(createServiceConfig(() => addon))
  return { addon, cert }
}

let dir
beforeAll(() => { dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-cert-')) })
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('cert add', () => {
  test('by thumbprint on 0.0.0.0:port by default; again is unchanged; another is a replacement', () => {
    const { addon, cert } = setup()
    addon.addCertificate(A)
    addon.addCertificate(B)
    expect(cert.add({ port: 443, thumbprint: A.toUpperCase() })).toEqual({ binding: '0.0.0.0:443', thumbprint: A, clientCert: false, result: 'added', replaced: undefined, intermediates: [], warnings: [] })
    expect(cert.add({ port: 443, thumbprint: A }).result).toBe('unchanged')
    expect(cert.add({ port: 443, thumbprint: B })).toMatchObject({ result: 'replaced', replaced: A })
    expect(addon.sslCertList(false).records).toEqual([expect.objectContaining({ ip: '0.0.0.0', port: 443, hash: B, store: 'MY' })])
  })

  test('--client-cert makes HTTP.SYS ask clients for a certificate; adding it to a binding is a change, not "unchanged"', () => {
    const { addon, cert } = setup()
    addon.addCertificate(A)
    cert.add({ port: 443, thumbprint: A })
    expect(cert.add({ port: 443, thumbprint: A, clientCert: true })).toMatchObject({ result: 'replaced', clientCert: true, replaced: undefined })
    expect(addon.sslCertList(false).records).toEqual([expect.objectContaining({ port: 443, hash: A, flags: 0x2, checkMode: 0 })])
    expect(cert.add({ port: 443, thumbprint: A, clientCert: true }).result).toBe('unchanged')
    expect(cert.add({ port: 443, thumbprint: A, clientCert: true, revocationCheck: false }).result).toBe('replaced')
    // what Windows reads: DefaultCertCheckMode 1 is "no revocation check"
    expect(addon.sslCertList(false).records[0]).toMatchObject({ flags: 0x2, checkMode: 0x1 })
    expect(cert.list()[0]).toMatchObject({ clientCert: true, revocationCheck: false })
    // dropping --client-cert stops the asking (a rebind says what the binding does)
    cert.add({ port: 443, thumbprint: A })
    expect(addon.sslCertList(false).records[0]).toMatchObject({ flags: 0, checkMode: 0 })
    expect(() => cert.add({ port: 443, thumbprint: A, revocationCheck: false }))
      .toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG_VALUE', message: expect.stringContaining('--client-cert') }))
  })

  test('SNI: --host binds host:port', () => {
    const { addon, cert } = setup()
    addon.addCertificate(A)
    expect(cert.add({ port: 8443, host: 'Example.COM', thumbprint: A }).binding).toBe('example.com:8443')
    expect(addon.sslCertList(true).records).toEqual([expect.objectContaining({ host: 'example.com', port: 8443 })])
  })

  test.each([
    [{}, 'is not in LocalMachine\\My'],
    [{ hasPrivateKey: false }, 'has no private key'],
    [{ notAfter: Date.parse('2020-01-01') }, 'expired on 2020-01-01']
  ])('a certificate HTTP.SYS could not use is refused before binding: %p', (props, why) => {
    const { addon, cert } = setup()
    if (Object.keys(props).length > 0) addon.addCertificate(A, props)
    expect(() => cert.add({ port: 443, thumbprint: A })).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_CERT_UNUSABLE', message: expect.stringContaining(why)
    }))
    expect(addon.configCalls.filter((c) => c[0] === 'sslCertSet')).toEqual([])
  })

  test('a .pfx is imported into LocalMachine\\My first, then bound', () => {
    const { addon, cert } = setup()
    const pfx = path.join(dir, 'site.pfx')
    fs.writeFileSync(pfx, 'not really a pfx: the fake store takes it')
    const r = cert.add({ port: 443, pfx, passphrase: 'secret' })
    expect(r).toMatchObject({ binding: '0.0.0.0:443', result: 'added', thumbprint: 'a1'.repeat(20) })
    expect(addon.configCalls.map((c) => c[0])).toEqual(['certImport', 'sslCertSet'])
  })

  test('PEM files must hold what they claim; a missing file is named', () => {
    const { cert } = setup()
    const crt = path.join(dir, 'a.crt')
    const key = path.join(dir, 'a.key')
    fs.writeFileSync(crt, '-----BEGIN CERTIFICATE-----\nMII\n-----END CERTIFICATE-----\n')
    fs.writeFileSync(key, 'nope')
    expect(() => cert.add({ port: 443, cert: crt, key })).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CERT_FILE', message: expect.stringContaining('no PEM private key') }))
    expect(() => cert.add({ port: 443, pfx: path.join(dir, 'missing.pfx') })).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CERT_FILE', message: expect.stringContaining('does not exist') }))
  })

  test('arguments are checked: port, one source, --ip or --host', () => {
    const { cert } = setup()
    expect(() => cert.add({ port: 70000, thumbprint: A })).toThrow(/--port' must be a port number/)
    expect(() => cert.add({ port: 443 })).toThrow(/is needed once: --thumbprint/)
    expect(() => cert.add({ port: 443, thumbprint: A, pfx: 'x.pfx' })).toThrow(/is needed once/)
    expect(() => cert.add({ port: 443, ip: '1.2.3.4', host: 'a.test', thumbprint: A })).toThrow(/cannot be combined with --ip/)
    expect(() => cert.add({ port: 443, ip: 'localhost', thumbprint: A })).toThrow(/must be an IPv4 or IPv6 address/)
  })
})

describe('cert delete and list', () => {
  test('delete is idempotent; list shows the certificate state and what shadows what', () => {
    const { addon, cert } = setup()
    addon.addCertificate(A, { subject: 'CN=example.com', dnsNames: ['example.com'] })
    addon.addCertificate(B, { notAfter: Date.parse('2021-06-30') })
    cert.add({ port: 443, thumbprint: A })
    cert.add({ port: 443, host: 'example.com', thumbprint: A })
    // an old IP-specific binding (another tool's), with an expired certificate
    addon.sslCertSet({ ip: '10.0.0.5', port: 443, hash: Buffer.from(B, 'hex'), appId: '{00000000-0000-0000-0000-000000000000}', store: 'MY' }, false)
    const list = cert.list()
    expect(list.map((r) => r.binding)).toEqual(['0.0.0.0:443', '10.0.0.5:443', 'example.com:443'])
    const [wild, ip, sni] = list
    expect(wild).toMatchObject({ kind: 'ip', ours: true, problem: null })
    expect(wild.notes).toEqual(['shadowed by 10.0.0.5:443 for connections to 10.0.0.5', 'IPv6 clients are not covered: bind [::]:443 too'])
    expect(ip).toMatchObject({ ours: false, problem: 'it expired on 2021-06-30' })
    expect(ip.notes).toEqual(['may take precedence over the SNI bindings of port 443 for connections to 10.0.0.5'])
    expect(sni.notes).toEqual(['may be overridden by 10.0.0.5:443 for connections to 10.0.0.5'])
    expect(cert.delete({ port: 443, host: 'example.com' })).toEqual({ binding: 'example.com:443', deleted: true })
    expect(cert.delete({ port: 443, host: 'example.com' })).toEqual({ binding: 'example.com:443', deleted: false })
  })
})

describe('what cert add imports (issue 24)', () => {
  let chain
  beforeAll(() => { chain = makeChain() })
  afterAll(() => chain.cleanup())

  /** The fake addon, recording what each certImport received. */
  function recording () {
    const { addon, cert } = setup()
    const imported = []
    const certImport = addon.certImport
    addon.certImport = (source) => {
      imported.push(source)
      return certImport(source)
    }
    return { addon, cert, imported }
  }
  const pkcs8 = (pem) => crypto.createPrivateKey(pem).export({ type: 'pkcs8', format: 'der' })

  test.each([
    ['an encrypted PKCS#8 key file', 'encryptedKey'],
    ['OpenSSL\'s legacy encrypted PEM key file', 'legacyEncryptedKey']
  ])('%s opens with --passphrase and is imported as the key it is', (_, file) => {
    const { addon, cert, imported } = recording()
    const r = cert.add({ port: 443, cert: chain.files.leaf, key: chain.files[file], passphrase: chain.PASSPHRASE })
    expect(r).toMatchObject({ binding: '0.0.0.0:443', result: 'added' })
    expect(addon.sslCertList(false).records).toEqual([expect.objectContaining({ port: 443, hash: r.thumbprint })])
    // what reaches the addon: the certificate and its key, opened (never the passphrase)
    expect(imported).toHaveLength(1)
    expect(Object.keys(imported[0]).sort()).toEqual(['certPem', 'keyPem', 'store'])
    expect(new crypto.X509Certificate(imported[0].certPem).fingerprint).toBe(new crypto.X509Certificate(chain.pem.leaf).fingerprint)
    expect(pkcs8(imported[0].keyPem)).toEqual(pkcs8(chain.pem.key))
  })

  test('an encrypted key with a wrong or no passphrase is ERR_HTTPSYS_CERT_FILE naming the key file; nothing is imported', () => {
    const { addon, cert } = setup()
    expect(() => cert.add({ port: 443, cert: chain.files.leaf, key: chain.files.encryptedKey, passphrase: 'wrong' }))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CERT_FILE', file: chain.files.encryptedKey, message: expect.stringContaining('the private key is encrypted and the passphrase is wrong') }))
    expect(() => cert.add({ port: 443, cert: chain.files.leaf, key: chain.files.legacyEncryptedKey }))
      .toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CERT_FILE', message: expect.stringContaining('the passphrase is missing (--passphrase)') }))
    expect(addon.configCalls).toEqual([])
  })

  test('PEM text (a config\'s tls entry) is taken as files are; a message names where it came from, never the text', () => {
    const { addon, cert, imported } = recording()
    const r = cert.add({ port: 443, cert: chain.pem.leaf, key: chain.pem.key, from: 'the config\'s tls entry for 0.0.0.0:443' })
    expect(r.result).toBe('added')
    expect(pkcs8(imported[0].keyPem)).toEqual(pkcs8(chain.pem.key))
    expect(addon.sslCertList(false).records).toHaveLength(1)
    const other = crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' })
    let err
    try {
      cert.add({ port: 8443, cert: chain.pem.leaf, key: other, from: 'the config\'s tls entry for 0.0.0.0:8443' })
    } catch (e) {
      err = e
    }
    expect(err).toMatchObject({ code: 'ERR_HTTPSYS_CERT_FILE', message: expect.stringContaining('the private key does not belong to the certificate') })
    expect(err.message).toContain('the PEM certificate of the config\'s tls entry for 0.0.0.0:8443')
    expect(err.message).not.toMatch(/BEGIN|PRIVATE KEY-----/)
  })

  test('a .pfx: the key goes into a CNG key storage provider (TLS 1.3 needs RSA-PSS); its intermediate goes into LocalMachine\\CA, its root nowhere', () => {
    const { addon, cert } = setup()
    addon.machine.pfxChain = [chain.der.intermediate, chain.der.root]
    const r = cert.add({ port: 443, pfx: chain.files.pfx, passphrase: chain.PASSPHRASE })
    expect(addon.configCalls.find((c) => c[0] === 'certImport')).toEqual(['certImport', ['cng', 'passphrase', 'pfx', 'store']])
    // the key where Schannel can sign with it for TLS 1.3: no warning, in add or list
    expect(r.warnings).toEqual([])
    const [listed] = cert.list()
    expect(listed.certificate.keyProvider).toEqual({ name: 'Microsoft Software Key Storage Provider', cng: true })
    expect(listed.notes.join(' ')).not.toMatch(/TLS 1\.3/)
    // what Schannel sends with the certificate: the intermediate, found in LocalMachine\CA
    expect([...addon.certificates('CA').keys()]).toEqual([chain.thumbprint.intermediate])
    expect(addon.certificates('Root').size).toBe(0)
    expect(r.intermediates).toEqual([{ thumbprint: chain.thumbprint.intermediate, subject: 'CN=httpsys test intermediate', added: true }])
    // again: the intermediate is there already
    expect(cert.add({ port: 443, pfx: chain.files.pfx, passphrase: chain.PASSPHRASE }).intermediates[0].added).toBe(false)
    expect(addon.configCalls.filter((c) => c[0] === 'certAdd')).toHaveLength(1)
  })

  test('a PEM full chain: the certificate the key belongs to is imported, its intermediate goes into LocalMachine\\CA, the root nowhere', () => {
    const { addon, cert, imported } = recording()
    const r = cert.add({ port: 443, cert: chain.files.fullchain, key: chain.files.key })
    expect(imported).toHaveLength(1)
    expect(imported[0].certPem.match(/BEGIN CERTIFICATE/g)).toHaveLength(1)
    expect(new crypto.X509Certificate(imported[0].certPem).fingerprint).toBe(new crypto.X509Certificate(chain.pem.leaf).fingerprint)
    expect([...addon.certificates('CA').keys()]).toEqual([chain.thumbprint.intermediate])
    expect(addon.certificates('CA').get(chain.thumbprint.intermediate)).toMatchObject({ subject: 'CN=httpsys test intermediate', hasPrivateKey: false })
    expect(r.intermediates).toEqual([{ thumbprint: chain.thumbprint.intermediate, subject: 'CN=httpsys test intermediate', added: true }])
  })

  test('a certificate whose key is in a CryptoAPI provider is bound, with a warning that TLS 1.3 clients may fail', () => {
    const { addon, cert } = setup()
    addon.addCertificate(A, { keyProvider: { name: 'Microsoft Enhanced RSA and AES Cryptographic Provider', cng: false } })
    const r = cert.add({ port: 443, thumbprint: A })
    expect(r.result).toBe('added')
    expect(r.warnings).toEqual([expect.stringMatching(/Microsoft Enhanced RSA and AES Cryptographic Provider, a CryptoAPI provider that cannot sign with RSA-PSS, so TLS 1\.3 clients may fail/)])
    expect(cert.list()[0]).toMatchObject({ problem: null, notes: expect.arrayContaining([expect.stringContaining('TLS 1.3 clients may fail')]) })
  })
})

describe('a private key this account cannot open (issue 24)', () => {
  // what CryptAcquireCertificatePrivateKey answers an account, or an unelevated token,
  // for a machine key an elevated import made; HTTP.SYS uses it through LSASS all the same
  test.each([
    ['NTE_BAD_KEYSET', 0x80090016],
    ['NTE_PERM', 0x80090010],
    ['ERROR_ACCESS_DENIED', 5]
  ])('%s: the binding is listed as working, with a note; add binds it', (name, code) => {
    const { addon, cert } = setup()
    addon.addCertificate(A, { privateKeyCode: code })
    expect(cert.add({ port: 443, thumbprint: A }).result).toBe('added')
    const [r] = cert.list()
    expect(r.problem).toBeNull()
    expect(r.keyUnreadable).toBe(`its private key is there but this account cannot open it (${name}); HTTP.SYS can, as SYSTEM`)
  })

  test('a key that is another certificate\'s is still a problem, and refused before binding', () => {
    const { addon, cert } = setup()
    addon.addCertificate(A, { privateKeyCode: 0x80090015 })
    expect(() => cert.add({ port: 443, thumbprint: A })).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_CERT_UNUSABLE', message: expect.stringContaining('its private key belongs to another certificate (NTE_BAD_PUBLIC_KEY)')
    }))
  })
})

describe('rotating a certificate (issue 24)', () => {
  // a binding as `netsh http add sslcert ... verifyrevocationwithcachedclientcertonly=enable
  // revocationfreshnesstime=3600 urlretrievaltimeout=15000 sslctlidentifier=Partners
  // sslctlstorename=Root dsmapperusage=enable` or IIS makes it
  const IIS_APP_ID = '{4dc3e181-e14b-4a21-b022-59fc669b0914}'
  function netshBinding (addon) {
    addon.sslCertSet({
      ip: '0.0.0.0',
      port: 443,
      hash: Buffer.from(A, 'hex'),
      appId: IIS_APP_ID,
      store: 'MY',
      flags: 0x1,
      checkMode: 0x2 | 0x4,
      revocationFreshnessTime: 3600,
      urlRetrievalTimeout: 15000,
      ctlIdentifier: 'Partners',
      ctlStoreName: 'Root'
    }, false)
  }

  test('keeps what else the binding says: its AppId, flags, check modes, revocation and CTL settings', () => {
    const { addon, cert } = setup()
    addon.addCertificate(A)
    addon.addCertificate(B)
    netshBinding(addon)
    expect(cert.add({ port: 443, thumbprint: B })).toMatchObject({ result: 'replaced', replaced: A })
    expect(addon.sslCertList(false).records).toEqual([{
      ip: '0.0.0.0',
      port: 443,
      host: undefined,
      hash: B,
      appId: IIS_APP_ID,
      store: 'MY',
      flags: 0x1,
      checkMode: 0x2 | 0x4,
      revocationFreshnessTime: 3600,
      urlRetrievalTimeout: 15000,
      ctlIdentifier: 'Partners',
      ctlStoreName: 'Root'
    }])
    // --client-cert on it adds its flag and keeps the rest
    cert.add({ port: 443, thumbprint: B, clientCert: true, revocationCheck: false })
    expect(addon.sslCertList(false).records[0]).toMatchObject({ flags: 0x1 | 0x2, checkMode: 0x1 | 0x2 | 0x4, revocationFreshnessTime: 3600, ctlIdentifier: 'Partners' })
  })

  test('without HttpUpdateServiceConfiguration (delete, then set), a set HTTP.SYS refuses puts the old binding back', () => {
    const { addon, cert } = setup()
    addon.addCertificate(A)
    addon.addCertificate(B)
    netshBinding(addon)
    const before = addon.sslCertList(false).records
    addon.canUpdate = false
    // B's key turns out unusable to HTTP.SYS: 1312 (ERROR_NO_SUCH_LOGON_SESSION)
    addon.machine.codes.sslCertSet = (spec) => spec.hash.toString('hex') === B ? 1312 : 0
    expect(() => cert.add({ port: 443, thumbprint: B })).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CERT_UNUSABLE', restored: true }))
    expect(addon.sslCertList(false).records).toEqual(before)
    expect(addon.configCalls.map((c) => c[0]).slice(-4)).toEqual(['sslCertSet', 'sslCertDelete', 'sslCertSet', 'sslCertSet'])
  })

  test('if the old binding cannot be put back either, the error says the port is unbound and how to bind it', () => {
    const { addon, cert } = setup()
    addon.addCertificate(A)
    addon.addCertificate(B)
    cert.add({ port: 443, thumbprint: A })
    addon.canUpdate = false
    addon.machine.codes.sslCertSet = () => 1312
    expect(() => cert.add({ port: 443, thumbprint: B })).toThrow(expect.objectContaining({
      code: 'ERR_HTTPSYS_CERT_UNUSABLE',
      restored: false,
      message: expect.stringContaining(`0.0.0.0:443 has no certificate now. Bind one: \`httpsys cert add --port 443 --thumbprint ${A}\``)
    }))
  })
})

describe('httpsys cert, as printed (issue 24)', () => {
  let chain
  beforeAll(() => { chain = makeChain() })
  afterAll(() => chain.cleanup())

  async function run (addon, ...args) {
    let out = ''
    const { createProgram } = require('../../../src/cli')
    await createProgram({ platform: 'win32', serviceConfig: createServiceConfig(() => addon), out: (t) => { out += t } })
      .parseAsync(['node', 'httpsys', 'cert', ...args])
    return out
  }

  test('add names the intermediate it put into LocalMachine\\CA; list does not call a key this account cannot open broken', async () => {
    const addon = createFakeAddon()
    const out = await run(addon, 'add', '--port', '443', '--cert', chain.files.fullchain, '--key', chain.files.encryptedKey, '--passphrase', chain.PASSPHRASE)
    expect(out).toBe(`0.0.0.0:443 now serves ${'b2'.repeat(20)}\n` +
      `  intermediate CA CN=httpsys test intermediate (${chain.thumbprint.intermediate}) added to LocalMachine\\CA, sent with it to clients\n`)
    addon.addCertificate(A, { subject: 'CN=site', privateKeyCode: 0x80090016, notAfter: Date.parse('2099-01-01') })
    await run(addon, 'add', '--port', '8443', '--thumbprint', A)
    const list = await run(addon, 'list')
    expect(list).toMatch(/^0\.0\.0\.0:8443 +a{40} +CN=site +ok until 2099-01-01 /m)
    expect(list).not.toContain('BROKEN')
    expect(list).toContain('  0.0.0.0:8443: its private key is there but this account cannot open it (NTE_BAD_KEYSET); HTTP.SYS can, as SYSTEM\n')
  })
})
