package hub

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"httpsys/router/internal/cache"
	"httpsys/router/internal/wire"
)

// respondCacheable answers id with a response the worker gave a time to live.
func (fw *fakeWorker) respondCacheable(id uint32, body string) {
	fw.send(func(w *wire.Writer) {
		_ = w.Response(id, &wire.Response{
			Status: 200, Reason: []byte("OK"), CacheTTL: 60,
			HeaderBlock: []byte("Cache-Control: public, max-age=60\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"), Body: []byte(body),
		})
	})
}

// cacheStats is queue app's `cache` in queueStats.
func cacheStats(t *testing.T, h *Hub) cache.Stats {
	t.Helper()
	s, err := h.QueueStats("app")
	if err != nil {
		t.Fatal(err)
	}
	cs, ok := s.Cache.(*cache.Stats)
	if !ok {
		t.Fatalf("cache stats %#v", s.Cache)
	}
	return *cs
}

// noRequest: no REQUEST reaches the worker within a short while.
func (fw *fakeWorker) noRequest() {
	fw.t.Helper()
	deadline := time.After(200 * time.Millisecond)
	for {
		select {
		case f := <-fw.frames:
			if f.Type == wire.TypeRequest {
				fw.t.Fatalf("a REQUEST reached the worker: %q", f.Payload)
			}
		case <-deadline:
			return
		}
	}
}

// get sends GET target on a new connection; the worker answers it if fw is not nil.
func get(t *testing.T, port int, target string, fw *fakeWorker, body string) string {
	t.Helper()
	done := make(chan string)
	go func() {
		res, _, _ := exchange(t, port, "GET "+target+" HTTP/1.1\r\nHost: x\r\n\r\n")
		done <- res
	}()
	if fw != nil {
		id, _ := fw.nextRequest(true)
		fw.respondCacheable(id, body)
	}
	select {
	case res := <-done:
		return res
	case <-time.After(5 * time.Second):
		t.Fatal("no answer in 5 s")
	}
	return ""
}

func TestTheOutputCacheAnswersBeforeTheQueueAndEmptiesWhenAnInstanceAttaches(t *testing.T) {
	h, _ := startHub(t, false, nil)
	port := createQueue(t, h, "app", "")
	fw, _ := attachWorker(t, h, map[string]any{"queue": "app"})
	if res := get(t, port, "/x", fw, "v1"); !strings.HasSuffix(res, "\r\n\r\nv1") || strings.Contains(res, "Age:") {
		t.Fatalf("first answer %q", res)
	}
	res := get(t, port, "/x", nil, "")
	if !strings.HasPrefix(res, "HTTP/1.1 200 OK\r\nCache-Control: public, max-age=60\r\nContent-Length: 2\r\nAge: 0\r\n\r\nv1") {
		t.Fatalf("cached answer %q", res)
	}
	fw.noRequest()
	st := cacheStats(t, h)
	if st.Hits != 1 || st.Misses != 1 || st.Stores != 1 || st.Entries != 1 {
		t.Fatalf("stats %+v", st)
	}
	// a second instance: the entry goes (a new build is never answered by the old one's)
	attachWorker(t, h, map[string]any{"queue": "app"})
	if st := cacheStats(t, h); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("after an attach: %+v", st)
	}
}

func TestCacheOffForAQueueOrTheRouter(t *testing.T) {
	h, _ := startHub(t, false, nil)
	off := false
	if _, err := h.CreateQueue("off", QueueOptions{URLs: []string{"http://127.0.0.1:0/"}, Cache: &off}); err != nil {
		t.Fatal(err)
	}
	if s, _ := h.QueueStats("off"); s.Cache != nil {
		t.Errorf("cache: false: stats %v", s.Cache)
	}
	h2, _ := startHub(t, false, func(l *Limits) { l.CacheSize = 0 })
	port := createQueue(t, h2, "app", "")
	fw, _ := attachWorker(t, h2, map[string]any{"queue": "app"})
	get(t, port, "/x", fw, "v1")
	get(t, port, "/x", fw, "v2") // reached the worker again
	if s, _ := h2.QueueStats("app"); s.Cache != nil {
		t.Errorf("cacheSize 0: stats %v", s.Cache)
	}
}
