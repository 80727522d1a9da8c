package wire

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Block is a pooled buffer that a client connection reads a request body into and
// that the BODY frames carrying it reference, so that the body crosses the router with
// no copy in user space: each of its holders (the reader, a request holding a chunk of
// it for credit, a batch that sends a chunk of it) holds a reference, and the last one
// let go gives it back to its pool. Copying each chunk into a pooled buffer of the
// worker's batch instead (BodyCopy), or into a slice of its own while it waited for
// credit, was a fifth to a quarter of the router's CPU on 1 MB uploads
// (bench/results/router-profile.md, "Uploads read into blocks").
type Block struct {
	B    []byte
	refs atomic.Int32
	pool *BlockPool
}

// BlockPool hands out Blocks; all of one pool have the size the first Get asked for.
type BlockPool struct {
	pool sync.Pool
	out  atomic.Int64 // handed out and not given back (Out)
}

// Get returns a Block with one reference, the caller's.
func (p *BlockPool) Get(size int) *Block {
	b, ok := p.pool.Get().(*Block)
	if !ok {
		b = &Block{B: make([]byte, size), pool: p}
	}
	b.refs.Store(1)
	p.out.Add(1)
	return b
}

// Out is how many Blocks are handed out and not given back yet: none once every
// connection closed and every batch was written, unless a reference was never let go
// (the Block then goes to the collector, not back to the pool).
func (p *BlockPool) Out() int64 { return p.out.Load() }

// Hold takes another reference.
func (b *Block) Hold() { b.refs.Add(1) }

// Release lets a reference go; the last one gives the Block back to its pool.
func (b *Block) Release() {
	switch n := b.refs.Add(-1); {
	case n == 0:
		b.pool.out.Add(-1)
		b.pool.pool.Put(b)
	case n < 0:
		panic("wire: a Block released more often than held")
	}
}

// Shared: a reference other than the caller's is held (under whatever keeps new ones
// from being taken meanwhile).
func (b *Block) Shared() bool { return b.refs.Load() > 1 }

// Holds: p is a view of the Block.
func (b *Block) Holds(p []byte) bool {
	if len(p) == 0 {
		return false
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b.B)))
	return at >= base && at < base+uintptr(len(b.B))
}

// BodyBlock appends a BODY frame that references chunk, a view of blk, until the batch
// is written; the batch holds blk until then.
func (w *Writer) BodyBlock(id uint32, chunk []byte, blk *Block) error {
	if len(chunk) > MaxFrame-5 {
		return tooLarge(TypeBody, len(chunk))
	}
	w.header(TypeBody, id, len(chunk))
	w.ref(chunk)
	blk.Hold()
	w.blocks = append(w.blocks, blk)
	return nil
}

// releaseBlocks lets go of the batch's references once it was written.
func (w *Writer) releaseBlocks() {
	for i, b := range w.blocks {
		b.Release()
		w.blocks[i] = nil
	}
	w.blocks = w.blocks[:0]
}

// Discard drops the batch unwritten (its connection is gone): the pooled buffers and
// the blocks it references are let go.
func (w *Writer) Discard() {
	w.open = -1
	w.reset()
}
