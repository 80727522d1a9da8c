package attach

import "httpsys/router/internal/wire"

// A standalone server's connections (version 6, docs/wire-protocol.md "Connections of
// a port a standalone server owns"): the worker is told of each one and decides what
// node's server would (its 'connection', 'clientError' and 'timeout' listeners, else
// node's own answer); its verdicts come back as frames the router acts on.

// ConnHub is a Hub that takes a worker's connection frames (CONN_WRITE, CONN_DESTROY,
// CONN_IDLE, and CONN_FIN's answer). A Hub without it ignores them.
type ConnHub interface {
	ConnectionFrame(w *Worker, t wire.Type, connID uint32, payload []byte)
}

// SendConnOpen tells the worker of a connection accepted on a port its server owns.
func (w *Worker) SendConnOpen(connID uint32, o *wire.ConnOpen) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.out.ConnOpen(connID, o)
	w.schedule()
}

// SendConnError hands the worker a request it could not parse (or a head that did not
// come in time: 408): its server's 'clientError' decides the answer.
func (w *Worker) SendConnError(connID uint32, status uint16, reason string, raw []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.out.ConnError(connID, status, reason, raw)
	w.schedule()
}

// SendConnTimeout: the connection's keep-alive wait ran out; its server's 'timeout'
// decides (node's socket timeout), else the worker destroys it.
func (w *Worker) SendConnTimeout(connID uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.out.Empty(wire.TypeConnTimeout, connID)
	w.schedule()
}

// SendConnHeld: the connection's answered responses wait for a client that takes none
// of them, and its next request waits unread behind them: the worker's socket is not
// in its keep-alive wait (node's resOnFinish has not run), so the server's timeout runs.
func (w *Worker) SendConnHeld(connID uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.out.Empty(wire.TypeConnHeld, connID)
	w.schedule()
}

// SendConnKept: a CONN_IDLE answered 1 (closeIdleConnections(), close()) did not end
// the connection, its next request begun. The worker took it to be idle when it asked:
// a REQUEST of it that comes before this frame was read before the router heard of the
// close, its bytes unread by node at close() (served: the race of issue 25's
// preload-fidelity "close() soon after end()"), and the worker drops it; one after it
// was begun when the router heard, as node's parser would have been in it, and is
// served (docs/wire-protocol.md "The idle race").
func (w *Worker) SendConnKept(connID uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.out.Empty(wire.TypeConnKept, connID)
	w.schedule()
}

// Closed reports whether the worker's connection is gone.
func (w *Worker) Closed() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.closed
}

func (w *Worker) connFrame(f wire.Frame) {
	if h, ok := w.hub.(ConnHub); ok {
		h.ConnectionFrame(w, f.Type, f.ID, f.Payload)
	}
}

// HoldFlush: a client connection is about to parse one read's requests for this
// worker; they are written to it together once ReleaseFlush is called, so its app
// gets them in one read, as node's server emits 'request' for every request one read
// of a socket holds before any of its callbacks runs (pipelining on a port a
// standalone server owns). The caller must release before it waits for anything.
func (w *Worker) HoldFlush() {
	w.mu.Lock()
	w.flushHolds++
	w.mu.Unlock()
}

// ReleaseFlush ends a HoldFlush; what was appended meanwhile is written now.
func (w *Worker) ReleaseFlush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flushHolds--
	if w.flushHolds == 0 && w.flushQueued {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}
