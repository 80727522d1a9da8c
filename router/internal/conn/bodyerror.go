package conn

import "httpsys/router/internal/attach"

// A request whose body turns out malformed (a bad chunk line, or cut short by the
// client's FIN: node's socketOnEnd hands that to socketOnError too) before its worker
// acknowledged its REQUEST. node's parser emits 'request' for a valid head as it reads
// it, in the same execute() as the body bytes that came with it, so the app's handler
// has run, and a synchronous answer was written to the socket, when the error reaches
// socketOnError. With no 'clientError' listener that writes 400 Bad Request only when
// no response is in flight or the one in flight has not sent its headers, then
// destroys the socket (node's lib/_http_server.js socketOnError;
// test-http-chunked-smuggling.js: 'hello world', no 400, the smuggled /admin never
// read). Across the process boundary the worker's ACK is that moment: the worker ACKs
// a read once its handlers ran, and what they wrote precedes the ACK on the wire. So
// the error waits for the ACK, and is then node's:
//   - the app's answer complete (it may end before the ACK comes): it goes out, then
//     the connection closes, no 400 (node's 'finish' was still to come);
//   - its head out (or queued), the rest still coming: what the app wrote goes out,
//     the connection is destroyed and the request aborted (node's destroy());
//   - no answer: ABORT, and the router's 400 and the close.
// An error after the ACK is answered at once (onParseError), as node's in a later read:
// a response that ended is detached from node's socket then, and the 400 follows it.
//
// A request still waiting for a worker has reached no app. On a shared port it gets
// the 400 at once and never reaches one (README "The router's rules"). On a port a
// standalone server owns it waits only because the server is still attaching (its
// listen() returned, a client connected): node's server would have emitted 'request'
// for it, so its error waits for the dispatch (test-http-chunked-smuggling.js connects
// in the listen callback: its request always comes before the server's worker). On
// such a port the error is then the worker's, as a dispatched request's is there: its
// 'clientError' (ownbodyerror.go); the wait for the ACK below is a shared port's, and
// an owned port's whose request is at another worker than the connection's.
//
// The wait is bounded by the connection's body timeout (EntityBody, the timer the
// request's body ran under, re-armed when the wait begins): a live worker ACKs within a
// round trip, one that dies is Lost (below) at once, so only a worker whose process
// stopped reading holds the connection, and no longer than a stalled body could. A
// short bound (the FIN grace) would turn a busy worker's synchronous answer into a 400
// under load, the race this wait removes.

// bodyErrWaits: r's body error (status) waits for the worker's ACK of r's REQUEST;
// false when the caller answers it now. Under the connection's lock, reading stopped.
func (c *Conn) bodyErrWaits(r *Request, status int) bool {
	if r.tunneled || r.link.Seen() {
		return false
	}
	queued := r.link.Worker() == nil && c.own != nil && r.q != nil && r.q.Holds(r)
	if !queued && r.link.Worker() == nil {
		// (a shared port's: no app saw it, none will: the 400 now)
		return false
	}
	r.bodyErr = status
	c.deadline.Store(c.srv.Clock.After(c.lim.BodyTimeout))
	if !queued {
		r.awaitSeen()
	}
	return true
}

// bodyErrDispatched: r, its body error waiting, reached its worker (Dispatched).
func (r *Request) bodyErrDispatched() {
	if r.bodyErr != 0 && !r.conn.ownBodyErrDispatched(r) {
		r.awaitSeen()
	}
}

// awaitSeen asks for OnSeen, or settles the waiting error when the ACK came already.
func (r *Request) awaitSeen() {
	r.link.TellSeen()
	if r.link.Seen() {
		r.conn.bodyErrSettle(r)
	}
}

// OnSeen: the worker acknowledged r's REQUEST (attach.SeenWaiter); its app's answer
// to the head, if it gave one at once, was handled before this.
func (r *Request) OnSeen(*attach.Worker) {
	c := r.conn
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodyErrSettle(r)
}

// bodyErrSettle answers r's waiting body error as node's socketOnError would now.
// Under the lock.
func (c *Conn) bodyErrSettle(r *Request) {
	status := r.bodyErr
	if status == 0 || c.dead {
		return
	}
	r.bodyErr = 0
	if r.resDone || r.aborted.Load() {
		// (aborted: the line ended before it, the client's FIN or an earlier answer's close)
		return
	}
	if r.headSent {
		// node's socket.destroy() after the handler wrote: what it wrote reaches the
		// client (a worker read's bytes are written at the read's end: now)
		c.writeWhatIsQueued()
		c.destroyLocked()
		return
	}
	r.withdraw()
	r.respondLocal(status, plain, true, "")
}

// bodyErrAnswered: r's response is complete (done) while its body error waits: the app
// answered the head in whole before its ACK came. It goes out, and the connection ends
// after it without a 400 (its head did not say Connection: close; node's does not
// either). Under the lock.
func (r *Request) bodyErrAnswered() {
	if r.bodyErr != 0 {
		r.bodyErr = 0
		r.close = true
	}
}

// bodyErrTimeout: the connection's deadline passed with a body error still waiting
// (the bound above): answered as if no answer had come. Under the lock.
func (c *Conn) bodyErrTimeout() bool {
	r := c.last
	if r == nil || r.bodyErr == 0 || c.dead {
		return false
	}
	c.srv.Log.Debug("a request with a malformed body was not acknowledged by its worker within the body timeout", "remoteAddress", c.remoteAddr)
	c.bodyErrSettle(r)
	return true
}

// bodyErrLost: r's worker went away before it acknowledged r (Lost), with r's body
// error waiting: no app saw it, and none will (it is not requeued): the 400, or the
// close when a response had begun. Under the lock.
func (c *Conn) bodyErrLost(r *Request) bool {
	if r.bodyErr == 0 {
		return false
	}
	c.bodyErrSettle(r)
	return true
}
