package conn

// An upgraded client connection (101 Switching Protocols: WebSocket, and any other
// protocol an app takes over with server.on('upgrade')), as the JS router did: after
// the worker's 101 the router parses nothing more on the connection and relays its
// bytes both ways, as HTTP.SYS does after a response sent with
// HTTP_SEND_RESPONSE_FLAG_OPAQUE.
//
// The upgrade request stays in flight at its worker for the connection's whole life
// (docs/wire-protocol.md "Upgrades"): it counts against that worker, a worker that
// leaves takes the connection along (Request.Lost closes it), and a DETACH does not end
// it. The client's bytes take the request body's own path (onBodyChunk and pumpBody:
// BODY within the worker's READ credit, at most bodyHold held before the connection
// stops reading), without the body size limit; the client's FIN is BODY_END. The
// worker's bytes are RES_BODY frames within the response window (WINDOW as the client
// socket takes them), and one without MORE is its FIN. The connection closes once both
// sides have ended, or at once when either resets.

import (
	"encoding/binary"

	"httpsys/router/internal/wire"
)

// maxUpgradeHead: the most of what was read after an upgrade's head that goes with its
// REQUEST as the app's `head` (node hands over the rest of one read); more comes
// through the tunnel after the 101.
const maxUpgradeHead = wire.InitialBodyWindow

// upgradeHead appends REQUEST's head section (flag 128: u32 length, bytes) to r's
// payload: the bytes read after its head, which stay the connection's until the answer
// (a 101 skips them, any other answer parses them as HTTP). Under the lock, with
// nothing after r parsed (pauseUpgrade).
func (c *Conn) upgradeHead(r *Request) {
	rest := c.rest
	if r != c.last || len(rest) == 0 {
		return
	}
	if len(rest) > maxUpgradeHead {
		rest = rest[:maxUpgradeHead]
	}
	r.headBytes = len(rest)
	r.payload[0] |= wire.ReqHead
	r.payload = binary.LittleEndian.AppendUint32(r.payload, uint32(len(rest)))
	r.payload = append(r.payload, rest...)
}

// startTunnel: the worker answered r 101 with OPAQUE. The 101 head goes out as the
// worker wrote it (no Connection header of ours), with any bytes the frame carried;
// from now on the connection carries the worker's protocol. The reader, paused since
// r's head (pauseUpgrade), wakes and hands on what it holds, but what the worker had
// as `head`.
func (c *Conn) startTunnel(r *Request, p []byte, bodyStart int) {
	r.headSent = true
	r.tunneled = true
	// the client's bytes are the request's body from now on
	r.bodyDone = false
	r.body.Credit = wire.InitialBodyWindow
	c.tunnel = r
	c.phase = phaseTunnel
	c.deadline.Store(0)
	if c.finTimer != nil {
		c.finTimer.Stop()
		c.finTimer = nil
	}
	c.skip = r.headBytes
	c.stopped = true
	c.pauseMask = 0
	body := p[bodyStart:]
	dst := c.dst(r)
	n := len(*dst)
	*dst = appendFromFrame(*dst, p, bodyStart, addNone)
	*dst = append(*dst, body...)
	c.wrote(r, len(*dst)-n, len(body))
	if c.readEnded {
		c.tunnelClientEnd()
	} else {
		c.rcond.Broadcast()
	}
}

// skipHead drops from the bytes the reader held at the switch those its worker had
// as the upgrade's `head`: they are not delivered twice.
func (c *Conn) skipHead(data []byte) []byte {
	k := min(c.skip, len(data))
	c.skip = 0
	return data[k:]
}

// tunnelData: client bytes of an upgraded connection, for the worker. Under the lock;
// it returns (and the connection reads on) only once the worker's credit lets it.
func (c *Conn) tunnelData(data []byte) bool {
	r := c.tunnel
	if len(data) > 0 && !r.bodyDone {
		r.onBodyChunk(data)
	}
	// a tunnel's bytes are not parsed: holding them back is not reading the socket
	for c.pauseMask&pauseBody != 0 && !c.dead {
		c.rcond.Wait()
	}
	return !c.dead
}

// tunnelResume: the worker took what was held; the client is read again.
func (c *Conn) tunnelResume() {
	if c.pauseMask&pauseBody != 0 {
		c.pauseMask &^= pauseBody
		c.rcond.Broadcast()
	}
}

// tunnelClientEnd: the client's FIN is BODY_END, once the bytes held for the worker
// have gone to it.
func (c *Conn) tunnelClientEnd() {
	c.tunnel.onBodyComplete()
	c.tunnelMaybeDone()
}

// tunnelFromWorker: a RES_BODY of the tunnel. Without MORE it is the worker's FIN: ours
// follows the bytes written (a half-close: the client may still send).
func (c *Conn) tunnelFromWorker(r *Request, flags byte, body []byte) {
	if r.workerEnded {
		return
	}
	more := flags&wire.ResMore != 0
	if len(body) > 0 {
		ack := 0
		if more {
			ack = len(body)
		}
		dst := c.dst(r)
		*dst = append(*dst, body...)
		c.wrote(r, len(body), ack)
	}
	if !more {
		r.workerEnded = true
		c.ending = true
		c.wakeWriter()
		c.tunnelMaybeDone()
	}
}

// tunnelMaybeDone: once both sides have ended, the request leaves its worker and the
// socket closes (at once when our FIN is out already; else the writer closes it after
// the FIN, the client's having come).
func (c *Conn) tunnelMaybeDone() {
	r := c.tunnel
	if !r.body.EndSent || !r.workerEnded || r.resDone {
		return
	}
	r.resDone = true
	if w := r.link.Worker(); w != nil {
		w.Release(r, true)
	}
	if c.finSent {
		c.destroyLocked()
	}
}
