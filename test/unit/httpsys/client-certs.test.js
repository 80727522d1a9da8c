'use strict'

// Client certificates on HTTP.SYS (src/httpsys/client-certs.js): the worker checks
// the certificate HTTP.SYS hands over against the app's `ca`, and must come to what node
// says of the same certificate in a real handshake. Each case below is run through both:
// a node tls server with requestCert (rejectUnauthorized false, so it reports instead of
// refusing) and a client sending only its own certificate (HTTP.SYS hands over the leaf
// only), and verifyChain() on that certificate.
//
// Real Windows would also check: a binding made with `httpsys cert add --client-cert`
// makes HTTP.SYS ask for the certificate (Wine has no HTTPS server to try it on).

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const tls = require('node:tls')
const { X509Certificate } = require('node:crypto')
const cc = require('../../../src/httpsys/client-certs')
const { readWorkerEnv } = require('../../../src/worker-interface')

let dir
const file = (name) => fs.readFileSync(path.join(dir, name), 'utf8')
const der = (name) => new X509Certificate(file(`${name}.crt`)).raw

function openssl (...args) {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
}

function root (base, cn) {
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.crt`, '-days', '3',
    '-subj', `/CN=${cn}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
}

function issue (base, cn, issuer, ext) {
  openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${cn}`)
  fs.writeFileSync(path.join(dir, `${base}.ext`), ext)
  openssl('x509', '-req', '-in', `${base}.csr`, '-CA', `${issuer}.crt`, '-CAkey', `${issuer}.key`, '-CAcreateserial',
    '-out', `${base}.crt`, '-days', '2', '-extfile', `${base}.ext`)
}

const LEAF = 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n'
const CA = 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n'

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-client-certs-'))
  root('root', 'httpsys test root')
  root('other', 'httpsys test root') // the same name, another key
  issue('inter', 'httpsys test intermediate', 'root', CA)
  issue('client', 'client of the root', 'root', LEAF)
  issue('deep', 'client of the intermediate', 'inter', LEAF)
  issue('fake', 'client of a leaf', 'client', LEAF) // issued by a certificate that is no CA
  issue('server', 'a server', 'root', 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n')
  issue('plain', 'no extended key usage', 'root', 'basicConstraints=CA:FALSE\n')
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'self.key', '-out', 'self.crt', '-days', '2', '-subj', '/CN=self-signed client')
})

afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true })
})

/** node's socket.authorizationError for `client` presenting itself to a server trusting `cas`. */
function nodeSays (client, cas) {
  return new Promise((resolve, reject) => {
    const server = tls.createServer({
      key: file('root.key'), cert: file('root.crt'), requestCert: true, rejectUnauthorized: false, ca: cas.map((c) => file(`${c}.crt`))
    }, (socket) => {
      resolve(socket.authorized ? null : String(socket.authorizationError))
      socket.destroy()
      server.close()
    })
    server.listen(0, '127.0.0.1', () => {
      const s = tls.connect({ port: server.address().port, host: '127.0.0.1', key: file(`${client}.key`), cert: file(`${client}.crt`), rejectUnauthorized: false })
      s.on('error', () => {})
      s.on('close', () => {})
    })
    server.on('error', reject)
  })
}

describe('verifyChain comes to what node says in the handshake', () => {
  const cases = [
    ['a client the trusted root issued', 'client', ['root'], null],
    ['a self-signed client', 'self', ['root'], 'DEPTH_ZERO_SELF_SIGNED_CERT'],
    ['a self-signed client trusted as itself', 'self', ['root', 'self'], null],
    ['a client of an intermediate, both CAs trusted', 'deep', ['root', 'inter'], null],
    ['a client of an intermediate, only the root trusted', 'deep', ['root'], 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
    ['a client of an intermediate, only the intermediate trusted', 'deep', ['inter'], 'UNABLE_TO_GET_ISSUER_CERT'],
    ['a client of a root with the same name and another key', 'client', ['other'], 'UNABLE_TO_VERIFY_LEAF_SIGNATURE'],
    ['a client whose issuer is no CA', 'fake', ['root', 'client'], 'INVALID_PURPOSE'],
    ['a certificate for servers only', 'server', ['root'], 'INVALID_PURPOSE'],
    ['a certificate that names no uses', 'plain', ['root'], null]
  ]
  test.each(cases)('%s', async (_, client, cas, expected) => {
    const node = await nodeSays(client, cas)
    expect(node).toBe(expected)
    expect(cc.verifyChain(der(client), cc.parseCa(cas.map((c) => file(`${c}.crt`))), new Date())).toBe(node)
  })

  test('outside the validity period of the client or of a CA in its chain', () => {
    const cas = cc.parseCa([file('root.crt'), file('inter.crt')])
    const soon = new Date(Date.now() + 2.5 * 86400e3) // the leaves (2 days) have expired, the CAs (3) not
    expect(cc.verifyChain(der('deep'), cas, soon)).toBe('CERT_HAS_EXPIRED')
    expect(cc.verifyChain(der('deep'), cas, new Date(Date.now() - 86400e3))).toBe('CERT_NOT_YET_VALID')
    expect(cc.verifyChain(Buffer.from('not a certificate'), cas, new Date())).toBe('CERT_REJECTED')
  })

  test('ca as node takes it: a PEM bundle, DER buffers, one string', () => {
    const bundle = file('root.crt') + file('inter.crt')
    expect(cc.parseCa(bundle).map((c) => c.subject)).toEqual(['CN=httpsys test root', 'CN=httpsys test intermediate'])
    expect(cc.parseCa([der('root'), Buffer.from(file('inter.crt'))]).length).toBe(2)
    expect(() => cc.parseCa('nothing')).toThrow()
  })
})

describe('ClientCertPolicy: what reaches the app', () => {
  const tlsOf = (cert, authorized = false, authorizationError = null) => ({ protocol: 'TLSv1.3', servername: null, authorized, authorizationError, peerCertificate: cert })

  test('with ca: authorized by the chain check, whatever Windows said', () => {
    const p = new cc.ClientCertPolicy({ ca: file('root.crt') })
    const good = tlsOf(der('client'), false, 'SELF_SIGNED_CERT_IN_CHAIN') // a private root Windows does not trust
    expect(p.judge(good)).toBe(true)
    expect(good).toMatchObject({ authorized: true, authorizationError: null })
    const bad = tlsOf(der('self'), true)
    expect(p.judge(bad)).toBe(false) // rejectUnauthorized: node's default with requestCert
    expect(bad).toMatchObject({ authorized: false, authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT' })
  })

  test('without ca: Windows\' verdict; no certificate is never authorized', () => {
    const p = new cc.ClientCertPolicy({})
    expect(p.judge(tlsOf(der('client'), true))).toBe(true)
    const refused = tlsOf(der('client'), false, 'CERT_REVOKED')
    expect(p.judge(refused)).toBe(false)
    expect(refused.authorizationError).toBe('CERT_REVOKED')
    const none = tlsOf(null, false)
    expect(p.judge(none)).toBe(false)
    expect(none).toMatchObject({ authorized: false, authorizationError: 'UNABLE_TO_GET_ISSUER_CERT' })
  })

  test('rejectUnauthorized: false lets the request through, with the verdict on it', () => {
    const p = new cc.ClientCertPolicy({ rejectUnauthorized: false, ca: file('root.crt') })
    const t = tlsOf(der('self'))
    expect(p.judge(t)).toBe(true)
    expect(t).toMatchObject({ authorized: false, authorizationError: 'DEPTH_ZERO_SELF_SIGNED_CERT' })
  })

  test('policyLookup: the config\'s entry for the port (and SNI host) wins over the server\'s own', () => {
    const lookup = cc.policyLookup({ requestCert: true, rejectUnauthorized: false }, [
      { port: 443, rejectUnauthorized: true },
      { port: 443, host: 'Admin.Example', rejectUnauthorized: false, ca: file('root.crt') }
    ])
    const req = (localPort, servername) => ({ localPort, tls: { servername } })
    expect(lookup(req(443, null)).rejectUnauthorized).toBe(true)
    expect(lookup(req(443, 'admin.example')).cas).toHaveLength(1)
    expect(lookup(req(8443, null)).rejectUnauthorized).toBe(false)
    expect(cc.policyLookup({ requestCert: false }, [])).toBeNull()
    expect(cc.policyLookup(null, [{ port: 443 }])(req(80, null))).toBeNull()
  })
})

describe('bindings that would let clients through without being asked', () => {
  const sc = (ip, sni = []) => ({ sslCertList: ({ sni: s } = {}) => s ? sni : ip })
  const rec = (port, flags, more = {}) => ({ ip: '0.0.0.0', port, hash: 'ab'.repeat(20), flags, ...more })

  test('every IP binding of the port serves a wildcard prefix; a host prefix its SNI binding first', () => {
    const config = sc([rec(443, 0), rec(443, cc.NEGOTIATE_CLIENT_CERT, { ip: '10.0.0.1' }), rec(8443, cc.NEGOTIATE_CLIENT_CERT)],
      [{ host: 'api.example', port: 443, hash: 'cd'.repeat(20), flags: cc.NEGOTIATE_CLIENT_CERT }])
    expect(cc.bindingsWithoutNegotiation(config, ['https://+:443/', 'https://+:8443/', 'http://+:80/']).map((b) => b.binding)).toEqual(['0.0.0.0:443'])
    expect(cc.bindingsWithoutNegotiation(config, ['https://api.example:443/'])).toEqual([])
    const [b] = cc.bindingsWithoutNegotiation(config, ['https://other.example:443/'])
    expect(cc.negotiateCommand(b)).toBe(`httpsys cert add --port 443 --thumbprint ${'ab'.repeat(20)} --client-cert`)
  })

  test('HTTPSYS_CLIENT_CERTS reaches the worker; anything else is no entries', () => {
    const entries = [{ port: 443, host: 'a.example', rejectUnauthorized: true, ca: ['PEM'] }]
    expect(readWorkerEnv({ HTTPSYS_CLIENT_CERTS: JSON.stringify(entries) }).clientCerts).toEqual(entries)
    expect(readWorkerEnv({ HTTPSYS_CLIENT_CERTS: '{' }).clientCerts).toEqual([])
    expect(readWorkerEnv({ HTTPSYS_CLIENT_CERTS: '[{"port":"443"}]' }).clientCerts).toEqual([])
    expect(readWorkerEnv({}).clientCerts).toEqual([])
  })
})
