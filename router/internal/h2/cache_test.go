package h2

import (
	"io"
	"net/http"
	"testing"

	"httpsys/router/internal/cache"
	"httpsys/router/internal/conn"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/wire"
)

// withCache turns the output cache on for the rig's queue.
func withCache(r *rig, _ *Server) {
	r.srv.Cache = cache.New(cache.Options{MaxSize: 1 << 20, MaxResponseSize: 1 << 16})
	r.q.Cache = r.srv.Cache.NewApp()
}

func cachedGet(t *testing.T, c *http.Client, method, url string, hdr ...string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

// A response with a time to live, sent in two RES_BODY frames, is stored; later GETs
// and a HEAD are answered from it as HEADERS (+ DATA) without reaching the worker
// (docs/output-cache.md); a request with Authorization is not.
func TestCacheOnStreams(t *testing.T) {
	r := newRig(t, func(_ *conn.Limits, _ *queue.Settings) {}, withCache)
	fw := r.worker()
	c := r.client()
	done := make(chan string, 1)
	go func() {
		_, b := cachedGet(t, c, "GET", r.url("/page"))
		done <- b
	}()
	id, _ := fw.request()
	fw.send(func(w *wire.Writer) {
		_ = w.Response(id, &wire.Response{Status: 200, Flags: wire.ResMore, CacheTTL: 60, Reason: []byte("OK"),
			HeaderBlock: []byte("Content-Type: text/plain\r\nETag: \"v1\"\r\nContent-Length: 11\r\n"), Body: []byte("hello")})
	})
	fw.resBody(id, 0, []byte(" world"))
	if b := <-done; b != "hello world" {
		t.Fatalf("first body %q", b)
	}
	for i := 0; i < 3; i++ {
		res, b := cachedGet(t, c, "GET", r.url("/page"))
		if res.StatusCode != 200 || b != "hello world" || res.Header.Get("Age") == "" || res.Header.Get("Content-Length") != "11" || res.Header.Get("Etag") != "\"v1\"" {
			t.Fatalf("hit %d: %d %q %v", i, res.StatusCode, b, res.Header)
		}
	}
	res, b := cachedGet(t, c, "HEAD", r.url("/page"))
	if res.StatusCode != 200 || b != "" || res.Header.Get("Age") == "" {
		t.Fatalf("HEAD: %d %q %v", res.StatusCode, b, res.Header)
	}
	res, b = cachedGet(t, c, "GET", r.url("/page"), "Range", "bytes=0-4")
	if res.StatusCode != 206 || b != "hello" || res.Header.Get("Content-Range") != "bytes 0-4/11" {
		t.Fatalf("range: %d %q %v", res.StatusCode, b, res.Header)
	}
	res, _ = cachedGet(t, c, "GET", r.url("/page"), "If-None-Match", "\"v1\"")
	if res.StatusCode != 304 {
		t.Fatalf("conditional: %d", res.StatusCode)
	}
	// Authorization: the worker answers, nothing is stored for it
	go func() {
		_, b := cachedGet(t, c, "GET", r.url("/page"), "Authorization", "Basic dTpw")
		done <- b
	}()
	id, _ = fw.request()
	fw.respond(id, 200, "Content-Length: 4\r\n", "mine", 0)
	if b := <-done; b != "mine" {
		t.Fatalf("with Authorization: %q", b)
	}
	s := r.q.Cache.Stats()
	if s.Stores != 1 || s.Hits != 6 || s.Entries != 1 {
		t.Fatalf("stats %+v", s)
	}
}
