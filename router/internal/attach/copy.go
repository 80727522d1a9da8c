package attach

// SendBodyCopy appends a BODY frame with chunk copied into the worker's write buffer:
// chunk may change once it returns (a client connection's read buffer).
func (w *Worker) SendBodyCopy(r Request, chunk []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.holds(r) {
		return
	}
	_ = w.out.BodyCopy(r.Link().id, chunk)
	w.schedule()
}
