'use strict'

// HELLO's tls carries an https server's encrypted key opened (src/wire/tls-key.js, issue
// 25): the native router opens no encrypted PKCS#8 key, node's crypto opens every form.

const crypto = require('node:crypto')
const P = require('../../../src/wire/protocol')

const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
const plain = privateKey.export({ type: 'pkcs8', format: 'pem' })
const pkcs8 = privateKey.export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' })
const sec1 = privateKey.export({ type: 'sec1', format: 'pem', cipher: 'aes-128-cbc', passphrase: 'secret' })

test('an encrypted key its passphrase opens goes as PKCS#8 PEM text, whatever its form', () => {
  expect(P.encodeTlsOptions({ key: pkcs8, passphrase: 'secret' }).key).toBe(plain)
  expect(P.encodeTlsOptions({ key: Buffer.from(sec1), passphrase: 'secret' }).key).toBe(plain)
  // node's { pem, passphrase }: its own passphrase first, else the options'
  expect(P.encodeTlsOptions({ key: [{ pem: pkcs8, passphrase: 'secret' }, sec1], passphrase: 'secret' }).key).toEqual([plain, plain])
  // the passphrase still goes along (a pfx may need it)
  expect(P.encodeTlsOptions({ key: pkcs8, passphrase: 'secret' }).passphrase).toBe('secret')
})

test('a key that does not open, or is not encrypted, goes as it was: the router names the problem', () => {
  expect(P.encodeTlsOptions({ key: pkcs8, passphrase: 'wrong' }).key).toBe(pkcs8)
  expect(P.encodeTlsOptions({ key: pkcs8 }).key).toBe(pkcs8)
  expect(P.encodeTlsOptions({ key: [{ pem: pkcs8, passphrase: 'wrong' }], passphrase: 'secret' }).key).toEqual([{ pem: pkcs8, passphrase: 'wrong' }])
  expect(P.encodeTlsOptions({ key: plain, passphrase: 'secret' }).key).toBe(plain)
})
