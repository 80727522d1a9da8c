package wire

import "sync"

// CopyPool is where BodyCopy copies large chunks: buffers of Size bytes, each queued by
// reference and taken back once WriteTo wrote it. Copied into the Writer's own buffer
// instead, the chunks of one batch (every upload's bytes its worker granted and has not
// read yet, megabytes on 1 MB uploads) grew that buffer by append, copying it again
// each time (growslice: 14% of the router's CPU), and the buffer, kept across batches,
// kept its peak for good (the router's RSS 34 -> 118 MB after a 1 MB upload run with
// 512 KiB grants: bench/results/router-profile.md, round 3). Pooled buffers are reused
// batch after batch and let go by the GC once uploads stop.
type CopyPool struct {
	Size int
	pool sync.Pool
}

func (p *CopyPool) get() *[]byte {
	if bp, ok := p.pool.Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, p.Size)
	return &b
}

// BodyCopy appends a BODY frame with b copied: for a chunk of a buffer the caller reuses
// (a client connection's read buffer) this is the one copy it needs, where Body would
// need a copy the caller allocated (1 MB uploads: 15% of the router's CPU in GC,
// bench/results/router-profile.md). With Copies set, a chunk of RefThreshold bytes or
// more goes into pooled buffers, a BODY frame per Copies.Size; else into the Writer's
// own buffer.
func (w *Writer) BodyCopy(id uint32, b []byte) error {
	if len(b) > MaxFrame-5 {
		return tooLarge(TypeBody, len(b))
	}
	if p := w.Copies; p != nil && len(b) >= RefThreshold {
		// a chunk larger than a pooled buffer goes as several BODY frames (the worker
		// takes a body in any pieces)
		for len(b) > 0 {
			k := min(len(b), p.Size)
			w.header(TypeBody, id, k)
			bp := p.get()
			c := (*bp)[:k]
			copy(c, b)
			w.ref(c)
			w.copied = append(w.copied, bp)
			b = b[k:]
		}
		return nil
	}
	w.header(TypeBody, id, len(b))
	w.slab = append(w.slab, b...)
	return nil
}

// release gives the pooled buffers of the batch just written back.
func (w *Writer) release() {
	for i, bp := range w.copied {
		w.Copies.pool.Put(bp)
		w.copied[i] = nil
	}
	w.copied = w.copied[:0]
}
