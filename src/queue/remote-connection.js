'use strict'

// A client connection of a port a standalone server owns, held by the native router
// (docs/wire-protocol.md "Connections of a port a standalone server owns", version 6):
// what the server's handle (src/http/server-handle.js) uses of a client connection
// (the removed JS hub's ClientConnection had it in process), carried out by the router
// as frames. node's server decides what
// becomes of its sockets; here the worker decides, and the router does it.

const P = require('../wire/protocol')

const { T } = P

class RemoteConnection {
  /**
   * @param {object} attachment the hub client's attachment (its writer and schedule())
   * @param {number} id the connection's id (REQUEST's connectionId)
   * @param {object} info CONN_OPEN's addresses (protocol.decodeConnOpen)
   */
  constructor (attachment, id, info) {
    this.attachment = attachment
    this.id = id
    this.remoteAddress = info.remoteAddress
    this.remotePort = info.remotePort
    this.localAddress = info.localAddress
    this.localPort = info.localPort
    this.family = info.family
    this.secure = false
    // the server owns the port: node's rules (KEEP_OPEN after maxRequestsPerSocket)
    this.ownsPort = true
    this.ended = false // the worker ended or destroyed it: nothing more is sent for it
    // the router holds its answered responses for a client that takes none, its next
    // request unread (CONN_HELD): not its keep-alive wait, until that request comes
    this.held = false
  }

  /** Raw access for a 'clientError' listener: what it writes goes to the client as it is. */
  get direct () {
    return {
      write: (buf, cb) => {
        if (this.ended) return false
        this.attachment.connFrame(T.CONN_WRITE, this.id, buf)
        if (typeof cb === 'function') process.nextTick(cb)
        return true
      },
      end: () => this.end(),
      destroy: () => this.destroy()
    }
  }

  /** The connection ends once its responses are out (a 'clientError' listener's end()). */
  end () {
    if (this.ended) return
    this.ended = true
    this.attachment.endConnection(this.id)
  }

  /** Closed at once (closeAllConnections(), socket.destroy()). */
  destroy () {
    if (this.ended) return
    this.ended = true
    this.attachment.connFrame(T.CONN_DESTROY, this.id, null)
  }

  /** Ends after what is in flight on it (the router knows whether it is idle). */
  closeWhenIdle () {
    if (!this.ended) this.attachment.endConnection(this.id)
  }

  /**
   * closeIdleConnections(): ended if the router finds it idle, or between requests
   * when `answered` (every request of it here is in whole and its response ended).
   */
  closeIfIdle (answered) {
    if (!this.ended) this.attachment.connFrame(T.CONN_IDLE, this.id, answered ? ONE : ZERO)
  }

  // (the router times its keep-alive wait and says when it ran out: CONN_TIMEOUT; it
  // says when its answered responses are still held instead: CONN_HELD)
  get waitingForRequest () { return !this.held }

  // (what the router still writes is not known here: an idle destroy() ends it)
  get nothingToWrite () { return false }
}

const ONE = Buffer.from([1])
const ZERO = Buffer.from([0])

module.exports = { RemoteConnection }
