package conn

import "httpsys/router/internal/wire"

// bigRead: a connection whose read fills its readSize buffer (a request body streaming
// in, a burst of pipelined requests) reads into a buffer of this size, from a second pool,
// until a read comes back shorter than readSize. A 1 MB upload is then 8 reads of the
// client's socket instead of 32 (syscalls were two thirds of the router's upload profile,
// bench/results/router-profile.md), while a connection that sends little, idle
// keep-alive ones above all, keeps only its readSize buffer.
const bigRead = 128 << 10

// nextBlock is the block for a connection's next read, after one of n bytes into cur
// (nil: its own readSize buffer). A block a request still references (a body chunk held
// for credit, or in a batch not yet written to the worker) is let go, and the next read
// goes into another: the bytes read into a block are never copied in user space
// (wire.Block), so it is never written over while anything references it.
func (s *Server) nextBlock(cur *wire.Block, n int) *wire.Block {
	switch {
	case cur == nil && n == readSize:
		return s.blocks.Get(bigRead)
	case cur == nil:
		return nil
	case n < readSize:
		cur.Release()
		return nil
	case cur.Shared():
		cur.Release()
		return s.blocks.Get(bigRead)
	}
	return cur
}
