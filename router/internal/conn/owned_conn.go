package conn

import (
	"strings"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/wire"
)

// A connection of a port a standalone server owns, as node's server holds it (issue
// 25 "Standalone", docs/wire-protocol.md "Connections of a port a standalone server
// owns", version 6). node's server has the socket: it says 'connection' when it
// accepts, hands what it cannot parse to 'clientError' (its listeners answer, end,
// destroy or keep the socket; else node's own answer), times an idle socket out
// through 'timeout', and ends or destroys connections on closeIdleConnections() and
// closeAllConnections(). Here the worker makes those decisions and the router carries
// them out: it tells the worker of each connection (CONN_OPEN), hands it the errors
// and the idle timeout (CONN_ERROR, CONN_TIMEOUT) and waits for its verdict, with no
// timer of its own (the worker is in the same process as the app's listeners).

// ownedConn is a Conn's part for an owned port.
type ownedConn struct {
	ownW    *attach.Worker // the worker told of the connection (CONN_OPEN)
	errWait bool           // a 'clientError' is with the worker: it writes, ends or destroys
	errCode uint16         // ... the error's status and reason, for the bytes that follow
	errText string
	errRaw  []byte // ... its bytes, while no worker attached yet to hear it
	errEnd  bool   // ... and the client's FIN came after them (errFin once it has)
	finWait int    // workers yet to answer CONN_FIN
	// the client's FIN came while a request of it waited for a worker (its server still
	// attaching): CONN_FIN follows the REQUEST (finDispatched)
	finPending bool
	feeding    []byte // the bytes being parsed (node's err.rawPacket)
	// a request of it reached its worker, which knew of it then (CONN_OPEN comes
	// first): its server's close() decides about it (CONN_IDLE), not the port's close
	served bool
	// CONN_HELD went to its worker since its last request (ownHeld)
	heldSent bool
}

// announce tells the port's worker of the connection once (node's 'connection'),
// before any of its requests reaches it. Under the connection's lock.
func (c *Conn) announce() {
	if c.own == nil || c.ownW != nil || c.dead || c.own.q == nil {
		return
	}
	for _, x := range c.own.q.Workers() {
		if w, ok := x.(*attach.Worker); ok && !w.Closed() {
			c.ownW = w
			break
		}
	}
	if c.ownW == nil {
		return // it is told when a worker attaches (Announce)
	}
	c.noteWorker(c.ownW)
	c.ownW.SendConnOpen(c.id, &wire.ConnOpen{
		Family: c.family, RemotePort: c.remotePort, LocalPort: uint16(c.port),
		RemoteAddress: c.remoteAddr, LocalAddress: c.localAddr,
	})
	if c.errWait {
		// what it could not parse before its server attached
		raw := c.errRaw
		c.errRaw = nil
		c.ownW.SendConnError(c.id, c.errCode, c.errText, raw)
		if c.errEnd {
			c.errFin()
		}
	}
}

// Announce: a worker of q attached; the connections of q's port accepted before it
// are told to it now (its first ACK: before any request is dispatched to it).
func (s *Server) Announce(q *queue.Queue) {
	s.each(func(c *Conn) {
		if c.own == nil || c.own.q != q {
			return
		}
		c.mu.Lock()
		c.announce()
		c.mu.Unlock()
	})
}

// ownClientError is node's socketOnError for what could not be parsed (status 408: a
// head that did not come within headersTimeout): the worker's 'clientError' listeners
// decide, else it answers as node does. No worker to ask: node's answer from here.
// Under the connection's lock.
func (c *Conn) ownClientError(status int, reason string, raw []byte) {
	c.announce()
	c.stopReading()
	c.errWait = true
	c.errCode, c.errText = uint16(status), reason
	// the listener's to end: no deadline of ours
	c.phase = phaseTunnel
	c.deadline.Store(0)
	if c.ownW == nil {
		// its server is still attaching: it hears of it then (announce); a port that
		// closes first ends it (closeWhenIdle)
		if c.own.q == nil {
			c.out = append(c.out, nodeClientError(status, reason)...)
			c.kick()
			c.endSocket()
			return
		}
		c.errRaw = append([]byte(nil), raw...)
		return
	}
	c.ownW.SendConnError(c.id, uint16(status), reason, raw)
}

// ownClientErrorAgain: bytes on a connection whose 'clientError' a listener kept
// open. node's parser stays failed, so each read is that error again, with its bytes.
func (c *Conn) ownClientErrorAgain(data []byte) {
	if c.ownW != nil {
		c.ownW.SendConnError(c.id, c.errCode, c.errText, data)
	}
}

// ownTimeout: the clock says the deadline passed on an owned port's connection. A
// head that did not come in time is node's 408 'clientError'; the keep-alive wait is
// the socket's timeout, which the worker's 'timeout' listeners decide. false: destroy.
func (c *Conn) ownTimeout() bool {
	if c.dead {
		return true
	}
	if c.phase == phaseHeaders && c.first == nil {
		c.ownClientError(408, "", nil)
		return true
	}
	if c.phase == phaseIdle {
		c.announce()
		if c.ownW == nil {
			return false
		}
		c.deadline.Store(0)
		c.ownW.SendConnTimeout(c.id)
		return true
	}
	return false
}

// ownFin: the client's FIN with requests unanswered. The workers abort what their app
// has not answered as they read CONN_FIN (node's server reads a FIN that way) and say
// so; what they had answered goes out first. No timer: a live worker answers.
// false: no worker to wait for (the caller's grace applies).
func (c *Conn) ownFin() bool {
	if c.finWait > 0 {
		return true
	}
	if c.finPending {
		return true
	}
	if c.connFinSent {
		return false
	}
	for r := c.first; r != nil; r = r.next {
		if r.link.Worker() == nil && !r.resDone && !r.aborted.Load() && r.q != nil {
			c.finPending = true
			return true
		}
	}
	if len(c.seen) == 0 {
		return false
	}
	c.connFinSent = true
	c.finWait = len(c.seen)
	for _, w := range c.seen {
		w.SendConnFin(c.id)
	}
	return true
}

// errFin: the client's FIN after what the worker's 'clientError' has: node reads the
// listener's answer (written as it ran) before the FIN, so the connection ends once
// the worker answered CONN_FIN, after what it wrote. false: no worker heard the error.
func (c *Conn) errFin() bool {
	if c.ownW == nil {
		// its server is still attaching: after the error, once it has (announce)
		c.errEnd = c.own.q != nil
		return c.errEnd
	}
	if c.finWait == 0 && !c.connFinSent {
		c.connFinSent = true
		c.finWait = 1
		c.ownW.SendConnFin(c.id)
	}
	return true
}

// finDispatched: a request of the connection went to its worker; CONN_FIN follows once
// none waits for one. Under the connection's lock.
func (c *Conn) finDispatched() {
	if !c.finPending {
		return
	}
	c.finPending = false
	if !c.ownFin() && c.first != nil && c.finTimer == nil {
		c.destroyLocked()
	}
}

// finAnswered: w aborted what its app had not answered of the connection.
func (c *Conn) finAnswered(w *attach.Worker) {
	if c.finWait == 0 || c.dead {
		return
	}
	c.finWait--
	if c.finWait > 0 {
		return
	}
	// the answered responses were complete before the answer came (one stream): the
	// first of the line still waiting was dropped, and what is behind it with it
	if first := c.first; first != nil {
		c.first, c.last = nil, nil
		c.pending = 0
		c.abortFrom(first)
	}
	c.endSocket()
}

// betweenRequests: no request being read and none waiting unread (node's parser calls
// such a connection idle while responses still go out).
func (c *Conn) betweenRequests() bool {
	return c.current == nil && !c.leftover && c.tunnel == nil && !c.parser.InHead()
}

// ownHeld: every request in line is answered, the next one is unread behind bytes the
// client does not take (reading paused for the held budget). node's socket would
// still be writing the last response, its 'finish' (resOnFinish, the keep-alive
// timeout) to come, so the server's timeout runs; the worker is told, as it took the
// router to be waiting for the next request (preload-fidelity
// "test-http-pipeline-flood"). Under the connection's lock.
func (c *Conn) ownHeld() {
	if c.own == nil || c.ownW == nil || c.heldSent || c.pauseMask&pauseHeld == 0 {
		return
	}
	c.heldSent = true
	c.ownW.SendConnHeld(c.id)
}

// ConnectionFrame is a worker's CONN_WRITE, CONN_DESTROY, CONN_IDLE or answer to
// CONN_FIN, for a connection of a port its server owns (attach.ConnHub).
func (s *Server) ConnectionFrame(w *attach.Worker, t wire.Type, id uint32, p []byte) {
	sh := &s.shard[id%shards]
	sh.mu.Lock()
	c := sh.m[id]
	sh.mu.Unlock()
	if c == nil || c.own == nil {
		return
	}
	c.mu.Lock()
	if c.dead || !c.sawWorker(w) {
		c.mu.Unlock()
		return
	}
	switch t {
	case wire.TypeConnWrite:
		// a 'clientError' listener's own answer, as it writes it
		if c.errWait && c.phase != phaseEnding {
			c.out = append(c.out, p...)
			c.kick()
		}
	case wire.TypeConnDestroy:
		c.writeWhatIsQueued()
		c.destroyLocked()
	case wire.TypeConnFin:
		c.finAnswered(w)
	case wire.TypeConnIdle:
		// closeIdleConnections(): between requests with every response ended by the
		// app (p[0] 1: the worker's requests of it are all in whole and answered). 0
		// keeps it, however far the router got: node's parser is still in a request
		// whose 'request' listener runs (or whose body it reads) though its response
		// may be out already (test-http-server-close-idle, preload-fidelity "close()
		// soon after end()")
		if p[0] == 1 && c.betweenRequests() {
			c.mu.Unlock()
			c.closeWhenIdle()
			return
		}
		if p[0] == 1 {
			// the worker thinks it idle: a request of it it has not seen yet was
			// dispatched before this frame came, or one is being read. It serves
			// only those that reach it after this answer (wire-protocol.md)
			w.SendConnKept(c.id)
		}
	}
	c.mu.Unlock()
}

func (c *Conn) sawWorker(w *attach.Worker) bool {
	for _, x := range c.seen {
		if x == w {
			return true
		}
	}
	return false
}

// nodeClientError is what node writes for a 'clientError' no listener took (its
// socketOnError), by the error (the worker's twin: src/http/client-error.js).
func nodeClientError(status int, reason string) []byte {
	switch {
	case status == 431:
		return []byte("HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n")
	case status == 408:
		return []byte("HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n")
	case strings.Contains(reason, "chunk extensions too large"):
		return []byte("HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n")
	}
	return []byte("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
}

// writeWhatIsQueued hands the socket what the worker's frames of this read queued for
// it (a batch is written at the read's end), as far as it takes it now: node's
// socket.destroy() after res.write() loses nothing node had written to the kernel
// already, and the JS router, in the app's own process, wrote each frame's bytes as
// it read it.
func (c *Conn) writeWhatIsQueued() {
	if c.dead || c.writing != 0 || len(c.out) == 0 {
		return
	}
	if n, err := c.tryWriteOut(c.out); err == nil && n > 0 {
		c.out = c.out[:copy(c.out, c.out[n:])]
	}
}

// keepForApp: a request withdrawn (its client gone, its body error's wait over:
// bodyerror.go) while it waits for a worker stays queued on a port a standalone server owns, and goes to its
// worker as REQUEST and ABORT (docs/wire-protocol.md "Failure rules"). Under the
// connection's lock.
func (r *Request) keepForApp() bool {
	if r.conn.own == nil || r.link.Worker() != nil || r.abortOnDispatch.Load() {
		return r.abortOnDispatch.Load()
	}
	if !r.q.Holds(r) {
		return false
	}
	r.abortOnDispatch.Store(true)
	return true
}

// dispatchedWithdrawn: r, withdrawn while it waited (keepForApp), reached w: it is
// aborted there at once, and w hears of its connection's close if it came first.
func (r *Request) dispatchedWithdrawn(w *attach.Worker) bool {
	if !r.abortOnDispatch.Load() || r.link.Worker() != w {
		return false
	}
	r.abortOnDispatch.Store(false)
	w.SendAbort(r)
	if r.conn.dead {
		w.SendConnClosed(r.conn.id)
	} else {
		r.conn.noteWorker(w)
	}
	return true
}

// ownQueue is the queue of the standalone server that owns the connection's port, or
// nil (a shared port, whose table routes).
func (c *Conn) ownQueue() *queue.Queue {
	if c.own == nil {
		return nil
	}
	return c.own.q
}

// holdWorker: the requests this read holds reach the worker of the port's server in
// one write (attach.Worker.HoldFlush), on an owned port. Under the connection's lock.
func (c *Conn) holdWorker() *attach.Worker {
	if c.ownW == nil {
		return nil
	}
	c.ownW.HoldFlush()
	return c.ownW
}

// endIfIdle: the port's server closed (node's close() ends the idle connections:
// closeIdleConnections). The worker asks for those it knew of (CONN_IDLE); one
// accepted as the port closed, none of whose requests it had, is ended here, being
// idle too. (The port's close comes on the control channel, CONN_IDLE on the
// worker's: either may come first.)
func (c *Conn) endIfIdle() {
	c.mu.Lock()
	idle := !c.dead && !c.errWait && !c.served && c.idle()
	c.mu.Unlock()
	if idle {
		c.closeWhenIdle()
	}
}
