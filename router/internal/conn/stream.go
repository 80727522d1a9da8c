package conn

import (
	"encoding/binary"
	"net"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/splice"
	"httpsys/router/internal/wire"
)

// A large response body in pieces (attach.Streamer): the worker's read goroutine hands
// the body on as it arrives, and while this connection's socket is idle and takes it,
// each piece goes from the worker's socket to the client's through a pipe, never
// through the router's memory (issue 25 "Bodies"). The first piece the socket does not
// take whole is copied into the connection's buffer, and the rest of the frame with it,
// as any body: a client that stops reading costs the worker's goroutine one
// non-blocking splice, never a wait.

// OnResponseStart: a RESPONSE whose body arrives in pieces (attach.Streamer).
func (r *Request) OnResponseStart(w *attach.Worker, p []byte, rest int) bool {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	status := binary.LittleEndian.Uint16(p)
	// (a 101, an OPAQUE, a late or repeated RESPONSE: OnResponse's, whole)
	if r.link.Worker() != w || r.headSent || p[2]&wire.ResOpaque != 0 || status == 101 {
		return false
	}
	c.batchW = w
	defer c.endBatch()
	r.onResponse(w, p, rest)
	return true
}

// OnResBodyStart: a RES_BODY whose body arrives in pieces (attach.Streamer).
func (r *Request) OnResBodyStart(w *attach.Worker, flags byte, body []byte, rest int) bool {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.link.Worker() != w || !r.headSent || r.resDone || r.tunneled {
		return false
	}
	c.batchW = w
	defer c.endBatch()
	r.pieceMore = flags&wire.ResMore != 0
	r.onResBody(w, flags, body, false)
	return true
}

// CanSplice: the next piece may go straight to the socket (attach.Streamer).
func (r *Request) CanSplice(w *attach.Worker) bool {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	return r.spliceable(w) && len(c.out) == 0
}

// spliceable: r is the worker's, its body goes to the client as it is (no HEAD, no
// copy for the cache), it is first in line on a plain TCP connection nothing else
// writes to now. Under the lock.
func (r *Request) spliceable(w *attach.Worker) bool {
	c := r.conn
	if r.link.Worker() != w || !r.headSent || r.resDone || r.noBody || r.tunneled || r.capture != nil {
		return false
	}
	if _, ok := c.nc.(*net.TCPConn); !ok || c.sec != nil {
		return false
	}
	return r == c.first && c.writing == 0 && !c.dead && !c.batched
}

// SpliceBody moves what p holds into the socket as far as it takes it now
// (attach.Streamer); what is left stays in p for OnBodyPiece.
func (r *Request) SpliceBody(w *attach.Worker, p *splice.Pipe, last bool) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	if !r.spliceable(w) {
		return
	}
	if len(c.out) > 0 {
		n, err := c.tryWriteOut(c.out)
		if err != nil {
			c.destroyLocked()
			return
		}
		if n < len(c.out) {
			c.out = c.out[:copy(c.out, c.out[n:])]
			return
		}
		c.out = c.out[:0]
		c.sent()
	}
	sc, err := c.nc.(*net.TCPConn).SyscallConn()
	if err != nil {
		return
	}
	n, err := p.Drain(sc, p.Buffered)
	if err != nil {
		c.destroyLocked()
		return
	}
	if n == 0 {
		return
	}
	if r.pieceMore {
		w.SendWindow(r, n)
	}
	c.wrote(r, n, 0)
	if last && p.Buffered == 0 && !r.pieceMore {
		r.finish()
		c.done(r)
	}
}

// OnBodyPiece: the next bytes of a body arriving in pieces (attach.Streamer).
func (r *Request) OnBodyPiece(w *attach.Worker, body []byte, last bool) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	c.batchW = w
	defer c.endBatch()
	if r.link.Worker() != w || !r.headSent || r.resDone {
		return
	}
	var flags byte
	if r.pieceMore {
		flags = wire.ResMore
	}
	r.onResBody(w, flags, body, last)
}

var _ attach.Streamer = (*Request)(nil)
