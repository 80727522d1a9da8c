'use strict'

// `httpsys doctor` on Windows (src/setup/doctor.js): what it says of a certificate
// binding's private key, over the fake addon. A machine key an elevated import made
// usually does not open for another account or an unelevated token, while HTTP.SYS uses
// it through LSASS: that binding works, and doctor must not call it broken.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { doctor } = require('../../../src/setup/doctor')
const { createCert } = require('../../../src/setup/cert')
const { createServiceConfig } = require('../../../src/httpsys/service-config')
const { validate } = require('../../../src/config')
const { createFakeAddon } = require('../../helpers/fake-addon')

const A = 'aa'.repeat(20)
const NTE_BAD_KEYSET = 0x80090016

let dir
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-doctor-'))
  fs.writeFileSync(path.join(dir, 'app.js'), '')
})
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** doctor over a machine whose 0.0.0.0:443 serves the certificate A with these properties. */
async function check (certificate, { elevated }) {
  const addon = createFakeAddon()
  addon.machine.elevated = elevated
  addon.urlAclSet('https://+:443/', 'D:(A;;GX;;;S-1-1-0)')
  addon.addCertificate(A, { subject: 'CN=site', ...certificate })
  addon.sslCertSet({ ip: '0.0.0.0', port: 443, hash: Buffer.from(A, 'hex'), appId: '{x}', store: 'MY' }, false)
  const sc = createServiceConfig(() => addon)
  const config = validate({ apps: [{ script: 'app.js', urls: ['https://+:443/'] }] }, { baseDir: dir })
  const report = await doctor({ config, platform: 'win32', serviceConfig: () => sc, cert: () => createCert(sc), loadAddon: () => addon })
  return { report, cert: report.findings.filter((f) => f.area === 'cert' && f.message.startsWith('the binding 0.0.0.0:443')) }
}

describe('doctor: the private key of a bound certificate', () => {
  test('not elevated, a key that does not open for this account is fine: ok, saying so', async () => {
    const { report, cert } = await check({ privateKeyCode: NTE_BAD_KEYSET }, { elevated: false })
    expect(cert).toEqual([{
      level: 'ok',
      area: 'cert',
      message: expect.stringMatching(/^the binding 0\.0\.0\.0:443 serves CN=site until \d{4}-\d\d-\d\d \(its private key is there but this account cannot open it \(NTE_BAD_KEYSET\); HTTP\.SYS can, as SYSTEM\)$/)
    }])
    expect(report.findings.filter((f) => f.level === 'error')).toEqual([])
  })

  test('elevated, where an administrator should open it, a warning with the fix; still not an error', async () => {
    const { report, cert } = await check({ privateKeyCode: NTE_BAD_KEYSET }, { elevated: true })
    expect(cert).toEqual([{
      level: 'warn',
      area: 'cert',
      message: expect.stringMatching(/^the binding 0\.0\.0\.0:443 serves CN=site until \d{4}-\d\d-\d\d, but its private key did not open even in this elevated prompt \(NTE_BAD_KEYSET\)$/),
      fix: 'if TLS handshakes on 0.0.0.0:443 fail, import the certificate again with its key: `httpsys cert add --port 443 --pfx site.pfx`'
    }])
    expect(report.ok).toBe(true)
  })

  test('a key that is another certificate\'s is an error', async () => {
    const { report, cert } = await check({ privateKeyCode: 0x80090015 }, { elevated: false })
    expect(cert[0]).toMatchObject({ level: 'error', message: expect.stringContaining('its private key belongs to another certificate (NTE_BAD_PUBLIC_KEY)') })
    expect(report.ok).toBe(false)
  })

  test('a key in a CryptoAPI provider: a warning that TLS 1.3 clients may fail, with the way out', async () => {
    const { report } = await check({ keyProvider: { name: 'Microsoft Enhanced RSA and AES Cryptographic Provider', cng: false } }, { elevated: true })
    expect(report.findings).toContainEqual({
      level: 'warn',
      area: 'cert',
      message: expect.stringMatching(/^0\.0\.0\.0:443: its private key is in Microsoft Enhanced RSA and AES Cryptographic Provider, a CryptoAPI provider that cannot sign with RSA-PSS, so TLS 1\.3 clients may fail .*`httpsys cert add`/)
    })
    expect(report.ok).toBe(true)
  })
})
