package attach

import "httpsys/router/internal/wire"

// SendConnFin tells the worker that a client connection it has requests of sent its
// FIN, on a port a standalone server owns (docs/wire-protocol.md CONN_FIN): its app
// aborts what it has not answered, as node does when it reads a FIN.
func (w *Worker) SendConnFin(connID uint32) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.out.Empty(wire.TypeConnFin, connID)
	// written at once, not after the yields that let a burst of REQUEST frames join
	// (flushLoop): node reads a client's FIN as its kernel delivers it, before what its
	// other sockets receive later, and the worker hears of this one only through this
	// connection: each yield lets a later event of another socket overtake it (a
	// proxy's upstream answer, test-http-writable-true-after-close.js). A FIN with
	// requests unanswered is a client giving up: no burst is broken where it counts.
	w.finQueued = true
	w.schedule()
}
