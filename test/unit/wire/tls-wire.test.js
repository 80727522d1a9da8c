'use strict'

// The TLS parts of the hub <-> worker wire (docs/wire-protocol.md): the session in
// REQUEST, and an https server's key material in HELLO.

const P = require('../../../src/wire/protocol')

function requestFrame (tls, flags) {
  const w = new P.FrameWriter()
  const head = { method: 'GET', url: '/x', versionMajor: 2, versionMinor: 0, rawHeaders: ['host', 'a.example'] }
  const conn = { remoteAddress: '127.0.0.1', remotePort: 5000, localAddress: '127.0.0.1', localPort: 443, family: 4, id: 7, tls }
  w.request(9, head, conn, flags)
  const b = Buffer.concat(w.take())
  return P.decodeRequest(9, b, P.HEADER_SIZE)
}

test('a REQUEST with the TLS flag carries the connection\'s session', () => {
  const cert = Buffer.from([0x30, 0x82, 1, 2, 3])
  const info = {
    protocol: 'TLSv1.3',
    cipher: { name: 'TLS_AES_128_GCM_SHA256', standardName: 'TLS_AES_128_GCM_SHA256', version: 'TLSv1.3' },
    alpnProtocol: 'h2',
    servername: 'a.example',
    authorized: true,
    authorizationError: null,
    peerCertificate: cert
  }
  const req = requestFrame(P.encodeTlsInfo(info), P.REQ_ENCRYPTED)
  expect(req.encrypted).toBe(true)
  expect(req.tls).toEqual(info)
  expect(req.rawHeaders).toEqual(['host', 'a.example'])
  expect(req.httpVersionMajor).toBe(2)
})

test('no client certificate, no ALPN, no SNI: null and false as the contract says', () => {
  const req = requestFrame(P.encodeTlsInfo({ protocol: 'TLSv1.2', cipher: null, alpnProtocol: false, servername: null, authorized: false, authorizationError: 'UNABLE_TO_GET_ISSUER_CERT', peerCertificate: null }), P.REQ_ENCRYPTED)
  expect(req.tls).toEqual({ protocol: 'TLSv1.2', cipher: null, alpnProtocol: false, servername: null, authorized: false, authorizationError: 'UNABLE_TO_GET_ISSUER_CERT', peerCertificate: null })
  expect(requestFrame(null, 0)).toMatchObject({ encrypted: false, tls: null })
})

test('requests of equal sessions share one decoded session; a different session is decoded anew', () => {
  const base = { protocol: 'TLSv1.3', cipher: { name: 'A', standardName: 'A', version: 'TLSv1.3' }, alpnProtocol: 'http/1.1', servername: 'a.example', authorized: false, authorizationError: null, peerCertificate: null }
  const first = requestFrame(P.encodeTlsInfo(base), P.REQ_ENCRYPTED).tls
  const again = requestFrame(P.encodeTlsInfo(base), P.REQ_ENCRYPTED).tls
  expect(again).toBe(first)
  expect(Object.isFrozen(first) && Object.isFrozen(first.cipher)).toBe(true)
  // one byte apart (another server name of the same length, another certificate byte)
  const other = requestFrame(P.encodeTlsInfo({ ...base, servername: 'b.example' }), P.REQ_ENCRYPTED).tls
  expect(other.servername).toBe('b.example')
  const withCert = (byte) => requestFrame(P.encodeTlsInfo({ ...base, authorized: true, peerCertificate: Buffer.from([0x30, byte]) }), P.REQ_ENCRYPTED).tls
  expect(withCert(1).peerCertificate).toEqual(Buffer.from([0x30, 1]))
  expect(withCert(2).peerCertificate).toEqual(Buffer.from([0x30, 2]))
  expect(requestFrame(P.encodeTlsInfo(base), P.REQ_ENCRYPTED).tls).toEqual(base)
})

test('HELLO\'s tls: Buffers and strings survive JSON, other https options are not sent', () => {
  const key = Buffer.from('-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n')
  const encoded = P.encodeTlsOptions({ key, cert: 'PEM TEXT', ca: [Buffer.from([1, 2]), 'x'], passphrase: 'p', requestCert: true, SNICallback: () => {}, ciphers: 'x' })
  const back = P.decodeTlsOptions(JSON.parse(JSON.stringify(encoded)))
  expect(back).toEqual({ key, cert: 'PEM TEXT', ca: [Buffer.from([1, 2]), 'x'], passphrase: 'p', requestCert: true })
  expect(P.encodeTlsOptions({ requestCert: true })).toBe(null)
  expect(P.encodeTlsOptions(undefined)).toBe(null)
})
