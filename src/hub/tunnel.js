'use strict'

// An upgraded client connection (101 Switching Protocols: WebSocket, and any other
// protocol an app takes over with server.on('upgrade')): after the worker's 101 the
// hub stops parsing HTTP on the connection and relays its bytes both ways, as HTTP.SYS
// does after a response sent with HTTP_SEND_RESPONSE_FLAG_OPAQUE
// (https://learn.microsoft.com/windows/win32/api/http/nf-http-httpsendhttpresponse).
//
// The upgrade request stays in flight at its worker for the connection's whole life,
// so it counts against that worker, ends with it (a worker that dies takes its
// tunnels along: the client connection is reset), and its server's close() waits
// for it as node's waits for an upgraded socket. On the wire (wire-protocol.md
// "Upgrades") the client's bytes are BODY frames within the worker's READ credit and
// its FIN is BODY_END; the worker's bytes are RES_BODY frames within the response
// window, and a RES_BODY without MORE is its FIN. Both directions are flow-controlled
// end to end: client -> worker by the credit (the hub holds at most BODY_HOLD bytes,
// then stops reading the client), worker -> client by WINDOW frames sent only as the
// client socket takes the bytes. The connection closes once both sides have ended,
// or at once when either resets.

const { INITIAL_BODY_WINDOW } = require('../wire/protocol')

// Client bytes held for a worker that has no credit left, before the hub stops reading.
const TUNNEL_HOLD = INITIAL_BODY_WINDOW

class Tunnel {
  /**
   * @param {import('./client-connection').ClientConnection} conn
   * @param {import('./hub-request').HubRequest} req the upgrade request (first on conn)
   */
  constructor (conn, req) {
    this.conn = conn
    this.req = req
    this.held = null // client bytes waiting for credit
    this.heldBytes = 0
    this.clientEnded = false // the client's FIN arrived
    this.endSent = false // BODY_END went to the worker
    this.workerEnded = false // the worker's FIN went out to the client
    this.paused = false
    this.bytesIn = 0
    this.bytesOut = 0
  }

  /** Client bytes: to the worker within its credit, else held (up to TUNNEL_HOLD). */
  fromClient (chunk) {
    const req = this.req
    this.bytesIn += chunk.length
    const w = req.attachment
    if (w === null) return
    if (this.held === null && req.credit >= chunk.length) {
      req.credit -= chunk.length
      w.sendBody(req, chunk)
      return
    }
    if (this.held === null) this.held = []
    this.held.push(chunk)
    this.heldBytes += chunk.length
    this.pump()
    if (this.heldBytes >= TUNNEL_HOLD && !this.paused) {
      this.paused = true
      this.conn.socket.pause()
    }
  }

  /** The worker granted more credit (READ). */
  onRead (n) {
    this.req.credit += n
    this.pump()
  }

  pump () {
    const req = this.req
    const w = req.attachment
    if (w === null) return
    const held = this.held
    if (held !== null) {
      while (req.credit > 0 && held.length > 0) {
        let chunk = held[0]
        if (chunk.length > req.credit) {
          held[0] = chunk.subarray(req.credit)
          chunk = chunk.subarray(0, req.credit)
        } else {
          held.shift()
        }
        req.credit -= chunk.length
        this.heldBytes -= chunk.length
        w.sendBody(req, chunk)
      }
      if (held.length === 0) this.held = null
      if (this.paused && this.heldBytes < TUNNEL_HOLD) {
        this.paused = false
        this.conn.socket.resume()
      }
    }
    if (this.clientEnded && this.held === null && !this.endSent) {
      this.endSent = true
      w.sendBodyEnd(req)
      this.maybeDone()
    }
  }

  /** The client's FIN: the worker's socket reads its end once the held bytes are in. */
  clientEnd () {
    if (this.clientEnded) return
    this.clientEnded = true
    this.pump()
  }

  /** A RES_BODY frame of the tunnel: u8 flags, bytes. */
  fromWorker (b, start, end, more) {
    const n = end - start - 1
    if (n > 0 && !this.workerEnded) {
      this.bytesOut += n
      this.conn.write(this.req, b.subarray(start + 1, end), more ? n : 0)
    }
    if (!more && !this.workerEnded) {
      this.workerEnded = true
      // our FIN after the bytes written (a half-close: the client may still send)
      this.conn.socket.end()
      this.maybeDone()
    }
  }

  /** Both sides have ended: the worker is done with the request; the socket closes. */
  maybeDone () {
    if (!this.endSent || !this.workerEnded) return
    const req = this.req
    req.resDone = true
    req.releaseWorker()
  }
}

module.exports = { Tunnel, TUNNEL_HOLD }
