package wire

import (
	"bytes"
	"testing"
)

// A BODY frame from a block carries the block's bytes as they are when the batch is
// written (a reference, no copy), and the batch holds the block until then: the reader
// that let go of it meanwhile does not give it back to the pool early.
func TestABlocksBodyFrameHoldsTheBlockUntilTheBatchIsWritten(t *testing.T) {
	var p BlockPool
	blk := p.Get(64 << 10)
	chunk := blk.B[100 : 100+32<<10]
	for i := range chunk {
		chunk[i] = byte(i)
	}
	w := NewWriter(256)
	if err := w.BodyBlock(7, chunk, blk); err != nil {
		t.Fatal(err)
	}
	blk.Release() // the reader's reference
	if blk.refs.Load() != 1 {
		t.Fatalf("%d references once the reader let go, want the batch's 1", blk.refs.Load())
	}
	chunk[0] = 0xee // written over before the batch goes: a reference sees it
	var out bytes.Buffer
	if _, err := w.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	f, err := NewReader(&out, 1<<20).Next()
	if err != nil || f.Type != TypeBody || f.ID != 7 || len(f.Payload) != len(chunk) || f.Payload[0] != 0xee || f.Payload[1] != 1 {
		t.Fatalf("frame %v %d, %d bytes, err %v", f.Type, f.ID, len(f.Payload), err)
	}
	if blk.refs.Load() != 0 {
		t.Fatalf("%d references after the write, want none", blk.refs.Load())
	}
}
