package h2

import (
	"bytes"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"httpsys/router/internal/conn"
	"httpsys/router/internal/queue"
)

// exchange sends one request's header block (and END_STREAM) on a raw connection and
// returns the status and body of its answer, or the RST_STREAM code.
func (r *rig) exchange(t *testing.T, fields [][2]string) (status, body string, reset http2.ErrCode) {
	t.Helper()
	tc, fr := r.dial()
	var blk bytes.Buffer
	enc := hpack.NewEncoder(&blk)
	for _, kv := range fields {
		_ = enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk.Bytes(), EndStream: true, EndHeaders: true})
	dec := hpack.NewDecoder(4096, nil)
	_ = tc.SetReadDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			t.Fatal(err)
		}
		switch f := f.(type) {
		case *http2.HeadersFrame:
			hf, _ := dec.DecodeFull(f.HeaderBlockFragment())
			status = hf[0].Value
			if f.StreamEnded() {
				return status, "", 0
			}
		case *http2.DataFrame:
			b.Write(f.Data())
			if f.StreamEnded() {
				return status, b.String(), 0
			}
		case *http2.RSTStreamFrame:
			return status, b.String(), f.ErrCode
		case *http2.GoAwayFrame:
			t.Fatalf("GOAWAY %v", f.ErrCode)
		}
	}
}

// The router's rules on an h2 request: 400 with
// the router's page for what an app must not see, PROTOCOL_ERROR for a malformed block
// (RFC 9113 8.2, 8.3), as node's nghttp2 resets it.
func TestRequestRules(t *testing.T) {
	r := newRig(t, nil)
	auth := "localhost:" + fmt.Sprint(r.port)
	base := func(extra ...[2]string) [][2]string {
		return append([][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", auth}, {":path", "/"}}, extra...)
	}
	cases := []struct {
		name   string
		fields [][2]string
		status string
		page   string
		reset  http2.ErrCode
	}{
		{"unknown method", [][2]string{{":method", "FOO"}, {":scheme", "https"}, {":authority", auth}, {":path", "/"}}, "400", "<title>Bad Request</title>", 0},
		{"a method in lower case", [][2]string{{":method", "get"}, {":scheme", "https"}, {":authority", auth}, {":path", "/"}}, "400", "<title>Bad Request</title>", 0},
		{"a method that is no token", [][2]string{{":method", "G(T"}, {":scheme", "https"}, {":authority", auth}, {":path", "/"}}, "", "", http2.ErrCodeProtocol},
		{"Host differs from :authority", base([2]string{"host", "other"}), "400", "<title>Bad Request</title>", 0},
		{"two Host fields", [][2]string{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}, {"host", "a"}, {"host", "b"}}, "400", "<title>Bad Request</title>", 0},
		{"an authority with @", append(base()[:2:2], [2]string{":authority", "a@b"}, [2]string{":path", "/"}), "400", "Invalid Hostname", 0},
		{"an authority with a space", append(base()[:2:2], [2]string{":authority", "a b"}, [2]string{":path", "/"}), "", "", http2.ErrCodeProtocol},
		{"content-length not digits", base([2]string{"content-length", "1x"}), "", "", http2.ErrCodeProtocol},
		{"content-length twice", base([2]string{"content-length", "0"}, [2]string{"content-length", "0"}), "", "", http2.ErrCodeProtocol},
		{"no authority", [][2]string{{":method", "GET"}, {":scheme", "https"}, {":path", "/"}}, "", "", http2.ErrCodeProtocol},
		{"no :path", base()[:3:3], "", "", http2.ErrCodeProtocol},
		{"a :path with a space", append(base()[:3:3], [2]string{":path", "/a b"}), "", "", http2.ErrCodeProtocol},
		{"a :path not from /", append(base()[:3:3], [2]string{":path", "x"}), "", "", http2.ErrCodeProtocol},
		{"a :path with obs-text", append(base()[:3:3], [2]string{":path", "/\xe9"}), "400", "Invalid URL", 0},
		{"CONNECT", [][2]string{{":method", "CONNECT"}, {":authority", auth}}, "400", "<title>Bad Request</title>", 0},
		{"an upper-case name", base([2]string{"X-A", "1"}), "", "", http2.ErrCodeProtocol},
		{"a connection header", base([2]string{"connection", "close"}), "", "", http2.ErrCodeProtocol},
		{"te: gzip", base([2]string{"te", "gzip"}), "", "", http2.ErrCodeProtocol},
		{"a pseudo-header after a field", append(base([2]string{"a", "1"}), [2]string{":x", "1"}), "", "", http2.ErrCodeProtocol},
		{":protocol", base([2]string{":protocol", "websocket"}), "", "", http2.ErrCodeProtocol},
		{"no :scheme", [][2]string{{":method", "GET"}, {":authority", auth}, {":path", "/"}}, "", "", http2.ErrCodeProtocol},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body, reset := r.exchange(t, tc.fields)
			if reset != tc.reset || status != tc.status || !strings.Contains(body, tc.page) {
				t.Fatalf("got %q %v %q, want %q %v %q", status, reset, body, tc.status, tc.reset, tc.page)
			}
		})
	}
}

// A stream whose host has another certificate entry than the handshake's is answered
// 421 (the TLS side's Misdirected says so); the connection serves on.
func TestMisdirected(t *testing.T) {
	var asked []string
	r := newRig(t, nil, func(r *rig, h *Server) {
		h.Misdirected = func(_ net.Conn, port int, hostname string) bool {
			asked = append(asked, hostname)
			return port == r.port
		}
	})
	status, body, _ := r.exchange(t, [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "localhost:" + fmt.Sprint(r.port)}, {":path", "/"}})
	if status != "421" || !strings.Contains(body, "HTTP Error 421.") {
		t.Fatalf("%s %q", status, body)
	}
	if len(asked) != 1 || asked[0] != "localhost" {
		t.Fatalf("asked %v", asked)
	}
}

// A stream that waited past its queue's timeout is answered 503 with Retry-After and
// the router's page (the queue sweep in internal/hub calls conn.QueueTimeout for it, as
// for HTTP/1.1).
func TestQueueTimeout(t *testing.T) {
	r := newRig(t, func(_ *conn.Limits, s *queue.Settings) { s.TimeoutMs = 1 })
	type answer struct{ status, body string }
	done := make(chan answer, 1)
	go func() {
		status, body, _ := r.exchange(t, [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", "localhost:" + fmt.Sprint(r.port)}, {":path", "/"}})
		done <- answer{status, body}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for r.q.Stats().Waiting == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream never reached its queue")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, q := range r.q.Expire(time.Now().UnixMilli()+60000, 1000) {
		conn.QueueTimeout(q)
	}
	a := <-done
	if a.status != "503" || !strings.Contains(a.body, "No application instance took the request in time") {
		t.Fatalf("%s %q", a.status, a.body)
	}
}

// Fields node's nghttp2 drops never reach the app either: a name that is no
// token, a value with surrounding white space or a control character, a Host that
// is no authority; a tab inside a value is kept.
func TestDroppedFields(t *testing.T) {
	r := newRig(t, nil)
	fw := r.worker()
	_, fr := r.dial()
	var blk bytes.Buffer
	enc := hpack.NewEncoder(&blk)
	auth := "localhost:" + fmt.Sprint(r.port)
	for _, kv := range [][2]string{{":method", "GET"}, {":scheme", "https"}, {":authority", auth}, {":path", "/"},
		{"x a", "1"}, {"x-b", " lead"}, {"x-c", "a\tb"}, {"x-d", "a\x01b"}, {"host", "a b"}} {
		_ = enc.WriteField(hpack.HeaderField{Name: kv[0], Value: kv[1]})
	}
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: blk.Bytes(), EndStream: true, EndHeaders: true})
	_, req := fw.request()
	got := fields(req)
	want := [][2]string{{"host", auth}, {"x-c", "a\tb"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the app got %q, want %q", got, want)
	}
}
