package h2

import (
	"bytes"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// FuzzConn feeds arbitrary frames (after the preface) to a connection: whatever the
// client sends, the router neither panics nor keeps the connection's goroutines once
// the client is gone (its streams answered by a worker).
func FuzzConn(f *testing.F) {
	var seed bytes.Buffer
	fr := http2.NewFramer(&seed, nil)
	_ = fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 10})
	var blk bytes.Buffer
	enc := hpack.NewEncoder(&blk)
	for _, kv := range [][2]string{{":method", "POST"}, {":scheme", "https"}, {":authority", "localhost"}, {":path", "/x"}, {"content-length", "3"}, {"cookie", "a"}, {"cookie", "b"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk.Bytes()[:5], EndHeaders: false})
	_ = fr.WriteContinuation(1, true, blk.Bytes()[5:])
	_ = fr.WriteData(1, false, []byte("ab"))
	_ = fr.WriteWindowUpdate(0, 100)
	_ = fr.WritePing(false, [8]byte{})
	_ = fr.WriteData(1, true, []byte("c"))
	_ = fr.WriteRSTStream(1, http2.ErrCodeCancel)
	_ = fr.WriteGoAway(1, http2.ErrCodeNo, nil)
	f.Add(seed.Bytes())
	f.Add(seed.Bytes()[:20])
	r := newRig(f, nil)
	r.streamer(20000) // every stream that reaches the queue is answered
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := net.Pipe()
		done := make(chan struct{})
		r.h.Serve(a, r.port, false, func() { close(done) })
		go func() {
			// the router's writes are read and dropped
			buf := make([]byte, 4096)
			for {
				if _, err := b.Read(buf); err != nil {
					return
				}
			}
		}()
		_ = b.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = b.Write([]byte(http2.ClientPreface))
		_, _ = b.Write(data)
		_ = b.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("the connection outlived its client")
		}
	})
}
