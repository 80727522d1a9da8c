package h2

import (
	"bytes"
	"io"
	"testing"

	"httpsys/router/internal/wire"
)

// A stream whose worker died before acknowledging it goes to the next worker with its
// whole body: the bytes the dead one got come first (internal/upload's replay).
func TestBodyReplayedAfterRequeue(t *testing.T) {
	r := newRig(t, nil)
	w1 := r.worker()
	c := r.client()
	up := bytes.Repeat([]byte("0123456789abcdef"), 8<<10) // 128 KiB: beyond the first credit
	done := make(chan string, 1)
	go func() {
		res, err := c.Post(r.url("/upload"), "application/octet-stream", bytes.NewReader(up))
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(res.Body)
		done <- string(b)
	}()
	// the first worker takes the REQUEST and body bytes, never acknowledges, and dies
	seen := 0
	for seen < wire.InitialBodyWindow {
		f := w1.next()
		if f.Type == wire.TypeBody {
			seen += len(f.Payload)
		}
	}
	_ = w1.nc.Close()
	w2 := r.worker()
	id, _ := w2.request()
	var got []byte
	credit := wire.InitialBodyWindow
	for {
		f := w2.next()
		if f.Type == wire.TypeBody && f.ID == id {
			got = append(got, f.Payload...)
			if credit -= len(f.Payload); credit == 0 {
				credit = 32 << 10
				w2.send(func(w *wire.Writer) { w.U32(wire.TypeRead, id, 32<<10) })
			}
			continue
		}
		if f.Type == wire.TypeBodyEnd && f.ID == id {
			break
		}
	}
	if !bytes.Equal(got, up) {
		t.Fatalf("the second worker got %d bytes, want %d (in order)", len(got), len(up))
	}
	w2.respond(id, 200, "Content-Length: 2\r\n", "ok", 0)
	if b := <-done; b != "ok" {
		t.Fatalf("response %q", b)
	}
}
