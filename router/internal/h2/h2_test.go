package h2

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"httpsys/router/internal/conn"
	"httpsys/router/internal/queue"
	"httpsys/router/internal/wire"
)

// A GET over h2 reaches the app as an HTTP/2.0 request (:authority as its Host, no
// pseudo-headers, cookies joined) and its response goes back as HEADERS + DATA
// without connection-specific fields.
func TestGetRoundTrip(t *testing.T) {
	r := newRig(t, nil)
	fw := r.worker()
	c := r.client()
	type result struct {
		res  *http.Response
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("GET", r.url("/a/b?x=1"), nil)
		req.Header.Add("Cookie", "a=1")
		req.Header.Add("Cookie", "b=2")
		req.Header.Set("X-Test", "yes")
		res, err := c.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		b, err := io.ReadAll(res.Body)
		done <- result{res, string(b), err}
	}()
	id, req := fw.request()
	if req.VersionMajor != 2 || req.VersionMinor != 0 || req.Method != "GET" || string(req.URL) != "/a/b?x=1" {
		t.Fatalf("request %d.%d %s %s", req.VersionMajor, req.VersionMinor, req.Method, req.URL)
	}
	if req.Flags&wire.ReqTLS == 0 || req.Flags&wire.ReqGrantedWindow == 0 || req.Flags&wire.ReqHasBody != 0 {
		t.Fatalf("flags %b", req.Flags)
	}
	f := fields(req)
	if f[0] != [2]string{"host", "localhost:" + fmt.Sprint(r.port)} {
		t.Fatalf("first field %v, want the host from :authority", f[0])
	}
	var cookie string
	for _, kv := range f {
		if strings.HasPrefix(kv[0], ":") {
			t.Fatalf("a pseudo-header reached the app: %v", kv)
		}
		if kv[0] == "cookie" {
			if cookie != "" {
				t.Fatal("two cookie fields")
			}
			cookie = kv[1]
		}
	}
	if cookie != "a=1; b=2" {
		t.Fatalf("cookie %q", cookie)
	}
	fw.respond(id, 200, "Content-Type: text/plain\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\nSet-Cookie: a\r\nX-A: 1\r\nSet-Cookie: b\r\n", "hello", 0)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.res.StatusCode != 200 || res.body != "hello" || res.res.ProtoMajor != 2 {
		t.Fatalf("%d %q %s", res.res.StatusCode, res.body, res.res.Proto)
	}
	if res.res.Header.Get("Connection") != "" || res.res.Header.Get("Transfer-Encoding") != "" {
		t.Fatalf("connection-specific fields went out: %v", res.res.Header)
	}
	if got := res.res.Header.Values("Set-Cookie"); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("set-cookie %v", got)
	}
	if res.res.Header.Get("Date") == "" {
		t.Fatal("no date")
	}
}

// Request bodies go to the worker as BODY frames within its credit, the trailers
// with BODY_END; a large response body streams back as the client reads.
func TestBodiesBothWaysAndTrailers(t *testing.T) {
	r := newRig(t, nil)
	fw := r.worker()
	c := r.client()
	up := bytes.Repeat([]byte("u"), 200<<10)
	down := bytes.Repeat([]byte("d"), 3<<20)
	type result struct {
		body []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		req, _ := http.NewRequest("POST", r.url("/up"), io.NopCloser(bytes.NewReader(up)))
		req.ContentLength = -1
		req.Trailer = http.Header{"X-Sum": {"42"}}
		res, err := c.Do(req)
		if err != nil {
			done <- result{err: err}
			return
		}
		b, err := io.ReadAll(res.Body)
		done <- result{b, err}
	}()
	id, req := fw.request()
	if req.Flags&wire.ReqHasBody == 0 {
		t.Fatal("no body flag")
	}
	var got []byte
	var trailers [][2]string
	credit := wire.InitialBodyWindow
	resCredit := wire.GrantedWindowStart
	for {
		f := fw.next()
		if f.Type == wire.TypeWindow && f.ID == id {
			n, _ := f.U32()
			resCredit += int(n)
		}
		if f.Type == wire.TypeBody && f.ID == id {
			got = append(got, f.Payload...)
			credit -= len(f.Payload)
			if credit < 0 {
				t.Fatal("the router sent body beyond the worker's credit")
			}
			if credit == 0 {
				credit += 64 << 10
				fw.send(func(w *wire.Writer) { w.U32(wire.TypeRead, id, 64<<10) })
			}
			continue
		}
		if f.Type == wire.TypeBodyEnd && f.ID == id {
			l, _, err := f.Trailers()
			if err != nil {
				t.Fatal(err)
			}
			for n, v := range l.All() {
				trailers = append(trailers, [2]string{string(n), string(v)})
			}
			break
		}
	}
	if !bytes.Equal(got, up) {
		t.Fatalf("the app got %d bytes, want %d", len(got), len(up))
	}
	if len(trailers) != 1 || trailers[0] != [2]string{"x-sum", "42"} {
		t.Fatalf("trailers %v", trailers)
	}
	// the response: the worker honours its granted window
	fw.respond(id, 200, "", "", wire.ResMore)
	sent := 0
	credit = resCredit
	for sent < len(down) {
		for credit <= 0 {
			f := fw.next()
			if f.Type == wire.TypeWindow && f.ID == id {
				n, _ := f.U32()
				credit += int(n)
			}
		}
		n := min(credit, len(down)-sent, 32<<10)
		flags := uint8(wire.ResMore)
		if sent+n == len(down) {
			flags = 0
		}
		fw.resBody(id, flags, down[sent:sent+n])
		sent += n
		credit -= n
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if !bytes.Equal(res.body, down) {
		t.Fatalf("the client got %d bytes, want %d", len(res.body), len(down))
	}
}

// The router's own answers are the HTTP/1.1 pages, over h2: a path no prefix serves
// is routed by Host (400 Invalid Hostname), a body over the queue's limit is 413, too
// many header bytes 431; the connection stays for the next stream.
func TestLocalAnswers(t *testing.T) {
	r := newRig(t, func(l *conn.Limits, s *queue.Settings) { s.MaxBodySize = 10 })
	c := r.client()
	req, _ := http.NewRequest("GET", r.url("/"), nil)
	req.Host = "other.example:1"
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 400 || !strings.Contains(string(b), "Bad Request - Invalid Hostname") || res.Header.Get("Server") != "httpsys" {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	res, err = c.Post(r.url("/"), "text/plain", strings.NewReader("more than ten bytes"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(res.Body)
	if res.StatusCode != 413 || !strings.Contains(string(b), "HTTP Error 413.") {
		t.Fatalf("%d %s", res.StatusCode, b)
	}
	req, _ = http.NewRequest("GET", r.url("/"), nil)
	req.Header.Set("X-Big", strings.Repeat("x", 20000))
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.ReadAll(res.Body)
	if res.StatusCode != 431 {
		t.Fatalf("%d", res.StatusCode)
	}
}

// Many concurrent streams on one connection, each answered with its own body in
// several RES_BODY frames: every one arrives whole and in order.
func TestConcurrentStreams(t *testing.T) {
	r := newRig(t, nil)
	fw := r.worker()
	c := r.client()
	const n = 60
	go func() {
		for i := 0; i < n; i++ {
			id, req := fw.request()
			path := string(req.URL)
			fw.respond(id, 200, "", "", wire.ResMore)
			for k := 0; k < 3; k++ {
				flags := uint8(wire.ResMore)
				if k == 2 {
					flags = 0
				}
				fw.resBody(id, flags, []byte(path+"#"+fmt.Sprint(k)+";"))
			}
		}
	}()
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func(i int) {
			path := fmt.Sprintf("/s/%d", i)
			res, err := c.Get(r.url(path))
			if err != nil {
				errs <- err
				return
			}
			b, err := io.ReadAll(res.Body)
			if err == nil && string(b) != path+"#0;"+path+"#1;"+path+"#2;" {
				err = fmt.Errorf("%s got %q", path, b)
			}
			errs <- err
		}(i)
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// A head node's http2 would refuse (a single-value field twice) resets the stream
// (INTERNAL_ERROR), as on the JS router; the worker hears ABORT.
func TestRefusedHead(t *testing.T) {
	r := newRig(t, nil)
	fw := r.worker()
	c := r.client()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Get(r.url("/"))
		errc <- err
	}()
	id, _ := fw.request()
	fw.respond(id, 200, "Content-Type: a\r\nContent-Type: b\r\n", "x", 0)
	err := <-errc
	var se http2.StreamError
	if !errors.As(err, &se) || se.Code != http2.ErrCodeInternal {
		t.Fatalf("got %v, want an INTERNAL_ERROR stream error", err)
	}
	for {
		f := fw.next()
		if f.Type == wire.TypeAbort && f.ID == id {
			return
		}
		if f.Type == 0 {
			t.Fatal("no ABORT")
		}
	}
}

// Expect: 100-continue: the worker's first body read sends the interim 100 HEADERS
// (as HTTP.SYS sends it); a worker's CONN_END ends the connection with GOAWAY once its
// streams are done.
func TestContinueAndConnEnd(t *testing.T) {
	r := newRig(t, nil)
	fw := r.worker()
	tc, fr := r.dial()
	var blk bytes.Buffer
	enc := hpack.NewEncoder(&blk)
	for _, kv := range [][2]string{{":method", "PUT"}, {":scheme", "https"}, {":authority", "localhost:" + fmt.Sprint(r.port)}, {":path", "/up"}, {"expect", "100-continue"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk.Bytes(), EndHeaders: true})
	id, req := fw.request()
	if req.Flags&wire.ReqExpectContinue == 0 {
		t.Fatalf("flags %b", req.Flags)
	}
	fw.send(func(w *wire.Writer) { w.U32(wire.TypeRead, id, 1024) })
	dec := hpack.NewDecoder(4096, nil)
	_ = tc.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		if h, ok := f.(*http2.HeadersFrame); ok {
			hf, _ := dec.DecodeFull(h.HeaderBlockFragment())
			if len(hf) != 1 || hf[0].Name != ":status" || hf[0].Value != "100" || h.StreamEnded() {
				t.Fatalf("first HEADERS %v", hf)
			}
			break
		}
	}
	_ = fr.WriteData(1, true, []byte("body"))
	fw.send(func(w *wire.Writer) { w.Empty(wire.TypeConnEnd, req.ConnectionID) })
	time.Sleep(50 * time.Millisecond)
	fw.respond(id, 204, "", "", 0)
	var sawGoAway, sawEnd bool
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			if !sawGoAway || !sawEnd {
				t.Fatalf("closed (%v) with GOAWAY %v, the response %v", err, sawGoAway, sawEnd)
			}
			return
		}
		switch f := f.(type) {
		case *http2.GoAwayFrame:
			if f.ErrCode != http2.ErrCodeNo || f.LastStreamID != 1 {
				t.Fatalf("GOAWAY %v %d", f.ErrCode, f.LastStreamID)
			}
			sawGoAway = true
		case *http2.HeadersFrame:
			hf, _ := dec.DecodeFull(f.HeaderBlockFragment())
			sawEnd = hf[0].Value == "204" && f.StreamEnded()
		}
	}
}
