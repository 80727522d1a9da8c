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
