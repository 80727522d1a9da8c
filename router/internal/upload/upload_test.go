package upload

import (
	"bytes"
	"testing"

	"httpsys/router/internal/wire"
)

// Held bytes go out in order within the credit, a chunk split where the credit ends;
// what went before the worker's ACK comes back first after a requeue, then the rest.
func TestCreditHoldReplay(t *testing.T) {
	b := New()
	if b.Credit != wire.InitialBodyWindow {
		t.Fatalf("credit %d", b.Credit)
	}
	b.Credit = 5
	if !b.Take(3) || b.Credit != 2 {
		t.Fatalf("take: credit %d", b.Credit)
	}
	b.Sending([]byte("abc"), true)
	if b.Take(3) {
		t.Fatal("took beyond the credit")
	}
	b.Hold([]byte("defg"))
	b.Hold([]byte("hi"))
	if b.Take(0) {
		t.Fatal("took past held bytes")
	}
	var sent []byte
	for c, ok := b.Next(); ok; c, ok = b.Next() {
		b.Sending(c, true)
		sent = append(sent, c...)
	}
	if string(sent) != "de" || b.HeldBytes != 4 || b.Credit != 0 || b.Held == nil {
		t.Fatalf("sent %q, held %d, credit %d", sent, b.HeldBytes, b.Credit)
	}
	b.EndSent = true
	b.Requeue()
	if b.EndSent || b.Credit != wire.InitialBodyWindow || b.HeldBytes != 9 {
		t.Fatalf("requeued: %+v", b)
	}
	var all []byte
	for c, ok := b.Next(); ok; c, ok = b.Next() {
		b.Sending(c, false) // seen: nothing kept
		all = append(all, c...)
	}
	if !bytes.Equal(all, []byte("abcdefghi")) || b.Held != nil || b.HeldBytes != 0 {
		t.Fatalf("after requeue %q, held %v", all, b.Held)
	}
	b.Requeue()
	if b.Held != nil {
		t.Fatal("replayed what the worker had seen")
	}
	b.Hold([]byte("x"))
	if n := b.Drop(); n != 1 || b.Held != nil {
		t.Fatalf("drop %d", n)
	}
}
