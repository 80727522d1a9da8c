'use strict'

// Certificates made for a test run with the openssl command line (node's crypto makes
// keys but no X.509 certificates): a CA, server certificates for localhost and for
// a.localhost / b.localhost (SNI), and a client certificate the CA signed, plus one it
// did not. Written into a fresh temporary folder; nothing is shipped.

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

function openssl (args, cwd) {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] })
}

/** A self-signed certificate + key for `names` (the first is the CN). */
function selfSigned (dir, base, names, days = 2) {
  const san = names.map((n) => /^[\d.]+$/.test(n) ? `IP:${n}` : `DNS:${n}`).join(',')
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.crt`,
    '-days', String(days), '-subj', `/CN=${names[0]}`, '-addext', `subjectAltName=${san}`], dir)
  return { cert: path.join(dir, `${base}.crt`), key: path.join(dir, `${base}.key`) }
}

/** A certificate for `cn` signed by the CA at ca.{crt,key} in dir. */
function signed (dir, base, cn, ext) {
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${base}.key`, '-out', `${base}.csr`, '-subj', `/CN=${cn}`], dir)
  fs.writeFileSync(path.join(dir, `${base}.ext`), ext)
  openssl(['x509', '-req', '-in', `${base}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', `${base}.crt`, '-days', '2', '-extfile', `${base}.ext`], dir)
  return { cert: path.join(dir, `${base}.crt`), key: path.join(dir, `${base}.key`) }
}

/**
 * @returns {{dir, ca: {cert, key}, localhost, a, b, client, stranger, read(file): string, cleanup()}}
 *   each certificate as { cert, key } file paths
 */
function makeCerts () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-tls-'))
  const ca = selfSigned(dir, 'ca', ['httpsys test CA'])
  const localhost = selfSigned(dir, 'localhost', ['localhost', '127.0.0.1'])
  const a = selfSigned(dir, 'a', ['a.localhost'])
  const b = selfSigned(dir, 'b', ['b.localhost'])
  const client = signed(dir, 'client', 'test client', 'extendedKeyUsage=clientAuth\n')
  const stranger = selfSigned(dir, 'stranger', ['stranger'])
  return {
    dir,
    ca,
    localhost,
    a,
    b,
    client,
    stranger,
    read: (file) => fs.readFileSync(file, 'utf8'),
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true })
  }
}

module.exports = { makeCerts, selfSigned }
