package wire

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"
)

// FuzzDecode: any bytes, split into frames and decoded as every type, never panic;
// the Reader, whatever its reads and buffer size, sees the frames Parse sees and the
// same verdict; a frame that decodes re-encodes to one that decodes to the same thing.
func FuzzDecode(f *testing.F) {
	f.Add(batch(f), uint64(1))
	f.Add(requestBatch(f, 3), uint64(2))
	f.Add([]byte{5, 0, 0, 0, 10, 1, 0, 0, 0}, uint64(3))
	f.Add(resp(200, "OK", "A: b\r\n", "x"), uint64(4))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		var want []Frame
		var verdict error
		for rest := b; ; {
			fr, n, err := Parse(rest)
			if err != nil {
				verdict = err
				break
			}
			if n == 0 {
				if len(rest) > 0 {
					verdict = io.ErrUnexpectedEOF
				}
				break
			}
			want = append(want, fr)
			rest = rest[n:]
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		r := NewReader(&chunky{b: b, rng: rng, max: 1 + rng.IntN(200)}, HeaderSize+1+rng.IntN(300))
		// Next, then what NextBuffered has: the views of one batch must all hold
		// their frames until the next Next
		i := 0
		for {
			fr, err := r.Next()
			batch := []Frame{}
			for err == nil {
				batch = append(batch, fr)
				var ok bool
				if fr, ok, err = r.NextBuffered(); !ok && err == nil {
					break
				}
			}
			for _, fr := range batch {
				if i >= len(want) || fr.Type != want[i].Type || fr.ID != want[i].ID || !bytes.Equal(fr.Payload, want[i].Payload) {
					t.Fatalf("frame %d differs from Parse's", i)
				}
				i++
			}
			if err != nil {
				if i != len(want) {
					t.Fatalf("Reader stopped after %d frames, Parse found %d: %v", i, len(want), err)
				}
				var pe *ProtocolError
				if verdict == nil && err != io.EOF || verdict == io.ErrUnexpectedEOF && err != io.ErrUnexpectedEOF || errors.As(verdict, &pe) && err.Error() != verdict.Error() {
					t.Fatalf("Reader ended with %v, Parse with %v", err, verdict)
				}
				break
			}
		}
		for _, fr := range want {
			_ = CheckFromWorker(fr)
			for ty := Type(0); ty <= 21; ty++ {
				fr.Type = ty
				roundTrip(t, fr)
			}
		}
	})
}

// roundTrip decodes fr as its type, encodes what it got and decodes that again.
func roundTrip(t *testing.T, fr Frame) {
	w := NewWriter(0)
	var first any
	switch fr.Type {
	case TypeRequest:
		req, err := fr.Request()
		if err != nil {
			return
		}
		w.BeginRequest(fr.ID, &req)
		for name, value := range req.Fields.All() {
			w.Field(name, value)
		}
		if err := w.End(); err != nil {
			t.Fatalf("a decoded REQUEST does not encode: %v", err)
		}
		first = requestKey(req)
	case TypeBodyEnd:
		l, _, err := fr.Trailers()
		if err != nil {
			return
		}
		w.BeginBodyEnd(fr.ID)
		for name, value := range l.All() {
			w.Field(name, value)
		}
		w.End()
		first = fieldsKey(l)
	case TypeResponse, TypeInfo:
		res, err := fr.Response()
		if err != nil {
			return
		}
		if fr.Type == TypeInfo {
			res.Body = nil
			w.Info(fr.ID, &res)
		} else {
			w.Response(fr.ID, &res)
		}
		first = res
	case TypeAck, TypeRead, TypeWindow:
		v, err := fr.U32()
		if err != nil {
			return
		}
		w.U32(fr.Type, fr.ID, v)
		first = v
	case TypeHello, TypeHelloOK, TypeHelloErr, TypeClose:
		_, js, err := fr.JSON()
		if err != nil {
			return
		}
		w.JSON(fr.Type, fr.ID, js)
		first = string(js)
	default:
		return
	}
	var out bytes.Buffer
	w.WriteTo(&out)
	again, n, err := Parse(out.Bytes())
	if err != nil || n != out.Len() || again.Type != fr.Type || again.ID != fr.ID {
		t.Fatalf("%v re-encoded into a frame Parse reads as %v (%d of %d bytes), %v", fr.Type, again.Type, n, out.Len(), err)
	}
	var second any
	switch fr.Type {
	case TypeRequest:
		req, err := again.Request()
		if err != nil {
			t.Fatalf("re-encoded REQUEST: %v", err)
		}
		second = requestKey(req)
	case TypeBodyEnd:
		l, _, err := again.Trailers()
		if err != nil {
			t.Fatalf("re-encoded BODY_END: %v", err)
		}
		second = fieldsKey(l)
	case TypeResponse, TypeInfo:
		res, err := again.Response()
		if err != nil {
			t.Fatalf("re-encoded %v: %v", fr.Type, err)
		}
		second = res
	case TypeAck, TypeRead, TypeWindow:
		second, _ = again.U32()
	default:
		_, js, _ := again.JSON()
		second = string(js)
	}
	if fr.Type == TypeResponse || fr.Type == TypeInfo {
		a, b := first.(Response), second.(Response)
		if a.Status != b.Status || a.Flags != b.Flags || a.CacheTTL != b.CacheTTL || !bytes.Equal(a.Reason, b.Reason) || !bytes.Equal(a.HeaderBlock, b.HeaderBlock) || !bytes.Equal(a.Body, b.Body) {
			t.Fatalf("%v changed in a round trip: %+v, then %+v", fr.Type, a, b)
		}
		return
	}
	if !reflect.DeepEqual(first, second) {
		t.Fatalf("%v changed in a round trip: %v, then %v", fr.Type, first, second)
	}
}

// requestKey and fieldsKey flatten decoded frames for comparison.
func requestKey(r Request) string {
	var b bytes.Buffer
	b.Write([]byte{r.Flags, r.VersionMajor, r.VersionMinor, r.Family, byte(r.RemotePort), byte(r.RemotePort >> 8), byte(r.LocalPort), byte(r.LocalPort >> 8),
		byte(r.ConnectionID), byte(r.ConnectionID >> 8), byte(r.ConnectionID >> 16), byte(r.ConnectionID >> 24)})
	b.WriteString(r.Method + "\x00" + string(r.URL) + "\x00" + r.RemoteAddress + "\x00" + r.LocalAddress + "\x00")
	b.WriteString(fieldsKey(r.Fields))
	b.Write(r.TLS)
	return b.String()
}

// An empty trailer list is encoded as no trailers (the JS encoder does the same), so
// "none" and "zero pairs" compare equal.
func fieldsKey(l FieldList) string {
	var b bytes.Buffer
	for name, value := range l.All() {
		b.WriteString("+" + string(name) + "\x00" + string(value) + "\x00")
	}
	return b.String()
}
