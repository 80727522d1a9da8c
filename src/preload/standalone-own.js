'use strict'

// What both standalone routers (standalone-native.js, standalone-native-win.js) share.

const { codes } = require('../errors')

// httpsys-<pid>-<8 hex>.sock: the worker socket of a standalone process's router
const OWN_SOCKET = /^httpsys-(\d+)-[0-9a-f]{8}\.sock$/

// A listen() neither the router nor its paths or prefixes take: the in-process JS hub
// served these until it was removed (issue 25); now it is the server's 'error'.
function unserved (options) {
  const target = options.path !== undefined ? options.path : (options.urls || []).join(' ')
  const what = options.path !== undefined ? 'this socket path' : 'this listen() (one port or URL prefix per server)'
  return new codes.ERR_HTTPSYS_LISTEN_UNSERVED({ target, what })
}

module.exports = { OWN_SOCKET, unserved }
