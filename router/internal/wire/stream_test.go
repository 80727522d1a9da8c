package wire

import (
	"bytes"
	"testing"
	"testing/iotest"
)

// A RESPONSE streams only once its whole head is in (a 1 MB res.end() is one RESPONSE
// frame): the head is handed out checked, as a whole frame's would be, and the body's
// rest stays on the stream; Complete and Rest read it as one piece.
func TestAResponseStreamsOnceItsHeadIsInAndItsRestReadsWhole(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 20000)
	block := bytes.Repeat([]byte("X-Pad: 0123456789\r\n"), 100) // a head longer than the first read
	w := NewWriter(0)
	_ = w.Response(5, &Response{Status: 200, Reason: []byte("OK"), HeaderBlock: block, Body: big})
	_ = w.Response(6, &Response{Status: 200, Reason: []byte("OK"), HeaderBlock: block, Body: big})
	w.U32(TypeAck, 0, 2)
	var b bytes.Buffer
	_, _ = w.WriteTo(&b)
	// one byte per read at first: the head arrives in many reads
	r := NewReader(iotest.OneByteReader(bytes.NewReader(b.Bytes())), 64<<10)
	r.StreamBodies(64 << 10)
	f, err := r.Next()
	if err != nil || f.Type != TypeResponse || f.ID != 5 || f.Rest == 0 {
		t.Fatalf("first RESPONSE: %v %d rest %d, %v", f.Type, f.ID, f.Rest, err)
	}
	if err := CheckResponse(f.Payload); err != nil {
		t.Fatalf("the streamed head does not check: %v", err)
	}
	bodyStart := 14 + 2 + len(block)
	have := append([]byte(nil), f.Payload[bodyStart:]...)
	rest, err := r.Rest()
	if err != nil || !bytes.Equal(append(have, rest...), big) {
		t.Fatalf("Rest gave %d bytes (%v): the body is not whole", len(rest), err)
	}
	f, err = r.Next()
	if err != nil || f.ID != 6 || f.Rest == 0 {
		t.Fatalf("second RESPONSE: %d rest %d, %v", f.ID, f.Rest, err)
	}
	whole, err := r.Complete(f)
	if err != nil || whole.Rest != 0 || !bytes.Equal(whole.Payload[bodyStart:], big) || CheckResponse(whole.Payload) != nil {
		t.Fatalf("Complete: %d bytes, %v", len(whole.Payload), err)
	}
	if f, err = r.Next(); err != nil || f.Type != TypeAck {
		t.Fatalf("after: %v %v", f.Type, err)
	}
}
