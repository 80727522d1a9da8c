package attach

import "httpsys/router/internal/wire"

// SendCredit grants n bytes of r's response window now, in one WINDOW frame: the
// window of a request sent with wire.ReqGrantedWindow (an h2 stream) is the router's
// to grant, and each grant is already a step (docs/wire-protocol.md "Flow control":
// granted window), unlike SendWindow's returns.
func (w *Worker) SendCredit(r Request, n int) {
	if n <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.holds(r) {
		return
	}
	w.out.U32(wire.TypeWindow, r.Link().id, uint32(n))
	w.schedule()
}
