'use strict'

// `httpsys cert`: bindings by IP:port or SNI host:port, certificates checked before
// binding, files imported first, rotations reported, shadowing explained.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { createServiceConfig } = require('../../../src/queue/httpsys/service-config')
const { createCert } = require('../../../src/setup/cert')
const { createFakeAddon } = require('../../helpers/fake-addon')

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
    expect(cert.add({ port: 443, thumbprint: A.toUpperCase() })).toEqual({ binding: '0.0.0.0:443', thumbprint: A, clientCert: false, result: 'added', replaced: undefined })
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
