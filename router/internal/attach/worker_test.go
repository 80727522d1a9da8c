package attach

import (
	"net"
	"sync"
	"testing"
	"time"

	"httpsys/router/internal/logger"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/wire"
)

type fakeHub struct {
	q       *queue.Queue
	mu      sync.Mutex
	detach  []string
	closed  chan struct{}
	hellos  int
	refused error
	ready   []bool // at each Attached: whether the worker could take a request
}

func (h *fakeHub) Hello(w *Worker, _ *Hello) (*queue.Queue, Welcome, error) {
	h.mu.Lock()
	h.hellos++
	h.mu.Unlock()
	if h.refused != nil {
		return nil, Welcome{}, h.refused
	}
	return h.q, Welcome{Queue: h.q.Name, URLs: []string{}, Ports: []int{}}, nil
}
func (h *fakeHub) Attached(w *Worker) {
	h.mu.Lock()
	h.ready = append(h.ready, w.CanTake())
	h.mu.Unlock()
}
func (h *fakeHub) Detached(_ *Worker, reason string) {
	h.mu.Lock()
	h.detach = append(h.detach, reason)
	h.mu.Unlock()
}
func (h *fakeHub) Closed(*Worker)                { close(h.closed) }
func (h *fakeHub) EndConnection(*Worker, uint32) {}

// run feeds frames to a Worker over a pipe; leave: the worker's side then closes its
// end (else the router must drop it).
func run(t *testing.T, leave bool, frames func(w *wire.Writer)) (*fakeHub, []wire.Frame) {
	t.Helper()
	a, b := net.Pipe()
	h := &fakeHub{q: queue.New("q", queue.Settings{Length: 10}), closed: make(chan struct{})}
	w := New(1, a, h, logger.Discard())
	go w.Serve()
	var got []wire.Frame
	done := make(chan struct{})
	go func() {
		r := wire.NewReader(b, 4096)
		for {
			f, err := r.Next()
			if err != nil {
				close(done)
				return
			}
			f.Payload = append([]byte(nil), f.Payload...)
			got = append(got, f)
		}
	}()
	wr := wire.NewWriter(256)
	frames(wr)
	_, _ = wr.WriteTo(b)
	if leave {
		time.Sleep(50 * time.Millisecond)
		_ = b.Close()
	}
	select {
	case <-h.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the worker was not dropped")
	}
	_ = b.Close()
	<-done
	return h, got
}

func hello(w *wire.Writer) { _ = w.JSON(wire.TypeHello, 0, []byte(`{"queue":"q","pid":1}`)) }

func TestAWorkerThatBreaksTheProtocolIsDropped(t *testing.T) {
	cases := map[string]func(w *wire.Writer){
		"a second HELLO": func(w *wire.Writer) { hello(w); hello(w) },
		"an ACK beyond what was sent": func(w *wire.Writer) {
			hello(w)
			w.U32(wire.TypeAck, 0, 1)
		},
		"a RESPONSE with status 99": func(w *wire.Writer) {
			hello(w)
			_ = w.Response(7, &wire.Response{Status: 99})
		},
		"a frame type no worker sends": func(w *wire.Writer) {
			hello(w)
			w.Empty(wire.TypeAbort, 0)
		},
	}
	for name, frames := range cases {
		t.Run(name, func(t *testing.T) {
			h, _ := run(t, false, frames)
			h.mu.Lock()
			defer h.mu.Unlock()
			if len(h.detach) != 1 || h.detach[0] != "protocol" {
				t.Fatalf("detach reasons %v, want [protocol]", h.detach)
			}
		})
	}
}

func TestAFrameForAnIdNotInFlightIsIgnored(t *testing.T) {
	h, got := run(t, true, func(w *wire.Writer) {
		hello(w)
		w.U32(wire.TypeAck, 0, 0)
		_ = w.Response(12345, &wire.Response{Status: 200, Reason: []byte("OK")})
		w.U32(wire.TypeRead, 12345, 10)
		w.Empty(wire.TypeCancel, 12345)
		w.Empty(wire.TypeDetach, 0)
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	// still attached when it detached: no protocol error came first
	if len(h.detach) != 1 || h.detach[0] != "detach" {
		t.Fatalf("detach reasons %v, want [detach]", h.detach)
	}
	if len(got) != 2 || got[0].Type != wire.TypeHelloOK || got[1].Type != wire.TypeDetachOK {
		t.Fatalf("frames %v, want HELLO_OK, DETACH_OK", got)
	}
}

// The supervisor counts an instance ready at the attach event and sends it requests
// then (a rolling reload, a client right after `httpsys start`): a worker that said
// HELLO but has not acknowledged HELLO_OK yet takes none, so the event waits for its
// first ACK (docs/router-control.md "Events").
func TestTheAttachEventFollowsTheFirstAck(t *testing.T) {
	h, _ := run(t, true, func(w *wire.Writer) { hello(w) })
	h.mu.Lock()
	if len(h.ready) != 0 {
		t.Fatalf("attach events before the first ACK: %v", h.ready)
	}
	h.mu.Unlock()
	h, _ = run(t, true, func(w *wire.Writer) {
		hello(w)
		w.U32(wire.TypeAck, 0, 0)
		w.U32(wire.TypeAck, 0, 0)
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.ready) != 1 || !h.ready[0] {
		t.Fatalf("attach events %v, want one, with the worker taking requests", h.ready)
	}
}
