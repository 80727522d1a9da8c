package h2

import (
	"bytes"
	"context"
	"io"
	"math/rand"
	"net/http"
	"sync"
	"testing"
	"time"

	"httpsys/router/internal/wire"
)

// Streams with bodies both ways, some cancelled by the client at random and some by
// the worker: every request ends (answered or failed), and the router's connection
// count goes back to 0 once the client closes.
func TestChaos(t *testing.T) {
	r := newRig(t, nil)
	fw := r.worker()
	type st struct {
		credit, sent, size int
		cancel, started    bool
	}
	go func() {
		rng := rand.New(rand.NewSource(1))
		reqs := map[uint32]*st{}
		push := func(id uint32, s *st) {
			for s.credit > 0 && s.sent < s.size {
				n := min(s.credit, s.size-s.sent, 20000)
				flags := uint8(wire.ResMore)
				if s.sent+n == s.size {
					flags = 0
				}
				fw.resBody(id, flags, make([]byte, n))
				s.sent += n
				s.credit -= n
			}
			if s.sent == s.size {
				delete(reqs, id)
			}
		}
		for f := range fw.frames {
			switch f.Type {
			case wire.TypeRequest:
				fw.received++
				n := fw.received
				fw.send(func(w *wire.Writer) { w.U32(wire.TypeAck, 0, n) })
				s := &st{credit: wire.GrantedWindowStart, size: rng.Intn(400000), cancel: rng.Intn(10) == 0}
				reqs[f.ID] = s
			case wire.TypeBody:
				id := f.ID
				n := len(f.Payload)
				fw.send(func(w *wire.Writer) { w.U32(wire.TypeRead, id, uint32(n)) })
			case wire.TypeBodyEnd:
				s := reqs[f.ID]
				if s == nil {
					continue
				}
				if s.cancel {
					id := f.ID
					fw.send(func(w *wire.Writer) { w.Empty(wire.TypeCancel, id) })
					delete(reqs, id)
					continue
				}
				fw.respond(f.ID, 200, "", "", wire.ResMore)
				s.started = true
				push(f.ID, s)
			case wire.TypeWindow:
				if s := reqs[f.ID]; s != nil {
					n, _ := f.U32()
					s.credit += int(n)
					if s.started {
						push(f.ID, s)
					}
				}
			case wire.TypeAbort:
				delete(reqs, f.ID)
			}
		}
	}()
	c := r.client()
	var wg sync.WaitGroup
	for i := 0; i < 150; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(i)))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if rng.Intn(5) == 0 {
				after := time.Duration(rng.Intn(50)) * time.Millisecond
				go func() {
					time.Sleep(after)
					cancel()
				}()
			}
			req, _ := http.NewRequestWithContext(ctx, "POST", r.url("/c"), bytes.NewReader(make([]byte, rng.Intn(300000))))
			start := time.Now()
			res, err := c.Do(req)
			if err != nil {
				if time.Since(start) > 5*time.Second {
					t.Errorf("request %d failed after %v: %v", i, time.Since(start), err)
				}
				return
			}
			_, err = io.Copy(io.Discard, res.Body)
			if err != nil && time.Since(start) > 5*time.Second {
				t.Errorf("request %d body failed after %v: %v", i, time.Since(start), err)
			}
			_ = res.Body.Close()
		}(i)
	}
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(60 * time.Second):
		t.Fatal("requests still in flight after 60 s")
	}
	c.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for r.srv.Count() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections left", r.srv.Count())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
