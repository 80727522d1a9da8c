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
// "Upgrades") the client's bytes are the request's body: they take the body's own path
// (HubRequest.onBodyChunk and pumpBody: BODY frames within the worker's READ credit, at
// most BODY_HOLD bytes held before the client socket is paused) without the body size
// limit, and the client's FIN is BODY_END. The worker's bytes are RES_BODY frames
// within the response window (WINDOW as the client socket takes them), and a RES_BODY
// without MORE is its FIN. The connection closes once both sides have ended, or at
// once when either resets.

class Tunnel {
  /**
   * @param {import('./client-connection').ClientConnection} conn
   * @param {import('./hub-request').HubRequest} req the upgrade request (first on conn)
   */
  constructor (conn, req) {
    this.conn = conn
    this.req = req
    this.workerEnded = false // the worker's FIN went out to the client
  }

  /** The client's FIN: BODY_END once the bytes held for the worker have gone to it. */
  clientEnd () {
    this.req.onBodyComplete()
    this.maybeDone()
  }

  /** A RES_BODY frame of the tunnel: u8 flags, bytes. */
  /** n bytes from the worker: one Buffer, a list of them, or null (n = 0). */
  fromWorker (body, n, more) {
    if (this.workerEnded) return
    if (n > 0) this.conn.write(this.req, body, more ? n : 0)
    if (!more) {
      this.workerEnded = true
      // our FIN after the bytes written (a half-close: the client may still send)
      this.conn.socket.end()
      this.maybeDone()
    }
  }

  /** Both sides have ended: the worker is done with the request; the socket closes. */
  maybeDone () {
    const req = this.req
    if (!req.bodyEndSent || !this.workerEnded || req.resDone) return
    req.resDone = true
    req.releaseWorker()
  }
}

module.exports = { Tunnel }
