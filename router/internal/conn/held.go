package conn

// heldStore: request-body bytes held for lack of the worker's credit are copied into
// one buffer the request keeps (and its connection hands to its next request), not into
// a new slice each: on 1 MB uploads most chunks wait for credit, and a slice per chunk
// was a fifth of the router's CPU in allocation and GC (bench/results/router-profile.md).
// It holds what may be held (bodyHold) and one read more.
const heldStore = bodyHold + readSize

// keep returns chunk (a view of the read buffer) copied to be held. Once the worker saw
// the request nothing is kept for a replay, so the bytes can live in the request's store
// until they are sent (pumpBody copies them into the worker's write buffer); before, a
// requeue may replay them, and they get a slice of their own.
func (r *Request) keep(chunk []byte) []byte {
	if !r.link.Seen() && !r.tunneled {
		return clone(chunk)
	}
	if r.store == nil {
		r.store, r.conn.spareStore = r.conn.spareStore, nil
	}
	if len(r.store)+len(chunk) > cap(r.store) {
		// (held views of the old one keep it alive until they are sent)
		r.store = make([]byte, 0, max(heldStore, len(chunk)))
	}
	n := len(r.store)
	r.store = append(r.store, chunk...)
	return r.store[n:len(r.store):len(r.store)]
}

// heldSent: nothing is held any more; the store is empty again, and once the body is
// complete it goes to the connection for the next request's.
func (r *Request) heldSent() {
	if r.store == nil || r.body.Held != nil {
		return
	}
	r.store = r.store[:0]
	if r.bodyDone {
		if r.conn.spareStore == nil && cap(r.store) == heldStore {
			r.conn.spareStore = r.store
		}
		r.store = nil
	}
}
