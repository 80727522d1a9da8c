'use strict'

// A worker that speaks the hub protocol by hand, frame by frame, so a test can send
// the hub exactly the bytes a broken or hostile worker would (docs/wire-protocol.md).

const net = require('node:net')
const P = require('../../src/wire/protocol')
const { T } = P

/** One frame: u32 length | u8 type | u32 id | payload. */
function frame (type, id, payload = Buffer.alloc(0)) {
  const b = Buffer.alloc(9 + payload.length)
  b.writeUInt32LE(5 + payload.length, 0)
  b[4] = type
  b.writeUInt32LE(id >>> 0, 5)
  payload.copy(b, 9)
  return b
}

const u32 = (n) => {
  const b = Buffer.alloc(4)
  b.writeUInt32LE(n >>> 0)
  return b
}

/**
 * RESPONSE payload with every field under the caller's control.
 * @param {object} f status, flags, reason (string), block (string), body (string), and
 *   reasonLength / blockLength to lie about the lengths
 */
function responsePayload ({ status = 200, flags = 0, reason = 'OK', block = 'Content-Length: 2\r\n', body = 'ok', reasonLength, blockLength } = {}) {
  const r = Buffer.from(reason, 'latin1')
  const h = Buffer.from(block, 'latin1')
  const b = Buffer.from(body, 'latin1')
  const p = Buffer.alloc(14 + r.length + h.length + b.length)
  p.writeUInt16LE(status, 0)
  p[2] = flags
  p.writeUInt16LE(reasonLength ?? r.length, 8)
  r.copy(p, 10)
  p.writeUInt32LE(blockLength ?? h.length, 10 + r.length)
  h.copy(p, 14 + r.length)
  b.copy(p, 14 + r.length + h.length)
  return p
}

class EvilWorker {
  /** @param {string} socketPath @param {string} queue */
  constructor (socketPath, queue) {
    this.requests = [] // { id, url }
    this.closed = false
    this.attached = false
    this.socket = net.connect(socketPath)
    this.socket.on('error', () => {})
    this.socket.on('close', () => { this.closed = true })
    const reader = new P.FrameReader((type, id, b, start) => {
      if (type === T.HELLO_OK) {
        this.attached = true
        this.send(T.ACK, 0, u32(0))
      } else if (type === T.REQUEST) {
        this.requests.push({ id, url: P.decodeRequest(id, b, start).url })
      }
    })
    this.socket.on('data', (d) => reader.push(d))
    const hello = Buffer.concat([Buffer.from([P.VERSION]), Buffer.from(JSON.stringify({ queue, pid: process.pid }))])
    this.send(T.HELLO, 0, hello)
  }

  send (type, id, payload) {
    this.socket.write(frame(type, id, payload))
  }

  ack (n) {
    this.send(T.ACK, 0, u32(n))
  }

  close () {
    this.socket.destroy()
  }
}

module.exports = { EvilWorker, frame, u32, responsePayload }
