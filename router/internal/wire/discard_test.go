package wire

import "testing"

// A batch dropped unwritten (its worker left) lets go of the blocks its BODY frames
// referenced: they go back to their pool, and the Writer starts empty.
func TestADiscardedBatchGivesItsBlocksBack(t *testing.T) {
	var p BlockPool
	blk := p.Get(64 << 10)
	w := NewWriter(256)
	if err := w.BodyBlock(7, blk.B[:32<<10], blk); err != nil {
		t.Fatal(err)
	}
	blk.Release() // the reader's reference
	if p.Out() != 1 {
		t.Fatalf("%d blocks out while a batch references one, want 1", p.Out())
	}
	w.Discard()
	if p.Out() != 0 || w.Len() != 0 {
		t.Fatalf("%d blocks out, %d bytes queued after the batch was dropped", p.Out(), w.Len())
	}
}
