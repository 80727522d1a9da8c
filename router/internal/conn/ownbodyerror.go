package conn

// A malformed body on a port a standalone server owns is node's socketOnError, as a
// head it cannot parse is (ownClientError): the worker's 'clientError' listeners get it
// with the connection's socket and may write their own answer, end, destroy or keep
// it; only without one does the worker write node's 400 (and not when the response
// in flight has sent its head), then destroy the socket (lib/_http_server.js
// socketOnError). node emits 'request' for the head before the body's error reaches
// socketOnError (bodyerror.go), so CONN_ERROR goes after the request's REQUEST, on
// the same worker connection: the worker runs the request's handlers first, and
// knows then what they answered. A request still waiting for its worker (its server
// attaching) keeps bodyerror.go's wait until it is dispatched, and its error follows
// its REQUEST then (ownBodyErrDispatched), in the same write as a rule: as node's
// execute() did, the worker runs the handlers and then 'clientError' in one read, so
// that a response its handler ended is still the one in flight (no 400). A request
// at another worker than the one told of the connection (CONN_OPEN), or an error
// whose wait ran out (the worker stopped reading) or whose worker is gone, keeps the
// router's answer.

// ownBodyError: r's body is malformed (status, reason); true when the worker that
// has r was handed it. Under the connection's lock, reading stopped.
func (c *Conn) ownBodyError(r *Request, status int, reason string) bool {
	if c.own == nil || r.tunneled || r.aborted.Load() {
		return false
	}
	w := r.link.Worker()
	if w == nil && !r.resDone {
		// (its server still attaching: bodyErrWaits; the error's words kept for then)
		c.errText = reason
		c.errRaw = append(c.errRaw[:0], c.feeding...)
		return false
	}
	if c.ownW == nil || (w != nil && w != c.ownW) {
		return false
	}
	c.ownClientError(status, reason, c.feeding)
	return true
}

// ownBodyErrDispatched: r, its body error waiting (bodyerror.go), went to the worker
// told of the connection: the error is that worker's now, after r's REQUEST. false:
// bodyerror.go's wait goes on. Under the lock.
func (c *Conn) ownBodyErrDispatched(r *Request) bool {
	if r.bodyErr == 0 || c.dead || c.own == nil || c.ownW == nil || r.link.Worker() != c.ownW || r.aborted.Load() {
		return false
	}
	status := r.bodyErr
	r.bodyErr = 0
	raw := c.errRaw
	c.errRaw = nil
	c.ownClientError(status, c.errText, raw)
	return true
}
