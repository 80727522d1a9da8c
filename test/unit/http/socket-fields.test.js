'use strict'

// What code reads off a request's socket to learn about the connection (issue 26):
// tls.TLSSocket's _secureEstablished on an https connection, and node's parser freed
// (socket.parser === null) on the socket an 'upgrade' or 'connect' listener gets.

const { RequestSocket } = require('../../../src/http/socket')
const { UpgradeSocket } = require('../../../src/http/upgrade-socket')

const TLS = { protocol: 'TLSv1.3', cipher: null, alpnProtocol: 'http/1.1', servername: 'a.test', authorized: false, authorizationError: null, peerCertificate: null }

function queueRequest (encrypted) {
  return {
    id: 1,
    method: 'GET',
    url: '/',
    remoteAddress: '127.0.0.1',
    remotePort: 40000,
    remoteFamily: 'IPv4',
    localAddress: '127.0.0.1',
    localPort: 8443,
    encrypted,
    tls: encrypted ? TLS : null,
    connectionId: 7
  }
}

const handle = { server: null, attachment: null, tunnelGone () {} }

test('req.socket of an https request says its handshake is done (_secureEstablished), a plain one does not', () => {
  expect(new RequestSocket(queueRequest(true), handle)._secureEstablished).toBe(true)
  expect(new RequestSocket(queueRequest(false), handle)._secureEstablished).toBeUndefined()
})

test('the socket of \'upgrade\' and \'connect\' has no parser (node frees it before it emits them) and says _secureEstablished over TLS', () => {
  const plain = new UpgradeSocket(handle, queueRequest(false))
  const secure = new UpgradeSocket(handle, queueRequest(true))
  try {
    expect(plain.parser).toBeNull()
    expect(secure.parser).toBeNull()
    expect(secure._secureEstablished).toBe(true)
    expect(plain._secureEstablished).toBeUndefined()
  } finally {
    plain.destroy()
    secure.destroy()
  }
})
