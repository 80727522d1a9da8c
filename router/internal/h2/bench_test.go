package h2

import (
	"io"
	"testing"

	"httpsys/router/internal/wire"
)

// BenchmarkGet: small GETs over one h2 connection, 32 streams at a time, through the
// router to a worker answering each at once.
func BenchmarkGet(b *testing.B) {
	r := newRig(b, nil)
	fw := r.worker()
	go func() {
		for f := range fw.frames {
			if f.Type == wire.TypeRequest {
				fw.received++
				n := fw.received
				id := f.ID
				fw.send(func(w *wire.Writer) {
					w.U32(wire.TypeAck, 0, n)
					_ = w.Response(id, &wire.Response{Status: 200, Reason: []byte("OK"), HeaderBlock: []byte("Content-Length: 5\r\n"), Body: []byte("hello")})
				})
			}
		}
	}()
	c := r.client()
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := c.Get(r.url("/b"))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
		}
	})
}

// BenchmarkCacheHit: BenchmarkGet's GETs answered from the output cache (the worker
// answers the first only).
func BenchmarkCacheHit(b *testing.B) {
	r := newRig(b, nil, withCache)
	fw := r.worker()
	go func() {
		for f := range fw.frames {
			if f.Type == wire.TypeRequest {
				fw.received++
				n := fw.received
				id := f.ID
				fw.send(func(w *wire.Writer) {
					w.U32(wire.TypeAck, 0, n)
					_ = w.Response(id, &wire.Response{Status: 200, CacheTTL: 60, Reason: []byte("OK"), HeaderBlock: []byte("Content-Length: 5\r\n"), Body: []byte("hello")})
				})
			}
		}
	}()
	c := r.client()
	res, err := c.Get(r.url("/b"))
	if err != nil {
		b.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	b.SetParallelism(32)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := c.Get(r.url("/b"))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, res.Body)
			_ = res.Body.Close()
		}
	})
	b.StopTimer()
	if s := r.q.Cache.Stats(); s.Stores != 1 {
		b.Fatalf("stats %+v", s)
	}
}
