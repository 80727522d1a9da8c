'use strict'

// An https server's encrypted private key, opened in the worker before HELLO carries it
// (issue 25): the native router's Go standard library opens no encrypted PKCS#8 key
// (PBES2, RFC 8018 6.2, with whichever KDF and cipher OpenSSL wrote), node's crypto opens
// every form the hub's OpenSSL does, so the router gets PKCS#8 PEM text and both routers
// see a key they can read. The key crosses the same socket its passphrase crossed, to
// the same reader, so nothing is less secret. A key its passphrase does not open is
// sent as it was: the router refuses it with the hub's words (ERR_HTTPSYS_TLS_CERT, "the
// private key is encrypted and the passphrase is wrong or missing").

const crypto = require('node:crypto')

// a PEM private key under a passphrase: PKCS#8's own label, or a traditional key's header
const ENCRYPTED_KEY = /-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED/

/**
 * @param {*} key https options' `key`: PEM text or a Buffer, or a list of them and of
 *   node's { pem, passphrase } form
 * @param {*} passphrase https options' `passphrase` (a { pem, passphrase } has its own)
 * @returns {*} key with each encrypted key its passphrase opens as PKCS#8 PEM text
 */
function openKeys (key, passphrase) {
  if (Array.isArray(key)) return key.map((k) => openKeys(k, passphrase))
  if (key !== null && typeof key === 'object' && !(key instanceof Uint8Array) && key.pem !== undefined) {
    const opened = openKey(key.pem, key.passphrase !== undefined ? key.passphrase : passphrase)
    return opened === null ? key : opened
  }
  const opened = openKey(key, passphrase)
  return opened === null ? key : opened
}

function openKey (pem, passphrase) {
  if (typeof passphrase !== 'string' && !(passphrase instanceof Uint8Array)) return null
  const text = typeof pem === 'string' ? pem : pem instanceof Uint8Array ? Buffer.from(pem).toString('latin1') : null
  if (text === null || !ENCRYPTED_KEY.test(text)) return null
  try {
    return crypto.createPrivateKey({ key: pem, passphrase }).export({ type: 'pkcs8', format: 'pem' })
  } catch {
    return null
  }
}

module.exports = { openKeys }
