package conn

import (
	"httpsys/router/internal/attach"
	"httpsys/router/internal/wire"
)

// blockHold: a body chunk of at least this many bytes, read into a block, is held for
// credit in that block; a smaller one is copied into the request's ring (held.go). The
// held bytes are counted and capped as before (bodyHold: reading pauses once they reach
// it); what this adds is the rest of the blocks they are in. A block is read into only
// after a read filled readSize, and a read into it that comes back shorter than readSize
// goes back to the small buffer, whose full reads are held in the ring: so a request's
// held bytes keep about two blocks at most beyond themselves.
const blockHold = readSize / 2

// heldBlock is a run of a request's held bytes that are a view of blk: n of them are
// still held; the request holds one reference to blk for them.
type heldBlock struct {
	blk *wire.Block
	n   int
}

// blockOf is the block chunk (a view of the connection's current read) may go to the
// worker in, by reference: once the worker saw the request, as nothing is then kept for
// a replay (before that a requeue may replay the bytes after the block was read over),
// and when it is large enough to be worth a writev part of its own (a chunked body's
// small pieces are copied into the batch, as any small frame is).
func (r *Request) blockOf(chunk []byte) *wire.Block {
	blk := r.conn.readBlk
	if blk == nil || len(chunk) < wire.RefThreshold || !(r.link.Seen() || r.tunneled) || !blk.Holds(chunk) {
		return nil
	}
	return blk
}

// holdInBlock holds chunk, a view of blk, for credit; false: it is too small to keep
// blk for.
func (r *Request) holdInBlock(chunk []byte, blk *wire.Block) bool {
	if len(chunk) < blockHold {
		return false
	}
	blk.Hold()
	r.blocks = append(r.blocks, heldBlock{blk: blk, n: len(chunk)})
	r.body.Hold(chunk)
	return true
}

// sendFromBlock sends a held chunk that is a view of the first of the request's held
// blocks; false: it is not one.
func (r *Request) sendFromBlock(w *attach.Worker, chunk []byte) bool {
	if len(r.blocks) == 0 || !r.blocks[0].blk.Holds(chunk) {
		return false
	}
	hb := &r.blocks[0]
	r.body.Sending(chunk, false)
	w.SendBodyBlock(r, chunk, hb.blk)
	if hb.n -= len(chunk); hb.n <= 0 {
		hb.blk.Release()
		n := copy(r.blocks, r.blocks[1:])
		r.blocks[n] = heldBlock{}
		r.blocks = r.blocks[:n]
	}
	return true
}

// dropBlocks: the held bytes are let go (body.Drop).
func (r *Request) dropBlocks() {
	for i, hb := range r.blocks {
		hb.blk.Release()
		r.blocks[i] = heldBlock{}
	}
	r.blocks = r.blocks[:0]
}
