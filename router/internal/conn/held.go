package conn

import (
	"unsafe"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/wire"
)

// heldStore: request-body bytes held for lack of the worker's credit are copied into a
// ring the request keeps, not into a new slice each, and go to the worker from there by
// reference: on 1 MB uploads most chunks wait for credit, and a slice per chunk was a
// fifth of the router's CPU in allocation and GC (bench/results/router-profile.md). A
// region of the ring is written over again once all of it was sent and the worker's
// writer wrote the batch that sent its end, and, for bytes that arrived before the worker
// acknowledged the request, once it has (a requeue replays them: pinned). Before its
// acknowledgement a request may have its initial credit sent and what may be held
// (bodyHold) plus one read (bigRead) held, all of it pinned; the ring holds that twice
// over, so that the wrap at its end never sends a chunk to a slice of its own. A chunk
// that does not fit gets one.
const heldStore = 2 * (bodyHold + bigRead)

// heldRing is a request's ring of held body bytes. Its regions are in the order they
// were stored, which is the order they are sent (upload.Body's held chunks are FIFO).
type heldRing struct {
	buf     []byte
	regions []heldRegion
	stored  int64 // bytes stored, ever
	sent    int64 // of those, bytes sent
}

type heldRegion struct {
	start, end int
	upTo       int64 // stored once this region was
	sent       bool  // all of it
	pin        bool  // kept for a replay: stored before the worker acknowledged the request
	w          *attach.Worker
	batch      uint64 // the batch of w that sent its end (0: none referenced it)
}

// keep returns chunk (a view of the read buffer) copied to be held, or to be sent now
// (sendHeld): into the request's ring, where it is pinned until the worker saw the
// request; a chunk that does not fit gets a slice of its own.
func (r *Request) keep(chunk []byte) []byte {
	g := &r.held
	if g.buf == nil {
		// the connection's last request's, once it sent all of it (heldDone)
		if c := r.conn; c.spareHeld.buf != nil {
			*g, c.spareHeld = c.spareHeld, heldRing{}
		} else {
			g.buf = make([]byte, heldStore)
		}
	}
	seen := r.link.Seen() || r.tunneled
	g.free(seen)
	at, ok := g.place(len(chunk))
	if !ok {
		return clone(chunk)
	}
	end := at + copy(g.buf[at:], chunk)
	g.stored += int64(len(chunk))
	g.regions = append(g.regions, heldRegion{start: at, end: end, upTo: g.stored, pin: !seen})
	return g.buf[at:end:end]
}

// ringWorthy: a chunk sent before the worker acknowledged the request (kept for a
// replay) goes through the ring rather than a slice of its own when the request has
// one, or its body is larger than what may be held: a small body does not make the
// request allocate a ring.
func (r *Request) ringWorthy(n int) bool {
	if r.held.buf != nil || r.conn.spareHeld.buf != nil {
		return true
	}
	return n >= wire.RefThreshold && (r.contentLen > bodyHold || r.contentLen < 0 && r.bodyBytes > bodyHold)
}

// free lets go of the regions at the front that were sent and written, and that no
// replay may need (seen: the worker acknowledged the request).
func (g *heldRing) free(seen bool) {
	k := 0
	for k < len(g.regions) {
		x := &g.regions[k]
		if !x.sent || (x.w != nil && x.w.Written() < x.batch) || (x.pin && !seen) {
			break
		}
		k++
	}
	if k > 0 {
		n := copy(g.regions, g.regions[k:])
		clear(g.regions[n:])
		g.regions = g.regions[:n]
	}
}

// place finds n free bytes: after the last region, or from the ring's start when the
// end is taken.
func (g *heldRing) place(n int) (int, bool) {
	if len(g.regions) == 0 {
		return 0, n <= len(g.buf)
	}
	first, last := g.regions[0].start, g.regions[len(g.regions)-1].end
	if last > first { // not wrapped: [first, last) is in use
		if len(g.buf)-last >= n {
			return last, true
		}
		return 0, first >= n
	}
	return last, first-last >= n
}

// holds: b is a view of the ring.
func (g *heldRing) holds(b []byte) bool {
	if len(b) == 0 || g.buf == nil {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(g.buf)))
	return p >= base && p < base+uintptr(len(g.buf))
}

// sendHeld sends a held chunk (it may be a view of the ring) to w by reference; before
// the worker acknowledged the request it is kept for a replay as well.
func (r *Request) sendHeld(w *attach.Worker, chunk []byte) {
	if r.sendFromBlock(w, chunk) {
		return
	}
	r.body.Sending(chunk, !r.link.Seen() && !r.tunneled)
	batch := w.SendBodyHeld(r, chunk)
	g := &r.held
	if !g.holds(chunk) {
		return
	}
	g.sent += int64(len(chunk))
	for i := range g.regions {
		x := &g.regions[i]
		if x.sent {
			continue
		}
		if x.upTo > g.sent {
			break
		}
		x.sent = true
		if batch != 0 {
			x.w, x.batch = w, batch
		}
	}
}

// heldDone: the body is complete, every byte it stored was sent, and no replay may need
// them: the ring goes to the connection for its next request (whose keep frees what the
// writer wrote by then).
func (r *Request) heldDone() {
	g := &r.held
	if g.buf == nil || !r.bodyDone || g.sent != g.stored || r.conn.spareHeld.buf != nil {
		return
	}
	if !r.link.Seen() && !r.tunneled {
		for i := range g.regions {
			if g.regions[i].pin {
				return
			}
		}
	}
	for i := range g.regions {
		g.regions[i].pin = false
	}
	r.conn.spareHeld, *g = *g, heldRing{}
}

// dropRing: the request goes to another worker (its first one died before it
// acknowledged it) and replays its body: the held chunks that are views of the ring get
// slices of their own, and the ring, which the dead worker's unwritten batch may still
// reference, is left to the collector.
func (r *Request) dropRing() {
	g := &r.held
	if g.buf == nil {
		return
	}
	for i, chunk := range r.body.Held {
		if g.holds(chunk) {
			r.body.Held[i] = clone(chunk)
		}
	}
	*g = heldRing{}
}
