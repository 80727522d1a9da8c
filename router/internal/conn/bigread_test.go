package conn

import "testing"

// A read that fills the connection's buffer (a body streaming in) makes the next reads
// use a large block; a read shorter than the small buffer gives the block back, so a
// connection that sends little keeps only its small buffer; a block a request still
// references is never read into again.
func TestReadsGrowWhileTheyFillTheBufferAndShrinkAfter(t *testing.T) {
	s := &Server{}
	if blk := s.nextBlock(nil, 100); blk != nil {
		t.Fatal("a short read took a large buffer")
	}
	blk := s.nextBlock(nil, readSize)
	if blk == nil || len(blk.B) != bigRead {
		t.Fatalf("a full read of %d bytes: no block of %d bytes next", readSize, bigRead)
	}
	if b := s.nextBlock(blk, bigRead); b != blk {
		t.Fatal("a full large read gave the block back")
	}
	if b := s.nextBlock(blk, readSize); b != blk {
		t.Fatal("a read of readSize bytes into the block gave it back")
	}
	blk.Hold() // a held chunk of it
	next := s.nextBlock(blk, bigRead)
	if next == blk || next == nil {
		t.Fatal("the next read goes into a block a request still references")
	}
	blk.Release()
	if b := s.nextBlock(next, readSize-1); b != nil {
		t.Fatal("a short read kept the block")
	}
}
