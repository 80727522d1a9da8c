'use strict'

// The config's TLS keys: `tls` entries (paths or PEM text, ca, requestCert,
// rejectUnauthorized) and an app's redirect_http.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { validate } = require('../../../src/config')
const { configTls } = require('../../../src/supervisor/router-config')

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-tlskeys-'))
fs.writeFileSync(path.join(dir, 'app.js'), '')
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'
const run = (raw) => validate(raw, { baseDir: dir })
const app = (extra) => ({ script: 'app.js', ...extra })

test('cert, key and ca are paths (resolved from the config file) or PEM text', () => {
  const config = run({
    apps: [app()],
    tls: [{ port: 443, cert: './site.crt', key: PEM, ca: ['./ca1.crt', PEM], requestCert: true, rejectUnauthorized: false }]
  })
  expect(config.tls[0]).toEqual({
    port: 443, cert: path.join(dir, 'site.crt'), key: PEM, ca: [path.join(dir, 'ca1.crt'), PEM], requestCert: true, rejectUnauthorized: false
  })
})

test.each([
  ['rejectUnauthorized without requestCert', { port: 443, cert: 'a', key: 'b', rejectUnauthorized: true }, 'tls[0].rejectUnauthorized', /requestCert/],
  ['requestCert not a boolean', { port: 443, cert: 'a', key: 'b', requestCert: 'yes' }, 'tls[0].requestCert', /true or false/],
  ['cert without key', { port: 443, cert: 'a' }, 'tls[0].key', /cert and key go together/]
])('%s', (what, entry, key, words) => {
  expect(() => run({ apps: [app()], tls: [entry] })).toThrow(expect.objectContaining({ code: 'ERR_HTTPSYS_CONFIG_INVALID', key }))
  expect(() => run({ apps: [app()], tls: [entry] })).toThrow(words)
})

test('redirect_http: a port, with an https prefix to redirect to', () => {
  const config = run({ apps: [app({ urls: ['https://+:8443/'], redirect_http: 8080 })] })
  expect(config.apps[0].redirect_http).toBe(8080)
  expect(() => run({ apps: [app({ urls: ['http://+:8080/'], redirect_http: 80 })] })).toThrow(/needs an https prefix/)
  expect(() => run({ apps: [app({ urls: ['https://+:8443/'], redirect_http: 8443 })] })).toThrow(/the port of the app's https prefix/)
  expect(run({ apps: [app({ redirect_http: false })] }).apps[0].redirect_http).toBe(null)
})

test('on the hub, thumbprint-only and IP-bound entries are config errors naming the key', () => {
  expect(() => configTls([{ port: 443, pfx: '/x.pfx' }, { port: 443, thumbprint: 'ab' }])).toThrow(expect.objectContaining({ key: 'tls[1].thumbprint' }))
  expect(() => configTls([{ port: 443, ip: '10.0.0.1', cert: 'a', key: 'b' }])).toThrow(expect.objectContaining({ key: 'tls[0].ip' }))
  expect(configTls([{ port: 443, ip: '0.0.0.0', cert: 'a', key: 'b', store: 'My' }])).toEqual([{ port: 443, cert: 'a', key: 'b' }])
})
