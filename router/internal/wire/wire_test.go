package wire

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// sample appends one frame of every type a batch carries, with the edge cases of each
// (an empty header value, latin1 bytes, a TLS section with a certificate, trailers, a
// body by reference).
func sample(t testing.TB, w *Writer) {
	t.Helper()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.JSON(TypeHello, 0, []byte(`{"pid":1,"window":128}`)))
	must(w.JSON(TypeHelloOK, 0, []byte(`{"queue":"q","workerId":3}`)))
	must(w.JSON(TypeHelloErr, 0, []byte(`{"code":"ERR_HTTPSYS_PROTOCOL"}`)))
	tls := AppendTLSInfo(nil, &TLSInfo{Authorized: true, Protocol: "TLSv1.3", CipherName: "TLS_AES_128_GCM_SHA256", ALPNProtocol: "http/1.1", ServerName: "a.test", Certificate: []byte{0x30, 0x82, 1, 2}})
	w.BeginRequest(1<<20|7, &Request{Flags: ReqHasBody | ReqKeepAlive | ReqTLS, VersionMajor: 1, VersionMinor: 1, Family: 6, RemotePort: 54321, LocalPort: 8443, ConnectionID: 4000000000,
		Method: "POST", URL: []byte("/api/x?y=1"), RemoteAddress: "::ffff:127.0.0.1", LocalAddress: "::1", TLS: tls})
	w.Field([]byte("Host"), []byte("a.test"))
	w.Field([]byte("X-Empty"), nil)
	w.Field([]byte("X-Latin1"), []byte("caf\xe9"))
	must(w.End())
	must(w.Body(7, []byte("hello")))
	must(w.Body(7, bytes.Repeat([]byte("b"), 5000)))
	w.BeginBodyEnd(7)
	w.Field([]byte("X-Sum"), []byte("abc"))
	must(w.End())
	w.BeginBodyEnd(8)
	must(w.End())
	for _, t := range []Type{TypeAbort, TypeContinue, TypeCancel, TypeDetach, TypeDetachOK, TypeConnClosed, TypeConnEnd} {
		w.Empty(t, 9)
	}
	w.U32(TypeAck, 0, 12)
	w.U32(TypeRead, 7, 65536)
	w.U32(TypeWindow, 7, 1<<31)
	must(w.Response(7, &Response{Status: 200, Flags: ResHasConnection, CacheTTL: 60, Reason: []byte("OK"), HeaderBlock: []byte("Connection: keep-alive\r\nContent-Length: 2\r\n"), Body: []byte("hi")}))
	must(w.Response(8, &Response{Status: 200, Flags: ResMore, Reason: []byte("OK"), Body: bytes.Repeat([]byte("r"), 70000)}))
	must(w.ResBody(8, 0, bytes.Repeat([]byte("s"), 9000)))
	must(w.ResBody(8, ResClose, nil))
	must(w.Info(7, &Response{Status: 103, Reason: []byte("Early Hints"), HeaderBlock: []byte("Link: </a.css>\r\n")}))
	must(w.JSON(TypeClose, 0, []byte(`{"code":"ERR_HTTPSYS_QUEUE_CLOSED","reason":"x"}`)))
}

func batch(t testing.TB) []byte {
	w := NewWriter(1024)
	sample(t, w)
	var out bytes.Buffer
	n, err := w.WriteTo(&out)
	if err != nil || int(n) != out.Len() {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	if w.Len() != 0 {
		t.Fatalf("Len after WriteTo: %d", w.Len())
	}
	return out.Bytes()
}

// frames reads every frame of src, copying each payload.
func frames(t *testing.T, r *Reader) []Frame {
	t.Helper()
	var out []Frame
	for {
		f, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Payload = bytes.Clone(f.Payload)
		out = append(out, f)
	}
}

// chunky returns its bytes in pieces of 1 to max bytes.
type chunky struct {
	b   []byte
	rng *rand.Rand
	max int
}

func (c *chunky) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(c.b), 1+c.rng.IntN(c.max))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

func TestEveryFrameReadsBackWhateverTheReads(t *testing.T) {
	b := batch(t)
	var want []Frame
	for rest := b; len(rest) > 0; {
		f, n, err := Parse(rest)
		if err != nil || n == 0 {
			t.Fatalf("Parse: %d, %v", n, err)
		}
		want = append(want, f)
		rest = rest[n:]
	}
	if len(want) != 24 {
		t.Fatalf("%d frames, want 24", len(want))
	}
	sources := map[string]func() io.Reader{
		"one read":     func() io.Reader { return bytes.NewReader(b) },
		"byte by byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) },
		"random":       func() io.Reader { return &chunky{b: b, rng: rand.New(rand.NewPCG(1, 2)), max: 3000} },
	}
	for name, src := range sources {
		for _, size := range []int{64, 4096, 1 << 20} {
			got := frames(t, NewReader(src(), size))
			if len(got) != len(want) {
				t.Fatalf("%s, buffer %d: %d frames, want %d", name, size, len(got), len(want))
			}
			for i := range got {
				if got[i].Type != want[i].Type || got[i].ID != want[i].ID || !bytes.Equal(got[i].Payload, want[i].Payload) {
					t.Fatalf("%s, buffer %d: frame %d is %v %d, want %v %d", name, size, i, got[i].Type, got[i].ID, want[i].Type, want[i].ID)
				}
			}
		}
	}
}

func TestDecodedFramesHoldWhatWasEncoded(t *testing.T) {
	fs := frames(t, NewReader(bytes.NewReader(batch(t)), 4096))
	req, err := fs[3].Request()
	if err != nil {
		t.Fatal(err)
	}
	if req.Method != "POST" || string(req.URL) != "/api/x?y=1" || req.RemoteAddress != "::ffff:127.0.0.1" || req.LocalAddress != "::1" ||
		req.ConnectionID != 4000000000 || req.RemotePort != 54321 || req.LocalPort != 8443 || req.Family != 6 || req.VersionMinor != 1 || fs[3].ID != 1<<20|7 {
		t.Fatalf("REQUEST decoded as %+v", req)
	}
	var pairs []string
	for name, value := range req.Fields.All() {
		pairs = append(pairs, string(name), string(value))
	}
	if strings.Join(pairs, "|") != "Host|a.test|X-Empty||X-Latin1|caf\xe9" {
		t.Fatalf("header pairs %q", pairs)
	}
	tls, n, err := DecodeTLSInfo(req.TLS)
	if err != nil || n != len(req.TLS) || !tls.Authorized || tls.Protocol != "TLSv1.3" || tls.ServerName != "a.test" || tls.CipherStandardName != "" || !bytes.Equal(tls.Certificate, []byte{0x30, 0x82, 1, 2}) {
		t.Fatalf("TLS section %+v (%d of %d bytes), %v", tls, n, len(req.TLS), err)
	}
	tr, ok, err := fs[6].Trailers()
	if err != nil || !ok || tr.Len() != 1 {
		t.Fatalf("trailers %v %v %v", tr, ok, err)
	}
	if _, ok, _ := fs[7].Trailers(); ok || len(fs[7].Payload) != 0 {
		t.Fatal("BODY_END without trailers must be an empty frame")
	}
	res, err := fs[18].Response()
	if err != nil || res.Status != 200 || res.CacheTTL != 60 || string(res.Reason) != "OK" || string(res.Body) != "hi" || res.Flags != ResHasConnection {
		t.Fatalf("RESPONSE %+v %v", res, err)
	}
	if v, js, err := fs[0].JSON(); err != nil || v != Version || string(js) != `{"pid":1,"window":128}` {
		t.Fatalf("HELLO %d %s %v", v, js, err)
	}
	if v, _, err := fs[2].JSON(); err != nil || v != -1 {
		t.Fatalf("HELLO_ERR carries no version: %d %v", v, err)
	}
	if v, err := fs[17].U32(); err != nil || v != 1<<31 {
		t.Fatalf("WINDOW %d %v", v, err)
	}
}

func TestFramesArrivedWholeAreViewsOfTheReadBuffer(t *testing.T) {
	b := batch(t)
	r := NewReader(bytes.NewReader(b), 1<<20)
	f, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if &f.Payload[0] != &r.buf[HeaderSize] {
		t.Fatal("the first frame's payload is not a view of the read buffer")
	}
}

// The router's loop: everything one read brought (Next, then NextBuffered), bodies
// queued by reference to the read buffer, one write, then the next read.
func TestABatchOfViewsHoldsUntilTheNextRead(t *testing.T) {
	b := batch(t)
	for _, size := range []int{64, 8192, 1 << 20} {
		r := NewReader(&chunky{b: b, rng: rand.New(rand.NewPCG(3, uint64(size))), max: 20000}, size)
		w := NewWriter(0)
		var out bytes.Buffer
		for {
			f, err := r.Next()
			if err == io.EOF {
				break
			}
			for ok := true; ok && err == nil; f, ok, err = r.NextBuffered() {
				if f.Type == TypeBody {
					w.Body(f.ID, f.Payload)
				} else if f.Type == TypeResBody {
					w.ResBody(f.ID, f.Payload[0], f.Payload[1:])
				} else {
					w.header(f.Type, f.ID, len(f.Payload))
					w.slab = append(w.slab, f.Payload...)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			w.WriteTo(&out)
		}
		if !bytes.Equal(out.Bytes(), b) {
			t.Fatalf("buffer %d: the frames written back differ from the frames read", size)
		}
	}
}

func TestLargeBodiesAreQueuedByReference(t *testing.T) {
	w := NewWriter(64)
	body := bytes.Repeat([]byte("x"), RefThreshold)
	small := []byte("small")
	if err := w.ResBody(1, ResMore, body); err != nil {
		t.Fatal(err)
	}
	if err := w.ResBody(1, 0, small); err != nil {
		t.Fatal(err)
	}
	refs := 0
	for _, p := range w.parts {
		if p.ref != nil {
			refs++
			if &p.ref[0] != &body[0] {
				t.Fatal("the large body was copied")
			}
		}
	}
	if refs != 1 || w.Len() != 2*(HeaderSize+1)+len(body)+len(small) {
		t.Fatalf("%d parts by reference, %d bytes queued", refs, w.Len())
	}
}

func TestLengthsOutside5To64MiBArePermanentProtocolErrors(t *testing.T) {
	for _, l := range []uint32{0, 4, MaxFrame + 1, 0xffffffff} {
		b := []byte{byte(l), byte(l >> 8), byte(l >> 16), byte(l >> 24), 1, 0, 0, 0, 0}
		r := NewReader(bytes.NewReader(b), 64)
		for range 2 {
			_, err := r.Next()
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.HasPrefix(pe.Reason, "bad frame length") {
				t.Fatalf("length %d: %v", l, err)
			}
		}
		if _, _, err := Parse(b); err == nil {
			t.Fatalf("Parse took length %d", l)
		}
	}
	var b bytes.Buffer
	w := NewWriter(0)
	w.Empty(TypeAbort, 1)
	w.WriteTo(&b)
	if b.Len() != HeaderSize || b.Bytes()[0] != 5 {
		t.Fatalf("an empty frame is % x", b.Bytes())
	}
}

func TestTheStreamEndsBetweenFramesOrNot(t *testing.T) {
	b := batch(t)
	if _, err := NewReader(bytes.NewReader(b[:3]), 64).Next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("a cut length field: %v", err)
	}
	r := NewReader(bytes.NewReader(b[:40]), 64)
	r.Next()
	if _, err := r.Next(); err != io.ErrUnexpectedEOF {
		t.Fatalf("a cut frame: %v", err)
	}
	if _, err := NewReader(bytes.NewReader(nil), 64).Next(); err != io.EOF {
		t.Fatalf("an empty stream: %v", err)
	}
}

func TestStreamedBodiesLeaveTheirRestOnTheStream(t *testing.T) {
	w := NewWriter(0)
	big := bytes.Repeat([]byte("0123456789"), 10000)
	w.ResBody(3, ResMore, big)
	w.U32(TypeAck, 0, 1)
	w.ResBody(4, 0, big)
	w.Empty(TypeCancel, 4)
	var b bytes.Buffer
	w.WriteTo(&b)
	r := NewReader(iotest.HalfReader(bytes.NewReader(b.Bytes())), 4096)
	r.StreamBodies(16 << 10)
	f, err := r.Next()
	if err != nil || f.Type != TypeResBody || f.ID != 3 || f.Rest == 0 || f.Payload[0] != ResMore {
		t.Fatalf("streamed frame %v %d rest %d, %v", f.Type, f.ID, f.Rest, err)
	}
	got := append([]byte(nil), f.Payload[1:]...)
	rest, err := io.ReadAll(r.Body())
	if err != nil || len(rest) != f.Rest {
		t.Fatalf("Body gave %d bytes of %d, %v", len(rest), f.Rest, err)
	}
	if !bytes.Equal(append(got, rest...), big) {
		t.Fatal("streamed body bytes differ")
	}
	if f, err = r.Next(); err != nil || f.Type != TypeAck {
		t.Fatalf("after the streamed body: %v %v", f.Type, err)
	}
	// a streamed body the caller does not read is skipped
	if f, err = r.Next(); err != nil || f.Rest == 0 {
		t.Fatalf("second body: rest %d, %v", f.Rest, err)
	}
	if f, err = r.Next(); err != nil || f.Type != TypeCancel || f.ID != 4 {
		t.Fatalf("after a skipped body: %v %d %v", f.Type, f.ID, err)
	}
}

func resp(status uint16, reason, block, body string) []byte {
	w := NewWriter(0)
	w.Response(1, &Response{Status: status, Reason: []byte(reason), HeaderBlock: []byte(block), Body: []byte(body)})
	var b bytes.Buffer
	w.WriteTo(&b)
	return b.Bytes()[HeaderSize:]
}

func TestResponseChecksAreTheHubs(t *testing.T) {
	cut := resp(200, "OK", "", "")
	cases := []struct {
		name    string
		payload []byte
		want    string // "" passes
	}{
		{"ordinary", resp(200, "OK", "A: b\r\n", "body"), ""},
		{"101", resp(101, "Switching Protocols", "Upgrade: websocket\r\n", ""), ""},
		{"999", resp(999, "", "", ""), ""},
		{"short", cut[:13], "RESPONSE payload of 13 bytes is shorter than its 14 fixed bytes"},
		{"100", resp(100, "Continue", "", ""), "RESPONSE status 100 is not 101 or 200-999"},
		{"1000", resp(1000, "", "", ""), "RESPONSE status 1000 is not 101 or 200-999"},
		{"reason past the frame", append(append([]byte{200, 0, 0, 0, 0, 0, 0, 0, 9, 0}, "OK"...), 0, 0, 0, 0), "RESPONSE reason length 9 runs past the frame"},
		{"CR in reason", resp(200, "O\rK", "", ""), "RESPONSE reason holds a control character"},
		{"DEL in reason", resp(200, "O\x7fK", "", ""), "RESPONSE reason holds a control character"},
		{"HTAB in reason", resp(200, "O\tK", "", ""), ""},
		{"block past the frame", append([]byte{200, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 5, 0, 0, 0, 'a'), "RESPONSE header block length 5 runs past the frame"},
		{"block without CRLF", resp(200, "OK", "A: b", ""), `RESPONSE header block does not hold whole "Name: value\r\n" lines`},
		{"block starting with CRLF", resp(200, "OK", "\r\nA: b\r\n", ""), `RESPONSE header block does not hold whole "Name: value\r\n" lines`},
		{"block of 3", resp(200, "OK", "a\r\n", ""), `RESPONSE header block does not hold whole "Name: value\r\n" lines`},
	}
	for _, c := range cases {
		err := CheckResponse(c.payload)
		if got := reason(err); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	info := func(status uint16, body string) []byte {
		b := resp(status, "Early Hints", "Link: </a>\r\n", body)
		return b
	}
	for _, c := range []struct {
		payload []byte
		want    string
	}{
		{info(103, ""), ""},
		{info(102, ""), ""},
		{info(101, ""), "INFO status 101 is not 102-199"},
		{info(200, ""), "INFO status 200 is not 102-199"},
		{info(103, "x"), "INFO carries a body"},
		{resp(103, "A\nB", "", ""), "INFO reason holds a control character"},
		{cut[:5], "INFO payload of 5 bytes is shorter than its 14 fixed bytes"},
	} {
		if got := reason(CheckInfo(c.payload)); got != c.want {
			t.Errorf("INFO: %q, want %q", got, c.want)
		}
	}
}

func reason(err error) string {
	if err == nil {
		return ""
	}
	var pe *ProtocolError
	if !errors.As(err, &pe) {
		return "not a ProtocolError: " + err.Error()
	}
	return pe.Reason
}

func TestWhatTheHubRefusesFromAWorker(t *testing.T) {
	ok := []Frame{
		{Type: TypeAck, Payload: []byte{1, 0, 0, 0}}, {Type: TypeRead, Payload: []byte{0, 0, 0, 0}},
		{Type: TypeResBody, Payload: []byte{0}}, {Type: TypeContinue}, {Type: TypeCancel}, {Type: TypeDetach}, {Type: TypeConnEnd},
		{Type: TypeConnFin}, {Type: TypeConnWrite, Payload: []byte("x")}, {Type: TypeConnDestroy}, {Type: TypeConnIdle, Payload: []byte{1}},
		{Type: TypeHello, Payload: append([]byte{Version}, `{"pid":1}`...)}, {Type: TypeResponse, Payload: resp(204, "No Content", "", "")},
	}
	for _, f := range ok {
		if err := CheckFromWorker(f); err != nil {
			t.Errorf("%v refused: %v", f.Type, err)
		}
	}
	bad := []struct {
		f    Frame
		want string
	}{
		{Frame{Type: TypeAck, Payload: []byte{1, 0, 0}}, "ACK without its u32"},
		{Frame{Type: TypeRead}, "READ without its u32"},
		{Frame{Type: TypeResBody}, "RES_BODY without its flags byte"},
		{Frame{Type: TypeHello, Payload: []byte{Version, '{'}}, "a control frame is not valid JSON"},
		{Frame{Type: TypeHello}, "a control frame is not valid JSON"},
		{Frame{Type: TypeRequest}, "unknown frame type 4"},
		{Frame{Type: TypeWindow}, "unknown frame type 12"},
		{Frame{Type: 0}, "unknown frame type 0"},
		{Frame{Type: TypeConnOpen}, "unknown frame type 22"},
		{Frame{Type: TypeConnIdle}, "CONN_IDLE payload of 0 bytes is not 1"},
		{Frame{Type: TypeResponse, Payload: resp(199, "", "", "")}, "RESPONSE status 199 is not 101 or 200-999"},
		{Frame{Type: TypeInfo, Payload: resp(200, "", "", "")}, "INFO status 200 is not 102-199"},
	}
	for _, c := range bad {
		if got := reason(CheckFromWorker(c.f)); got != c.want {
			t.Errorf("%v: %q, want %q", c.f.Type, got, c.want)
		}
	}
}

func TestAnAckMayNotAcknowledgeMoreThanWasSent(t *testing.T) {
	var a AckWindow
	a.Sent()
	a.Sent()
	if more, err := a.Ack(1); err != nil || more != 1 || a.InFlight() != 1 {
		t.Fatalf("ACK 1: %d %v, in flight %d", more, err, a.InFlight())
	}
	if _, err := a.Ack(3); reason(err) != "ACK 3 for 2 REQUEST frames sent" {
		t.Fatalf("ACK 3: %v", err)
	}
	// the counter wraps at 2^32: what counts is the distance from the last ACK
	b := AckWindow{sent: 1<<32 + 1, acked: 1<<32 - 1, low: 0xffffffff}
	if more, err := b.Ack(1); err != nil || more != 2 || b.InFlight() != 0 {
		t.Fatalf("ACK across the wrap: %d %v", more, err)
	}
}

func TestAFrameThatCannotBeEncodedLeavesNothingBehind(t *testing.T) {
	w := NewWriter(0)
	w.Empty(TypeAbort, 1)
	before := w.Len()
	w.BeginRequest(2, &Request{Method: "GET", URL: []byte("/")})
	w.Field([]byte("X"), bytes.Repeat([]byte("v"), MaxString+1))
	if err := w.End(); err == nil {
		t.Fatal("a header value over 65535 bytes was encoded")
	}
	if w.Len() != before {
		t.Fatalf("%d bytes queued after a refused frame, want %d", w.Len(), before)
	}
	if err := w.Response(3, &Response{Status: 200, Reason: make([]byte, MaxString+1)}); err == nil {
		t.Fatal("a reason over 65535 bytes was encoded")
	}
	if err := w.Body(4, make([]byte, MaxFrame)); err == nil {
		t.Fatal("a BODY over 64 MiB was encoded")
	}
	if w.Len() != before {
		t.Fatalf("%d bytes queued, want %d", w.Len(), before)
	}
}

// The hot path allocates nothing: frames read from whole reads, and a batch of
// REQUEST and BODY frames encoded and written (the Writer keeps its buffers).
func TestTheHotPathDoesNotAllocate(t *testing.T) {
	src := &repeater{b: requestBatch(t, 50)}
	r := NewReader(src, 64<<10)
	if n := testing.AllocsPerRun(200, func() { readBatch(t, r, 50) }); n != 0 {
		t.Errorf("reading: %v allocations per batch", n)
	}
	w := NewWriter(64 << 10)
	body := make([]byte, 8192)
	if n := testing.AllocsPerRun(200, func() { writeBatch(t, w, 50, body) }); n != 0 {
		t.Errorf("writing: %v allocations per batch", n)
	}
}

// repeater returns b whole on every read, like a socket delivering one batch per read.
type repeater struct{ b []byte }

func (r *repeater) Read(p []byte) (int, error) { return copy(p, r.b), nil }

func appendRequest(w *Writer, id uint32) {
	w.BeginRequest(id, &Request{Flags: ReqKeepAlive, VersionMajor: 1, VersionMinor: 1, Family: 4, RemotePort: 40000, LocalPort: 8080, ConnectionID: id, Method: "GET", URL: []byte("/hello"), RemoteAddress: "127.0.0.1", LocalAddress: "127.0.0.1"})
	w.Field([]byte("Host"), []byte("localhost:8080"))
	w.Field([]byte("User-Agent"), []byte("wrk"))
	w.Field([]byte("Accept"), []byte("*/*"))
	w.Field([]byte("Connection"), []byte("keep-alive"))
	w.End()
}

func requestBatch(t testing.TB, n int) []byte {
	w := NewWriter(0)
	for i := range n {
		appendRequest(w, uint32(i))
	}
	var b bytes.Buffer
	w.WriteTo(&b)
	return b.Bytes()
}

func readBatch(t testing.TB, r *Reader, n int) {
	for range n {
		f, err := r.Next()
		if err != nil || f.Type != TypeRequest {
			t.Fatalf("%v %v", f.Type, err)
		}
	}
}

func writeBatch(t testing.TB, w *Writer, n int, body []byte) {
	for i := range n {
		appendRequest(w, uint32(i))
		if i%10 == 0 {
			w.Body(uint32(i), body)
		}
	}
	if _, err := w.WriteTo(io.Discard); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkReadFrames(b *testing.B) {
	src := &repeater{b: requestBatch(b, 50)}
	r := NewReader(src, 64<<10)
	b.ReportAllocs()
	b.SetBytes(int64(len(src.b) / 50))
	for b.Loop() {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteRequests(b *testing.B) {
	w := NewWriter(64 << 10)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		appendRequest(w, uint32(i))
		if i++; i%50 == 0 {
			w.WriteTo(io.Discard)
		}
	}
}

// An upgrade's REQUEST carries the bytes read after its head after the TLS section
// (ReqHead, version 5); one whose length runs past the frame is refused.
func TestRequestHeadBytes(t *testing.T) {
	tls := AppendTLSInfo(nil, &TLSInfo{Protocol: "TLSv1.3", ServerName: "a.test"})
	w := NewWriter(256)
	w.BeginRequest(5, &Request{Flags: ReqUpgrade | ReqTLS | ReqHead, VersionMajor: 1, VersionMinor: 1, Family: 4,
		Method: "GET", URL: []byte("/ws"), TLS: tls, Head: []byte("\x81\x05hello")})
	w.Field([]byte("Upgrade"), []byte("websocket"))
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if _, err := w.WriteTo(&out); err != nil {
		t.Fatal(err)
	}
	f, _, err := Parse(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	req, err := f.Request()
	if err != nil || string(req.Head) != "\x81\x05hello" || !bytes.Equal(req.TLS, tls) || req.Fields.Len() != 1 {
		t.Fatalf("REQUEST decoded as %+v, %v", req, err)
	}
	cut := Frame{Type: TypeRequest, Payload: f.Payload[:len(f.Payload)-1]}
	if _, err := cut.Request(); reason(err) != "REQUEST payload too short for its head bytes" {
		t.Fatalf("a cut head: %v", err)
	}
	if TypeConnFin.String() != "CONN_FIN" {
		t.Fatalf("type 21 is %v", TypeConnFin)
	}
}
