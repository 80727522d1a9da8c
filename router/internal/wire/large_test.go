package wire

import (
	"bytes"
	"testing"
)

// A 1 MB response arrives as frames larger than the read buffer (the whole body in one,
// or a response window each): each is read whole into a buffer kept for the next, not
// into a new allocation per frame, and each still carries its own bytes.
func TestLargeBodyFramesReuseOneBuffer(t *testing.T) {
	var stream bytes.Buffer
	w := NewWriter(0)
	const frames = 8
	size := func(i int) int {
		if i%2 == 1 {
			return 1 << 20
		}
		return ResponseWindow
	}
	for i := range frames {
		if err := w.ResBody(uint32(i), ResMore, bytes.Repeat([]byte{byte('a' + i)}, size(i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.WriteTo(&stream); err != nil {
		t.Fatal(err)
	}
	b := stream.Bytes()
	src := bytes.NewReader(b)
	r := NewReader(src, 64<<10)
	check := func() {
		for i := range frames {
			f, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if f.Type != TypeResBody || len(f.Payload) != 1+size(i) || f.Payload[1] != byte('a'+i) || f.Payload[len(f.Payload)-1] != byte('a'+i) {
				t.Fatalf("frame %d: type %v, %d bytes", i, f.Type, len(f.Payload))
			}
		}
	}
	check() // the first frame allocates the kept buffer
	allocs := testing.AllocsPerRun(5, func() {
		src.Reset(b)
		check()
	})
	if allocs != 0 {
		t.Fatalf("%v allocations for %d large frames, want 0", allocs, frames)
	}
}
