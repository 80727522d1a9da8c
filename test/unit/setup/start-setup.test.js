'use strict'

// `httpsys start --setup` and `httpsys service install` on Windows (src/setup/start-setup.js):
// the certificate bindings a config's tls entries give, with their cert and key as files
// or as PEM text, an encrypted key with its passphrase; over the fake addon.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { createServiceConfig } = require('../../../src/httpsys/service-config')
const { validate } = require('../../../src/config')
const { setup } = require('../../../src/cli/start')
const { setupDeps } = require('../../../src/cli/setup-deps')
const { setupSteps } = require('../../../src/service/windows')
const { createFakeAddon } = require('../../helpers/fake-addon')
const { makeChain } = require('../../helpers/tls-chain')

let chain
let configFile
beforeAll(() => {
  chain = makeChain()
  fs.writeFileSync(path.join(chain.dir, 'app.js'), '')
  configFile = path.join(chain.dir, 'httpsys.config.js')
})
afterAll(() => chain.cleanup())

const env = { ...process.env }
beforeEach(() => {
  process.env.USERDOMAIN = 'BUILD'
  process.env.USERNAME = 'ci'
})
afterEach(() => { process.env = { ...env } })

function config (tls) {
  return validate({ apps: [{ script: 'app.js', urls: ['http://localhost:9000/'] }], tls }, { baseDir: chain.dir, source: { configFile } })
}

function windows ({ elevated }) {
  const addon = createFakeAddon()
  addon.machine.elevated = elevated
  const sc = createServiceConfig(() => addon)
  let text = ''
  const d = setupDeps({ platform: 'win32', serviceConfig: sc, out: (t) => { text += t } })
  return { addon, sc, d, text: () => text }
}

// the lines of a PEM body: what would give a key away if printed
const secretLines = (pem) => pem.split('\n').filter((l) => l.length >= 40 && !l.startsWith('-----'))
const encryptedKeyText = () => fs.readFileSync(chain.files.encryptedKey, 'utf8')

describe('a tls entry whose cert and key are PEM text in the config', () => {
  const entry = () => ({ port: 8443, cert: chain.pem.bundle, key: encryptedKeyText(), passphrase: chain.PASSPHRASE })

  test('not elevated: the advice is `httpsys start --setup`, and prints no key, certificate or passphrase', () => {
    const w = windows({ elevated: false })
    expect(() => setup(w.d, config([entry()]))).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_SETUP_REQUIRED', count: 1 }))
    expect(w.text()).toBe([
      '--setup: run these once from an elevated prompt (or `httpsys start --setup` there):',
      `  httpsys start -c "${configFile}" --setup`,
      ''
    ].join('\n'))
    for (const line of [...secretLines(encryptedKeyText()), ...secretLines(chain.pem.key), ...secretLines(chain.pem.leaf)]) {
      expect(w.text()).not.toContain(line)
    }
    expect(w.text()).not.toContain(chain.PASSPHRASE)
    expect(w.addon.configCalls).toEqual([])
  })

  test('two such entries: the command is printed once', () => {
    const w = windows({ elevated: false })
    expect(() => setup(w.d, config([entry(), { ...entry(), port: 9443 }]))).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_SETUP_REQUIRED', count: 2 }))
    expect(w.text().split('\n').filter((l) => l.startsWith('  '))).toEqual([`  httpsys start -c "${configFile}" --setup`])
  })

  test('elevated: imported with its passphrase and bound, its intermediate into LocalMachine\\CA', () => {
    const w = windows({ elevated: true })
    setup(w.d, config([entry()]))
    expect(w.text()).toBe('--setup: bind the certificate of the config\'s tls entry for 0.0.0.0:8443 (PEM text) to 0.0.0.0:8443: done\n')
    expect(w.addon.sslCertList(false).records).toEqual([expect.objectContaining({ ip: '0.0.0.0', port: 8443 })])
    expect([...w.addon.certificates('CA').keys()]).toEqual([chain.thumbprint.intermediate])
  })

  test('`httpsys service install` runs the same step: imported and bound', () => {
    const w = windows({ elevated: true })
    const steps = setupSteps(config([entry()]), w.sc, { admin: true, shown: 'LocalSystem' })
    expect(steps.map((s) => s.what)).toEqual(['bind the certificate of the config\'s tls entry for 0.0.0.0:8443 (PEM text) to 0.0.0.0:8443'])
    for (const step of steps) step.run()
    expect(w.addon.sslCertList(false).records).toEqual([expect.objectContaining({ port: 8443 })])
  })
})

describe('a tls entry whose key is an encrypted PEM file', () => {
  const entry = () => ({ port: 8443, host: 'site.test', cert: chain.files.fullchain, key: chain.files.encryptedKey, passphrase: chain.PASSPHRASE })

  test('not elevated: `httpsys cert add` with the files and a placeholder for the passphrase', () => {
    const w = windows({ elevated: false })
    expect(() => setup(w.d, config([entry()]))).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_SETUP_REQUIRED' }))
    expect(w.text()).toContain(`  httpsys cert add --port 8443 --host site.test --cert "${chain.files.fullchain}" --key "${chain.files.encryptedKey}" --passphrase <the config's passphrase>\n`)
    expect(w.text()).not.toContain(chain.PASSPHRASE)
  })

  test('elevated: the key is opened with the passphrase, imported and bound by SNI', () => {
    const w = windows({ elevated: true })
    const imported = []
    const certImport = w.addon.certImport
    w.addon.certImport = (source) => {
      imported.push(source)
      return certImport(source)
    }
    setup(w.d, config([entry()]))
    expect(w.addon.sslCertList(true).records).toEqual([expect.objectContaining({ host: 'site.test', port: 8443 })])
    expect(crypto.createPrivateKey(imported[0].keyPem).export({ type: 'pkcs8', format: 'der' }))
      .toEqual(crypto.createPrivateKey(chain.pem.key).export({ type: 'pkcs8', format: 'der' }))
  })
})
