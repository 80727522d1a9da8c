package attach

import "httpsys/router/internal/wire"

// copyChunk: the size of the pooled buffers upload chunks from a connection's small read
// buffer are copied into (wire.CopyPool): internal/conn's readSize. (Its larger reads go
// into blocks the BODY frames reference, SendBodyBlock.)
const copyChunk = 32 << 10

// sendBuffer: the send buffer asked for on a worker's socket (SO_SNDBUF; Linux doubles
// it, /proc/sys/net/core/wmem_max caps it). At the default (wmem_default, 208 KiB) the
// batches of a 1 MB upload's chunks met a full socket at every other write, and each
// wait was a park and a wake-up of the flush loop and of the worker; at 1 MiB the router
// used 8-15% less CPU per 1 MB upload and the worker 1-17% less (3 alternating runs,
// bench/results/router-profile.md round 3). The kernel holds only what the worker has not
// read yet, which the router would otherwise hold in its batch.
const sendBuffer = 1 << 20

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

// SendBodyHeld appends a BODY frame that references chunk until the batch it joined is
// written, and returns that batch: chunk must not change until Written reaches it (a
// request's store of held body bytes, conn/held.go). 0: nothing was appended.
func (w *Worker) SendBodyHeld(r Request, chunk []byte) uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.holds(r) {
		return 0
	}
	_ = w.out.Body(r.Link().id, chunk)
	w.schedule()
	return w.batches.Load() + 1
}

// Written is the last batch written to the worker's socket, or given up on.
func (w *Worker) Written() uint64 { return w.written.Load() }

// SendBodyBlock appends a BODY frame that references chunk, a view of blk, until the
// batch it joined is written (the batch holds blk until then).
func (w *Worker) SendBodyBlock(r Request, chunk []byte, blk *wire.Block) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || !w.holds(r) {
		return
	}
	_ = w.out.BodyBlock(r.Link().id, chunk, blk)
	w.schedule()
}
