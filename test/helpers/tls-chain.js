'use strict'

// A certificate chain as a public CA issues one, made with the openssl command line for
// a test run: a self-signed root, an intermediate CA it signed, and a server certificate
// for `site.test` the intermediate signed; plus the server's key in the forms users hand
// over (PKCS#8, encrypted PKCS#8, OpenSSL's legacy encrypted PEM) and a PFX of the whole
// chain. Written into a fresh temporary folder; nothing is shipped.

const { execFileSync } = require('node:child_process')
const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const PASSPHRASE = 'correct horse battery staple'

/**
 * @returns {{dir, files: object, pem: {root, intermediate, leaf, key, bundle}, der: {root, intermediate},
 *   thumbprint: {root, intermediate, leaf}, PASSPHRASE, cleanup()}}
 */
function makeChain () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'httpsys-chain-'))
  const ssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] })
  fs.writeFileSync(path.join(dir, 'ca.ext'), 'basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n')
  fs.writeFileSync(path.join(dir, 'leaf.ext'), 'basicConstraints=CA:FALSE\nsubjectAltName=DNS:site.test\nextendedKeyUsage=serverAuth\n')
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'root.key', '-out', 'root.crt', '-days', '3',
    '-subj', '/CN=httpsys test root', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'int.key', '-out', 'int.csr', '-subj', '/CN=httpsys test intermediate')
  ssl('x509', '-req', '-in', 'int.csr', '-CA', 'root.crt', '-CAkey', 'root.key', '-CAcreateserial', '-out', 'int.crt', '-days', '3', '-extfile', 'ca.ext')
  ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=site.test')
  ssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'int.crt', '-CAkey', 'int.key', '-CAcreateserial', '-out', 'leaf.crt', '-days', '2', '-extfile', 'leaf.ext')
  ssl('pkcs8', '-topk8', '-in', 'leaf.key', '-out', 'leaf-enc.key', '-passout', `pass:${PASSPHRASE}`)
  ssl('rsa', '-in', 'leaf.key', '-traditional', '-aes256', '-passout', `pass:${PASSPHRASE}`, '-out', 'leaf-legacy-enc.key')
  const read = (name) => fs.readFileSync(path.join(dir, name), 'utf8')
  // the server's certificate first, then the CAs above it, as a CA's "full chain" file
  fs.writeFileSync(path.join(dir, 'fullchain.crt'), read('leaf.crt') + read('int.crt') + read('root.crt'))
  ssl('pkcs12', '-export', '-in', 'leaf.crt', '-inkey', 'leaf.key', '-certfile', 'int.crt', '-out', 'site.pfx', '-passout', `pass:${PASSPHRASE}`)
  const x = (name) => new crypto.X509Certificate(read(name))
  const sha1 = (name) => x(name).fingerprint.replace(/:/g, '').toLowerCase()
  return {
    dir,
    files: {
      leaf: path.join(dir, 'leaf.crt'),
      fullchain: path.join(dir, 'fullchain.crt'),
      key: path.join(dir, 'leaf.key'),
      encryptedKey: path.join(dir, 'leaf-enc.key'),
      legacyEncryptedKey: path.join(dir, 'leaf-legacy-enc.key'),
      pfx: path.join(dir, 'site.pfx')
    },
    pem: { root: read('root.crt'), intermediate: read('int.crt'), leaf: read('leaf.crt'), key: read('leaf.key'), bundle: read('fullchain.crt') },
    der: { root: x('root.crt').raw, intermediate: x('int.crt').raw },
    thumbprint: { root: sha1('root.crt'), intermediate: sha1('int.crt'), leaf: sha1('leaf.crt') },
    PASSPHRASE,
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true })
  }
}

module.exports = { makeChain }
