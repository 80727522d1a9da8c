package conn_test

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"httpsys/router/internal/wire"
)

// connWrite is a worker's CONN_WRITE frame (a 'clientError' listener's bytes).
func connWrite(id uint32, b string) []byte {
	f := binary.LittleEndian.AppendUint32(nil, uint32(5+len(b)))
	f = append(f, byte(wire.TypeConnWrite))
	f = binary.LittleEndian.AppendUint32(f, id)
	return append(f, b...)
}

// nextConnError is the CONN_ERROR the worker gets, with no REQUEST before it.
func nextConnError(t *testing.T, w *fakeWorker) wire.Frame {
	t.Helper()
	for {
		select {
		case f, ok := <-w.frames:
			if !ok {
				t.Fatal("the router closed the worker's connection before a CONN_ERROR")
			}
			switch f.Type {
			case wire.TypeConnError:
				return f
			case wire.TypeRequest:
				t.Fatal("a REQUEST after the body error")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no CONN_ERROR from the router in 10 s")
		}
	}
}

// A body error on a port a standalone server owns is the worker's 'clientError', after
// the request's REQUEST: the router answers nothing itself, and what the listener
// writes is what the client gets, then the close (its socket.destroy()); the request
// is aborted.
func TestABodyErrorOnAnOwnedPortIsTheWorkersClientErrorAfterItsRequest(t *testing.T) {
	r := newRig(t, true, 30000)
	w := r.attach(t)
	c := dialClient(t, r.port, smuggle)
	f := firstRequest(t, w)
	e := nextConnError(t, w)
	if status, reason, _, ok := e.ConnError(); !ok || status != 400 || len(reason) == 0 {
		t.Fatalf("CONN_ERROR %d %q", status, reason)
	}
	silent(t, c, 200*time.Millisecond)
	w.ack(nil)
	if _, err := w.nc.Write(connWrite(e.ID, "HTTP/1.1 400 Mine\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	w.send(func(ww *wire.Writer) { ww.Empty(wire.TypeConnDestroy, e.ID) })
	if got := readToClose(t, c, 10*time.Second); got != "HTTP/1.1 400 Mine\r\n\r\n" {
		t.Fatalf("the client got %q", got)
	}
	if a := w.next(wire.TypeAbort); a.ID != f.ID {
		t.Fatalf("ABORT for %d, the request was %d", a.ID, f.ID)
	}
	w.noRequest(200 * time.Millisecond)
}

// A request that waited for its standalone server (still attaching) when its body
// turned out malformed: the error follows its REQUEST once dispatched, and the app's
// answer in its handler goes out before the worker's destroy, no 400.
func TestABodyErrorOfARequestWaitingForItsStandaloneServerFollowsItsRequest(t *testing.T) {
	r := newRig(t, true, 30000)
	c := dialClient(t, r.port, smuggle)
	silent(t, c, 300*time.Millisecond)
	w := r.attach(t)
	f := firstRequest(t, w)
	e := nextConnError(t, w)
	w.ack(func(ww *wire.Writer) {
		helloWorld(f.ID)(ww)
		ww.Empty(wire.TypeConnDestroy, e.ID)
	})
	got := readToClose(t, c, 10*time.Second)
	if !strings.HasPrefix(got, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(got, "\r\n\r\nhello world") {
		t.Fatalf("the client got %q", got)
	}
	w.noRequest(200 * time.Millisecond)
}
