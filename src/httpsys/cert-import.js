'use strict'

// A certificate and its private key into LocalMachine\My, for HTTP.SYS to serve, from
// what users give: a .pfx with its passphrase, or a PEM certificate (one, or a chain:
// the certificate and the CAs above it) with its PEM private key (PKCS#8, PKCS#1 or
// SEC1, encrypted or not). One path for `httpsys cert add`, `httpsys start --setup` and
// `httpsys service install` (a config's tls entries: files or PEM text) and a worker
// binding its app's own certificate (app-cert.js):
//
// - a PEM key is opened here, with node's crypto and the passphrase, and reaches the
//   addon as PKCS#8 in memory (never written, never logged); it goes into a CNG key
//   storage provider there. A key that does not open or is another certificate's is
//   refused before anything is imported;
// - a PFX is imported by the addon, with `cng: true`: its key goes into a CNG key storage
//   provider whatever the file names (PKCS12_ALWAYS_CNG_KSP). Left to a CryptoAPI
//   provider, an RSA key cannot sign with RSA-PSS, which Schannel needs for TLS 1.3
//   (Windows Server 2022, Windows 11);
// - the intermediate CA certificates of the chain go into LocalMachine\CA, where Schannel
//   finds them to send with the certificate: clients that do not fetch a missing
//   intermediate themselves (curl, node) fail with "unable to verify the first
//   certificate" without them. A self-signed root is never added: trusting one is the
//   machine owner's decision, not an import's.

const crypto = require('node:crypto')
const { codes } = require('../errors')
const { subjectOf } = require('../tls-material')

const CA_STORE = 'CA'
const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g
const PEM_KEY = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/
// a PEM private key under a passphrase: PKCS#8's own label, or a traditional key's header
const ENCRYPTED_KEY = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED/

/**
 * @param {object} sc the service configuration (service-config.js)
 * @param {object} material { pfx: Buffer, passphrase? } or { cert, key, passphrase? } (cert
 *   and key: PEM text or Buffers)
 * @param {object} [options]
 * @param {string} [options.store='My']
 * @param {string} [options.file] what messages call the certificate (a file name, a label)
 * @param {string} [options.keyFile] what messages call the key (default: file)
 * @param {object} [options.context] { what, command } for ERR_HTTPSYS_NOT_ELEVATED
 * @returns {{thumbprint: string, keyProvider: {name: string, cng: boolean}|null,
 *   intermediates: {thumbprint: string, subject: string, added: boolean}[]}}
 * @throws ERR_HTTPSYS_CERT_FILE for the material; the service configuration's errors
 */
function importCertificate (sc, material, { store = 'My', file, keyFile = file, context = {} } = {}) {
  let imported
  let chain
  if (material.pfx !== undefined) {
    const passphrase = typeof material.passphrase === 'string' ? material.passphrase : ''
    imported = sc.certImport({ pfx: material.pfx, passphrase, cng: true }, { store, file }, context)
    chain = imported.chain.map((der) => {
      try {
        return new crypto.X509Certificate(der)
      } catch {
        return null // Windows read it; nothing here can use what node cannot
      }
    }).filter(Boolean)
  } else {
    const pair = pemPair(material, { file, keyFile })
    imported = sc.certImport({ certPem: pair.leaf.toString(), keyPem: pair.keyPem }, { store, file }, context)
    chain = pair.chain
  }
  const intermediates = []
  for (const c of chain) {
    if (!c.ca || c.checkIssued(c)) continue
    const thumbprint = c.fingerprint.replace(/:/g, '').toLowerCase()
    const subject = subjectOf(c)
    const there = sc.certFind(thumbprint, { store: CA_STORE }) !== null
    if (!there) {
      sc.certAdd(c.raw, { store: CA_STORE }, {
        what: `Adding the intermediate CA certificate ${subject} to LocalMachine\\${CA_STORE}`,
        command: context.command
      })
    }
    intermediates.push({ thumbprint, subject, added: !there })
  }
  return { thumbprint: imported.thumbprint, keyProvider: imported.keyProvider, intermediates }
}

/**
 * The certificate the key belongs to, the other certificates of the text, and the key
 * as PKCS#8 PEM (decrypted).
 * @throws ERR_HTTPSYS_CERT_FILE
 */
function pemPair ({ cert, key, passphrase }, { file, keyFile }) {
  const keyText = Buffer.isBuffer(key) ? key.toString('latin1') : String(key)
  const certText = Buffer.isBuffer(cert) ? cert.toString('latin1') : String(cert)
  let privateKey
  try {
    privateKey = crypto.createPrivateKey({ key: keyText, format: 'pem', passphrase: typeof passphrase === 'string' ? passphrase : undefined })
  } catch (err) {
    let reason
    if (!PEM_KEY.test(keyText)) reason = 'it holds no PEM private key (-----BEGIN PRIVATE KEY-----)'
    // about one wrong passphrase in 256 decrypts to bytes whose padding checks, and the
    // decoder refuses them: whatever OpenSSL says, an encrypted key is a passphrase matter
    else if (ENCRYPTED_KEY.test(keyText)) reason = `the private key is encrypted and the passphrase is ${typeof passphrase === 'string' && passphrase !== '' ? 'wrong' : 'missing (--passphrase)'}`
    else reason = `its private key cannot be read (${err.message})`
    throw new codes.ERR_HTTPSYS_CERT_FILE({ file: keyFile, reason })
  }
  const certs = []
  for (const pem of certText.match(PEM_CERT) || []) {
    try {
      certs.push(new crypto.X509Certificate(pem))
    } catch (err) {
      throw new codes.ERR_HTTPSYS_CERT_FILE({ file, reason: `a PEM certificate in it cannot be read (${err.message})` })
    }
  }
  if (certs.length === 0) throw new codes.ERR_HTTPSYS_CERT_FILE({ file, reason: 'it holds no PEM certificate (-----BEGIN CERTIFICATE-----)' })
  const leaf = certs.find((c) => c.checkPrivateKey(privateKey))
  if (leaf === undefined) {
    throw new codes.ERR_HTTPSYS_CERT_FILE({ file: file === keyFile ? file : `${file} with ${keyFile}`, reason: 'the private key does not belong to the certificate' })
  }
  return { leaf, chain: certs.filter((c) => c !== leaf), keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) }
}

module.exports = { importCertificate, CA_STORE }
