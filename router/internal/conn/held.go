package conn

import "httpsys/router/internal/attach"

// heldStore: request-body bytes held for lack of the worker's credit are copied into
// one buffer the request keeps, not into a new slice each, and go to the worker from
// there by reference: on 1 MB uploads most chunks wait for credit, and a slice per
// chunk was a fifth of the router's CPU in allocation and GC
// (bench/results/router-profile.md). The store is written from its start again once
// nothing is held in it and the worker's writer wrote the batch that last referenced
// it. It holds what may be held (bodyHold) and one read more.
const heldStore = bodyHold + readSize

// keep returns chunk (a view of the read buffer) copied to be held. Once the worker saw
// the request nothing is kept for a replay, so the bytes can live in the request's store;
// before, a requeue may replay them, and they get a slice of their own.
func (r *Request) keep(chunk []byte) []byte {
	if !r.link.Seen() && !r.tunneled {
		return clone(chunk)
	}
	if len(r.store) > 0 && r.body.Held == nil && (r.storeW == nil || r.storeW.Written() >= r.storeBatch) {
		r.store = r.store[:0]
	}
	if len(r.store)+len(chunk) > cap(r.store) {
		// (what still references the old one keeps it alive until written)
		r.store = make([]byte, 0, max(heldStore, len(chunk)))
		r.storeW, r.storeBatch = nil, 0
	}
	n := len(r.store)
	r.store = append(r.store, chunk...)
	return r.store[n:len(r.store):len(r.store)]
}

// sendHeld sends a held chunk (it may be a view of the store) to w by reference.
func (r *Request) sendHeld(w *attach.Worker, chunk []byte) {
	r.body.Sending(chunk, false)
	if b := w.SendBodyHeld(r, chunk); b != 0 {
		r.storeW, r.storeBatch = w, b
	}
}
