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

/**
 * The server's settings for the connections of its port (src/http/server.js
 * routerSettings), as they are at listen() (router/internal/conn/owned.go).
 */
function ownSettings (st) {
  return {
    keepAliveTimeout: Number(st.keepAliveTimeout) || 0,
    headersTimeout: Number(st.headersTimeout) || 0,
    maxHeaderSize: Number(st.maxHeaderSize) || 0,
    finGrace: Number(st.finGrace) || 0,
    allowHalfOpen: st.allowHalfOpen === true,
    insecureHTTPParser: st.insecureHTTPParser === true,
    requireHost: st.serverRequiresHost !== false
  }
}

/**
 * Sends `msg` with no socket on the router's IPC channel (standalone-native.js
 * ensureRouter's `r`); the router's "listened" answer settles it.
 * @returns {Promise<object>}
 */
function ask (r, msg) {
  return new Promise((resolve, reject) => {
    msg.seq = ++r.seq
    r.pending.set(msg.seq, { resolve, reject })
    try {
      r.child.send(msg, (err) => {
        if (err) {
          r.pending.delete(msg.seq)
          reject(err)
        }
      })
    } catch (err) {
      r.pending.delete(msg.seq)
      reject(err)
    }
  })
}

module.exports = { OWN_SOCKET, unserved, ownSettings, ask }
