'use strict'

// Where a ServerResponse made outside a server writes: node's ServerResponse can be
// constructed directly and given a socket (res.assignSocket(socket)), and then writes
// HTTP/1.1 to it. light-my-request (fastify.inject(), and so every fastify app's test
// suite) and other test tools do exactly that, with the preload's classes too. This
// object stands in for the ServerHandle (server-handle.js) such a response has not got:
// the same respond()/sendBody() calls, turned into bytes on the socket. The body arrives
// framed already (response-flow.js writes chunked framing itself).

const { STATUS_CODES } = require('node:http')
const { RESPONSE_MORE } = require('../wire/contract')

class SocketSink {
  /**
   * @param {import('node:stream').Duplex} socket any writable stream
   * @param {import('./response').ServerResponse} res
   */
  constructor (socket, res) {
    this.socket = socket
    this.res = res
    this.waiting = false
  }

  respond (req, status, message, rawHeaders, body, flags) {
    const ok = this.respondNow(status, message, rawHeaders, body)
    if ((flags & RESPONSE_MORE) === 0) this.ended()
    return ok
  }

  respondNow (status, message, rawHeaders, body) {
    let head = `HTTP/1.1 ${status} ${message || STATUS_CODES[status] || 'unknown'}\r\n`
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += rawHeaders[i] + ': ' + rawHeaders[i + 1] + '\r\n'
    head += '\r\n'
    if (body === null || (typeof body === 'string' && body.length === 0)) return this.write(head, 'latin1')
    if (typeof body === 'string') return this.write(head + body, 'utf8')
    this.socket.cork()
    this.write(head, 'latin1')
    const ok = this.write(body)
    this.socket.uncork()
    return ok
  }

  sendBody (req, body, flags) {
    const ok = body === null ? true : this.write(body, typeof body === 'string' ? 'utf8' : undefined)
    if ((flags & RESPONSE_MORE) === 0) this.ended()
    return ok
  }

  // node's end() writes one empty chunk last, whose callback finishes the response
  ended () {
    this.write('', 'latin1')
  }

  writeContinue (req) {
    this.write('HTTP/1.1 100 Continue\r\n\r\n', 'latin1')
  }

  writeInformational (req, status, reason, rawHeaders) {
    let head = `HTTP/1.1 ${status} ${reason}\r\n`
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += rawHeaders[i] + ': ' + rawHeaders[i + 1] + '\r\n'
    this.write(head + '\r\n', 'latin1')
  }

  cancel (req) {
    if (typeof this.socket.destroy === 'function') this.socket.destroy()
  }

  finished (req) {}

  write (data, encoding) {
    if (this.socket.destroyed || this.socket.writableEnded) return true
    const ok = this.socket.write(data, encoding)
    if (!ok && !this.waiting) {
      this.waiting = true
      this.socket.once('drain', () => {
        this.waiting = false
        this.res._onDrain()
      })
    }
    return ok
  }
}

module.exports = { SocketSink }
