package wire

import (
	"bytes"
	"testing"
)

// An upload's chunk is appended by copy: the client's read buffer it came from may be
// reused at once, and the worker still gets the bytes that were read.
func TestBodyCopyOwnsItsBytes(t *testing.T) {
	w := NewWriter(0)
	chunk := bytes.Repeat([]byte{'x'}, 2*RefThreshold)
	if err := w.BodyCopy(7, chunk); err != nil {
		t.Fatal(err)
	}
	for i := range chunk {
		chunk[i] = 'y' // the read buffer, reused by the next read
	}
	var out bytes.Buffer
	if _, err := w.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	f, err := NewReader(&out, 64<<10).Next()
	if err != nil {
		t.Fatal(err)
	}
	if f.Type != TypeBody || f.ID != 7 || !bytes.Equal(f.Payload, bytes.Repeat([]byte{'x'}, 2*RefThreshold)) {
		t.Fatalf("got %v %d, %d bytes", f.Type, f.ID, len(f.Payload))
	}
	// the Writer's buffer is kept: the next batch's copies allocate nothing
	allocs := testing.AllocsPerRun(5, func() {
		_ = w.BodyCopy(7, chunk)
		out.Reset()
		_, _ = w.WriteTo(&out)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per copied chunk, want 0", allocs)
	}
}

// With a CopyPool, a batch of large upload chunks does not grow the Writer's own buffer
// (which it keeps for good) to the batch's size: each chunk is copied into a pooled
// buffer, in order with the frames around it, and still owns its bytes.
func TestBodyCopyPooledKeepsTheBufferSmall(t *testing.T) {
	pool := &CopyPool{Size: 32 << 10}
	w := NewWriter(4096)
	w.Copies = pool
	var want []byte
	chunk := make([]byte, 32<<10)
	for i := range 40 {
		for j := range chunk {
			chunk[j] = byte(i)
		}
		w.U32(TypeAck, 0, uint32(i))
		if err := w.BodyCopy(uint32(i), chunk); err != nil {
			t.Fatal(err)
		}
		want = append(want, byte(i))
	}
	clear(chunk) // the read buffer, reused
	if c := cap(w.slab); c > 64<<10 {
		t.Fatalf("the Writer's buffer grew to %d bytes for 40 chunks of 32 KiB", c)
	}
	var out bytes.Buffer
	if _, err := w.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&out, 64<<10)
	for i := range 40 {
		a, err := r.Next()
		if err != nil || a.Type != TypeAck {
			t.Fatalf("frame %d: %v %v", 2*i, a.Type, err)
		}
		f, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if f.Type != TypeBody || f.ID != uint32(i) || !bytes.Equal(f.Payload, bytes.Repeat(want[i:i+1], 32<<10)) {
			t.Fatalf("chunk %d: %v id %d, %d bytes", i, f.Type, f.ID, len(f.Payload))
		}
	}
	if len(w.copied) != 0 {
		t.Fatalf("%d pooled buffers not given back after the write", len(w.copied))
	}
}

// A chunk larger than a pooled buffer (a 128 KiB read) goes as several BODY frames, in
// order, its bytes intact.
func TestBodyCopyPooledSplitsALargeChunk(t *testing.T) {
	w := NewWriter(4096)
	w.Copies = &CopyPool{Size: 32 << 10}
	chunk := make([]byte, 100<<10)
	for i := range chunk {
		chunk[i] = byte(i / 1000)
	}
	want := append([]byte(nil), chunk...)
	if err := w.BodyCopy(5, chunk); err != nil {
		t.Fatal(err)
	}
	clear(chunk)
	var out bytes.Buffer
	if _, err := w.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	r := NewReader(&out, 64<<10)
	var got []byte
	frames := 0
	for {
		f, err := r.Next()
		if err != nil {
			break
		}
		if f.Type != TypeBody || f.ID != 5 || len(f.Payload) > 32<<10 {
			t.Fatalf("frame %d: %v id %d, %d bytes", frames, f.Type, f.ID, len(f.Payload))
		}
		got = append(got, f.Payload...)
		frames++
	}
	if frames != 4 || !bytes.Equal(got, want) {
		t.Fatalf("%d frames, %d bytes: want 4 frames with the chunk's bytes in order", frames, len(got))
	}
}
