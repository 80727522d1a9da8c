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
	w.schedule()
}
