package parse_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"httpsys/router/internal/parse"
	"httpsys/router/internal/parse/parsetest"
)

func opts(f func(*parse.Options)) parse.Options {
	o := parse.DefaultOptions()
	if f != nil {
		f(&o)
	}
	return o
}

// run parses pieces on a fresh parser and returns its events (contract checked).
func run(t *testing.T, o parse.Options, pieces ...string) []parsetest.Event {
	t.Helper()
	bs := make([][]byte, len(pieces))
	for i, p := range pieces {
		bs[i] = []byte(p)
	}
	res, err := parsetest.Record(parse.New(o), bs, true)
	if err != nil {
		t.Fatalf("contract broken: %v", err)
	}
	return res.Events
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func firstHead(t *testing.T, events []parsetest.Event) *parsetest.Head {
	t.Helper()
	for _, e := range events {
		if e.Kind == "head" {
			return e.Head
		}
	}
	t.Fatalf("no head in %s", js(t, events))
	return nil
}

// status is the error status the whole text gets, or 200.
func status(t *testing.T, text string, o parse.Options) int {
	t.Helper()
	for _, e := range run(t, o, text) {
		if e.Kind == "error" {
			return e.Status
		}
	}
	return 200
}

func kinds(events []parsetest.Event) string {
	var k []string
	for _, e := range events {
		k = append(k, e.Kind)
	}
	return strings.Join(k, " ")
}

func TestASimpleGetGivesItsHeadThenCompletes(t *testing.T) {
	got := js(t, run(t, parse.DefaultOptions(), "GET /a/b?c=d HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: t\r\n\r\n"))
	want := `[["head",{"method":"GET","url":"/a/b?c=d","versionMajor":1,"versionMinor":1,"rawHeaders":["Host","example.com:8080","User-Agent","t"],` +
		`"host":"example.com:8080","contentLength":-1,"chunked":false,"keepAlive":true,"expectContinue":false,"expectOther":false,"upgrade":false,"hasBody":false}],` +
		`["complete",null],["finish",null]]`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestHeadersKeepCaseOrderAndRepeatsWithOnlySurroundingWhitespaceTrimmed(t *testing.T) {
	h := firstHead(t, run(t, parse.DefaultOptions(), "GET / HTTP/1.1\r\nhOsT: h\r\nSet-Thing:  a b \t\r\nX-Empty:\r\nset-thing:\tc\r\nX-Latin: caf\xe9\r\n\r\n"))
	if got := js(t, h.RawHeaders); got != js(t, []string{"hOsT", "h", "Set-Thing", "a b", "X-Empty", "", "set-thing", "c", "X-Latin", "caf\u00e9"}) {
		t.Fatalf("rawHeaders %s", got)
	}
	if h.Host != "h" {
		t.Fatalf("host %q", h.Host)
	}
}

func TestRequestTargetsAndMethods(t *testing.T) {
	for _, c := range [][2]string{{"M-SEARCH", "/"}, {"QUERY", "/"}, {"GET", "http://example.com/x?y"}, {"OPTIONS", "*"}} {
		h := firstHead(t, run(t, parse.DefaultOptions(), c[0]+" "+c[1]+" HTTP/1.1\r\nHost: a\r\n\r\n"))
		if h.Method != c[0] || h.URL != c[1] {
			t.Errorf("%s %s read as %s %s", c[0], c[1], h.Method, h.URL)
		}
	}
	for _, m := range []string{"post", "Get", "BREW", "FOO", "GETX", "DESCRIBE", "PRI"} {
		if got := js(t, run(t, parse.DefaultOptions(), m+" /x HTTP/1.1\r\nHost: a\r\n\r\n")); got != `[["error",400,"unknown method"],["finish",null]]` {
			t.Errorf("%s: %s", m, got)
		}
	}
}

func TestEmptyLinesBeforeARequestLineAreSkipped(t *testing.T) {
	if k := kinds(run(t, parse.DefaultOptions(), "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\n")); k != "head complete head complete finish" {
		t.Fatal(k)
	}
}

func TestHTTP10NeedsNoHostAndRepeatsMustBeIdentical(t *testing.T) {
	h := firstHead(t, run(t, parse.DefaultOptions(), "GET / HTTP/1.0\r\n\r\n"))
	if h.VersionMinor != 0 || h.Host != "" || h.KeepAlive {
		t.Fatalf("%+v", h)
	}
	ev := run(t, parse.DefaultOptions(), "POST / HTTP/1.1\r\nHost: a\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\nhi")
	if h := firstHead(t, ev); h.ContentLength != 2 || string(ev[1].Body) != "hi" {
		t.Fatalf("%s", js(t, ev))
	}
}

func TestConnectionUpgradeAndExpect(t *testing.T) {
	for _, c := range []struct {
		version, header string
		keepAlive       bool
	}{
		{"HTTP/1.1", "", true},
		{"HTTP/1.1", "Connection: close\r\n", false},
		{"HTTP/1.1", "Connection: Keep-Alive, CLOSE\r\n", false},
		{"HTTP/1.1", "Connection: foo\r\nConnection: close\r\n", false},
		{"HTTP/1.0", "", false},
		{"HTTP/1.0", "Connection: Keep-Alive\r\n", true},
		{"HTTP/1.0", "Connection: foo ,keep-alive\r\n", true},
		{"HTTP/1.0", "Connection: keep-alive, close\r\n", false},
	} {
		if h := firstHead(t, run(t, parse.DefaultOptions(), "GET / "+c.version+"\r\nHost: a\r\n"+c.header+"\r\n")); h.KeepAlive != c.keepAlive {
			t.Errorf("%s %q: keepAlive %v", c.version, c.header, h.KeepAlive)
		}
	}
	for _, c := range []struct {
		headers string
		upgrade bool
	}{
		{"Connection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n", true},
		{"Upgrade: websocket\r\n", false},
		{"Connection: upgrade\r\n", false},
		{"Connection: upgrade\r\nUpgrade:\r\n", false},
	} {
		if h := firstHead(t, run(t, parse.DefaultOptions(), "GET / HTTP/1.1\r\nHost: a\r\n"+c.headers+"\r\n")); h.Upgrade != c.upgrade {
			t.Errorf("%q: upgrade %v", c.headers, h.Upgrade)
		}
	}
	for _, c := range []struct {
		version, header string
		cont, other     bool
	}{
		{"HTTP/1.1", "Expect: 100-continue", true, false},
		{"HTTP/1.1", "Expect: 100-Continue", true, false},
		{"HTTP/1.1", "Expect: 200-ok", false, true},
		{"HTTP/1.1", "Expect: 100-continue-please", false, true},
		// node honours Expect on HTTP/1.1 only: a 1.0 request is an ordinary one
		{"HTTP/1.0", "Expect: 100-continue", false, false},
		{"HTTP/1.0", "Expect: 200-ok", false, false},
	} {
		h := firstHead(t, run(t, parse.DefaultOptions(), "PUT / "+c.version+"\r\nHost: a\r\n"+c.header+"\r\nContent-Length: 1\r\n\r\nx"))
		if h.ExpectContinue != c.cont || h.ExpectOther != c.other {
			t.Errorf("%s %s: continue %v, other %v", c.version, c.header, h.ExpectContinue, h.ExpectOther)
		}
	}
}

const pipeline = "GET /1 HTTP/1.1\r\nHost: a\r\n\r\n" +
	"POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello" +
	"POST /3 HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3;x=\"a\\\"b\"\r\nabc\r\n2 ; y\r\nde\r\n0\r\nT-A: 1\r\nt-b:  2 \r\n\r\n" +
	"GET /4 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"

func TestPipelinedRequestsComeOutInOrderWhateverTheSplit(t *testing.T) {
	whole := run(t, parse.DefaultOptions(), pipeline)
	if k := kinds(whole); k != "head complete head body complete head body complete head complete finish" {
		t.Fatal(k)
	}
	if got := js(t, whole[7]); got != `["complete",["T-A","1","t-b","2"]]` {
		t.Fatalf("trailers %s", got)
	}
	want := js(t, whole)
	for k := range len(pipeline) + 1 {
		if got := js(t, run(t, parse.DefaultOptions(), pipeline[:k], pipeline[k:])); got != want {
			t.Fatalf("split at %d: %s", k, got)
		}
	}
	bytewise := make([]string, len(pipeline))
	for i := range pipeline {
		bytewise[i] = pipeline[i : i+1]
	}
	if got := js(t, run(t, parse.DefaultOptions(), bytewise...)); got != want {
		t.Fatalf("byte by byte: %s", got)
	}
}

func TestBodiesAreSlicesOfTheInput(t *testing.T) {
	p := parse.New(parse.DefaultOptions())
	in := []byte("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcPOST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n0\r\n\r\n")
	n, ev := p.Parse(in)
	if ev != parse.GotHead {
		t.Fatal(ev)
	}
	off := n
	n, ev = p.Parse(in[off:])
	if ev != parse.GotBody || &p.Body()[0] != &in[off] || string(p.Body()) != "abc" {
		t.Fatalf("Content-Length body %q (event %d)", p.Body(), ev)
	}
	off += n
	for ev != parse.GotBody || string(p.Body()) != "xy" {
		n, ev = p.Parse(in[off:])
		off += n
		if ev == parse.NeedMore || ev == parse.Failed {
			t.Fatalf("no chunk data (event %d)", ev)
		}
	}
	if at := bytes.Index(in, []byte("xy")); &p.Body()[0] != &in[at] {
		t.Fatal("chunk data was copied")
	}
}

// A 1 MB chunked body in random chunk sizes and random reads keeps its checksum.
func TestALargeChunkedBodyArrivesIntact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	body := make([]byte, 1<<20)
	for i := range body {
		body[i] = byte(rng.IntN(256))
	}
	var in bytes.Buffer
	in.WriteString("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
	for rest := body; len(rest) > 0; {
		n := min(len(rest), 1+rng.IntN(70000))
		in.WriteString(strings.ToUpper(strconv.FormatInt(int64(n), 16)) + ";i=1\r\n")
		in.Write(rest[:n])
		in.WriteString("\r\n")
		rest = rest[n:]
	}
	in.WriteString("0\r\n\r\n")
	p := parse.New(parse.DefaultOptions())
	h := sha256.New()
	src := in.Bytes()
	completes := 0
	for off := 0; off < len(src); {
		piece := src[off:min(len(src), off+1+rng.IntN(40000))]
		off += len(piece)
		for {
			n, ev := p.Parse(piece)
			piece = piece[n:]
			if ev == parse.GotBody {
				h.Write(p.Body())
			}
			if ev == parse.Complete {
				completes++
			}
			if ev == parse.Failed {
				t.Fatal(p.Err())
			}
			if ev == parse.NeedMore {
				break
			}
		}
	}
	if want := sha256.Sum256(body); completes != 1 || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatalf("%d completes, checksum differs", completes)
	}
}

// Stopping after GotHead is the JS parser's pause(): an upgrade's caller takes the
// bytes after the head as the tunnel's, untouched.
func TestACallerThatStopsAfterTheHeadKeepsTheRest(t *testing.T) {
	in := []byte("GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n\x81\x05hello")
	p := parse.New(parse.DefaultOptions())
	n, ev := p.Parse(in)
	if ev != parse.GotHead || !p.Head().Upgrade || string(in[n:]) != "\x81\x05hello" {
		t.Fatalf("event %d, upgrade %v, rest %q", ev, p.Head().Upgrade, in[n:])
	}
	// a request without a body completes on the next call, even with nothing left
	if n, ev := p.Parse(nil); n != 0 || ev != parse.Complete {
		t.Fatalf("then %d, %d", n, ev)
	}
}

func TestErrors(t *testing.T) {
	const H = "Host: a\r\n"
	for _, c := range []struct {
		name, text string
		status     int
	}{
		{"missing version (HTTP/0.9 style)", "GET /\r\n\r\n", 400},
		{"two spaces in the request line", "GET  / HTTP/1.1\r\n" + H + "\r\n", 400},
		{"trailing space after the version", "GET / HTTP/1.1 \r\n" + H + "\r\n", 400},
		{"bad method token", "G(T / HTTP/1.1\r\n" + H + "\r\n", 400},
		{"TLS handshake on a plain port", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 400},
		{"lower-case version", "GET / http/1.1\r\n" + H + "\r\n", 400},
		{"version without minor", "GET / HTTP/1\r\n" + H + "\r\n", 400},
		{"version with two digits", "GET / HTTP/1.10\r\n" + H + "\r\n", 400},
		{"bare LF after the request line", "GET / HTTP/1.1\n" + H + "\r\n", 400},
		{"bare LF after a header line", "GET / HTTP/1.1\r\nHost: a\nX: y\r\n\r\n", 400},
		{"bare CR in a header value", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400},
		{"control character in the request-target", "GET /a\x01 HTTP/1.1\r\n" + H + "\r\n", 400},
		{"non-ASCII request-target", "GET /caf\xe9 HTTP/1.1\r\n" + H + "\r\n", 400},
		{"asterisk-form outside OPTIONS", "GET * HTTP/1.1\r\n" + H + "\r\n", 400},
		{"authority-form", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", 400},
		{"CONNECT with an origin-form target", "CONNECT /x HTTP/1.1\r\n" + H + "Content-Length: 3\r\n\r\nabc", 400},
		{"CONNECT with an absolute-form target", "CONNECT http://a/x HTTP/1.1\r\n" + H + "\r\n", 400},
		{"relative request-target", "GET a/b HTTP/1.1\r\n" + H + "\r\n", 400},
		{"invalid header name character", "GET / HTTP/1.1\r\n" + H + "X(y): 1\r\n\r\n", 400},
		{"empty header name", "GET / HTTP/1.1\r\n" + H + ": 1\r\n\r\n", 400},
		{"header line without colon", "GET / HTTP/1.1\r\n" + H + "NoColon\r\n\r\n", 400},
		{"NUL in a header value", "GET / HTTP/1.1\r\n" + H + "X: a\x00b\r\n\r\n", 400},
		{"DEL in a header value", "GET / HTTP/1.1\r\n" + H + "X: a\x7fb\r\n\r\n", 400},
		{"obs-fold", "GET / HTTP/1.1\r\n" + H + "X: a\r\n b\r\n\r\n", 400},
		{"whitespace before the colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400},
		{"missing Host in HTTP/1.1", "GET / HTTP/1.1\r\nX: 1\r\n\r\n", 400},
		{"two different Host headers", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"invalid Host value", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400},
		{"Content-Length and Transfer-Encoding", "POST / HTTP/1.1\r\n" + H + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"Transfer-Encoding then Content-Length", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", 400},
		{"different Content-Length headers", "POST / HTTP/1.1\r\n" + H + "Content-Length: 5\r\nContent-Length: 6\r\n\r\n", 400},
		{"different Content-Length list members", "POST / HTTP/1.1\r\n" + H + "Content-Length: 5, 6\r\n\r\n", 400},
		{"negative Content-Length", "POST / HTTP/1.1\r\n" + H + "Content-Length: -1\r\n\r\n", 400},
		{"non-digit Content-Length", "POST / HTTP/1.1\r\n" + H + "Content-Length: 1a\r\n\r\n", 400},
		{"empty Content-Length", "POST / HTTP/1.1\r\n" + H + "Content-Length:\r\n\r\n", 400},
		{"Transfer-Encoding not ending in chunked", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked, gzip\r\n\r\n", 400},
		{"Transfer-Encoding gzip only", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: gzip\r\n\r\n", 400},
		{"chunked applied twice", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
		{"Transfer-Encoding in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400},
		{"bad chunk size", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
		{"empty chunk size", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n\r\n", 400},
		{"whitespace after the chunk size", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n1 \r\nx\r\n0\r\n\r\n", 400},
		{"bare LF after the chunk size", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n1\nx\r\n0\r\n\r\n", 400},
		{"missing CRLF after chunk data", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n1\r\nxy\r\n", 400},
		{"bare LF after chunk data", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n1\r\nx\n0\r\n\r\n", 400},
		{"chunk extension without a name", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n1;\r\nx\r\n", 400},
		{"chunk extension without a value", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n1;a=\r\nx\r\n", 400},
		{"chunk extension with an unterminated quote", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n1;a=\"x\r\nx\r\n", 400},
		{"chunk extension with a space in a token", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\n1;a=b c\r\nx\r\n", 400},
		{"HTTP/2.0", "GET / HTTP/2.0\r\n" + H + "\r\n", 505},
		{"HTTP/1.2", "GET / HTTP/1.2\r\n" + H + "\r\n", 505},
		{"HTTP/0.9 with a version", "GET / HTTP/0.9\r\n" + H + "\r\n", 505},
		{"the HTTP/2 preface (its method, as node)", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400},
		{"Content-Length beyond 2^53", "POST / HTTP/1.1\r\n" + H + "Content-Length: 99999999999999999999\r\n\r\n", 413},
		{"chunk size beyond 2^53", "POST / HTTP/1.1\r\n" + H + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n", 413},
	} {
		if got := status(t, c.text, parse.DefaultOptions()); got != c.status {
			t.Errorf("%s: %d, want %d", c.name, got, c.status)
		}
	}
}

func TestAnErrorIsReportedOnceAndTheParserThenTakesNothing(t *testing.T) {
	p := parse.New(parse.DefaultOptions())
	in := []byte("GET / HTTP/1.1\r\nHost : a\r\n\r\n")
	_, ev := p.Parse(in)
	err := p.Err()
	if ev != parse.Failed || err == nil || err.Status != 400 || !strings.Contains(err.Reason, "colon") || !strings.HasPrefix(err.Error(), "ERR_HTTPSYS_HTTP_PARSE: 400") {
		t.Fatalf("%d %v", ev, err)
	}
	if n, ev := p.Parse([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")); n != 0 || ev != parse.Failed {
		t.Fatalf("after the error: %d %d", n, ev)
	}
}

func TestBadRequestLinesAreRefusedBeforeTheLineEnds(t *testing.T) {
	o := parse.DefaultOptions()
	for _, c := range []struct {
		pieces []string
		want   string
	}{
		{[]string{"pos"}, `[["error",400,"unknown method"],["finish",null]]`},
		{[]string{"BR", "EW"}, `[["error",400,"unknown method"],["finish",null]]`},
		{[]string{"MKCALEND"}, `[["finish",400]]`},
		{[]string{"PROPFINDPROPFIND"}, `[["error",400,"unknown method"],["finish",null]]`},
		{[]string{"\x16\x03\x01"}, `[["error",400,"invalid method"],["finish",null]]`},
		{[]string{"GET / HT", "TPS"}, `[["error",400,"invalid HTTP version"],["finish",null]]`},
	} {
		if got := js(t, run(t, o, c.pieces...)); got != c.want {
			t.Errorf("%q: %s, want %s", c.pieces, got, c.want)
		}
	}
	// the same error whatever the split
	text := "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3;a=\"b\"\r\nabc\r\n1;x=y z\r\n"
	want := js(t, run(t, o, text))
	if !strings.Contains(want, `"error"`) {
		t.Fatal(want)
	}
	for k := 1; k < len(text); k++ {
		if got := js(t, run(t, o, text[:k], text[k:])); got != want {
			t.Fatalf("split at %d: %s, want %s", k, got, want)
		}
	}
}

// Issue 23: the app (and the output cache's key) see the Host's port, and HTTP.SYS
// refuses a Host whose port is not digits.
func TestTheHostPortRule(t *testing.T) {
	o := parse.DefaultOptions()
	for _, host := range []string{"localhost:'onmouseover='alert(1)'", "localhost:http", "localhost:80a", "a:80:80", "localhost:+80", "localhost:()=;!$&*+,'", "[::1]x", "[::1]:8o", "[::1:80"} {
		if got := js(t, run(t, o, "GET / HTTP/1.1\r\nHost: "+host+"\r\n\r\n")); got != `[["error",400,"invalid port in Host header"],["finish",null]]` {
			t.Errorf("Host %s: %s", host, got)
		}
	}
	for _, host := range []string{"localhost", "localhost:8080", "a.test:1337", "localhost:", "127.0.0.1:80", "[::1]", "[::1]:8080", "[::1]:", "a!$&'()*+,;=%~_-."} {
		if h := firstHead(t, run(t, o, "GET / HTTP/1.1\r\nHost: "+host+"\r\n\r\n")); h.Host != host {
			t.Errorf("Host %s read as %s", host, h.Host)
		}
	}
	for _, c := range []struct {
		target string
		ok     bool
	}{
		{"http://localhost:'x'/", false}, {"http://localhost:80a/p", false}, {"https://[::1]x/", false},
		{"http://localhost:/p?q", true}, {"http://localhost:8080", true}, {"http://[::1]:8080/p", true}, {"http://a.test/p#f", true},
	} {
		ev := run(t, o, "GET "+c.target+" HTTP/1.1\r\nHost: a\r\n\r\n")
		if c.ok && firstHead(t, ev).URL != c.target || !c.ok && js(t, ev) != `[["error",400,"invalid port in the request-target"],["finish",null]]` {
			t.Errorf("%s: %s", c.target, js(t, ev))
		}
	}
	// a server that owns its port takes any Host and target, as node does
	loose := opts(func(o *parse.Options) { o.StrictHost = false })
	if h := firstHead(t, run(t, loose, "GET / HTTP/1.1\r\nHost: localhost:'x'\r\n\r\n")); h.Host != "localhost:'x'" {
		t.Error(h.Host)
	}
	if h := firstHead(t, run(t, loose, "GET http://a:'x'/ HTTP/1.1\r\nHost: a\r\n\r\n")); h.URL != "http://a:'x'/" {
		t.Error(h.URL)
	}
}

// headOf is a request whose head (request line to the empty line, CRLFs included) is size bytes.
func headOf(size int) string {
	start := "GET / HTTP/1.1\r\nHost: a\r\nX-Pad: "
	return start + strings.Repeat("p", size-len(start)-4) + "\r\n\r\n"
}

func TestSizeLimits(t *testing.T) {
	o := parse.DefaultOptions()
	if status(t, headOf(16384), o) != 200 || status(t, headOf(16385), o) != 431 {
		t.Fatal("a head of exactly maxHeaderSize bytes passes, one byte more is 431")
	}
	for _, text := range []string{headOf(16384), headOf(16385)} {
		want := js(t, run(t, o, text))
		for _, k := range []int{1, 100, 16383, 16384} {
			if got := js(t, run(t, o, text[:k], text[k:])); got != want {
				t.Fatalf("split at %d: %s", k, got)
			}
		}
	}
	small := opts(func(o *parse.Options) { o.MaxHeaderSize = 100 })
	if status(t, headOf(100), small) != 200 || status(t, headOf(101), small) != 431 {
		t.Fatal("maxHeaderSize is an option")
	}
	// 431 as soon as the bytes seen prove it, across calls
	p := parse.New(opts(func(o *parse.Options) { o.MaxHeaderSize = 1000 }))
	p.Parse([]byte("GET / HTTP/1.1\r\nHost: a\r\nX-Long: "))
	fed := 33
	for ; p.Err() == nil && fed < 5000; fed += 50 {
		p.Parse([]byte(strings.Repeat("x", 50)))
	}
	if p.Err() == nil || p.Err().Status != 431 || fed > 1000+50 {
		t.Fatalf("%v after %d bytes", p.Err(), fed)
	}
	if status(t, "GET / HTTP/1.1\r\nHost: a\r\n"+strings.Repeat("X: y\r\n", 4000), o) != 431 {
		t.Fatal("431 in one large buffer without an end of head")
	}
	chunked := "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	if status(t, chunked+"0\r\nT: "+strings.Repeat("v", 80)+"\r\n\r\n", small) != 200 || status(t, chunked+"0\r\nT: "+strings.Repeat("v", 200)+"\r\n\r\n", small) != 431 {
		t.Fatal("trailers have a header size limit too")
	}
	ten := opts(func(o *parse.Options) { o.MaxBodySize = 10 })
	req := func(n int) string {
		return "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n" + strings.Repeat("x", n)
	}
	if status(t, req(10), ten) != 200 || status(t, req(11), ten) != 413 {
		t.Fatal("Content-Length above maxBodySize is 413, at the limit passes")
	}
	if status(t, chunked+"5\r\n12345\r\n5\r\n12345\r\n0\r\n\r\n", ten) != 200 {
		t.Fatal("a chunked body at the limit")
	}
	if got := js(t, run(t, ten, chunked+"5\r\n12345\r\n6\r\n")); !strings.HasSuffix(got, `["error",413,"chunked body above the body size limit"],["finish",null]]`) {
		t.Fatalf("a chunked body growing above the limit is 413 before its data: %s", got)
	}
	// a chunk-size line of maxHeaderSize bytes (CRLF included) passes, one more is 413;
	// the count starts again at each chunk, as node's does
	// (test-http-chunk-extensions-limit.js)
	ext := func(n int) string { return "1;" + strings.Repeat("e", n-1) + "\r\nx\r\n" }
	if status(t, chunked+ext(97)+"0\r\n\r\n", small) != 200 || status(t, chunked+ext(98)+"0\r\n\r\n", small) != 413 {
		t.Fatal("one chunk's extensions beyond maxHeaderSize are 413")
	}
	if status(t, chunked+ext(97)+ext(97)+ext(97)+"0\r\n\r\n", small) != 200 {
		t.Fatal("chunk extensions are counted per chunk, not per message")
	}
}

func TestFinishAndReset(t *testing.T) {
	p := parse.New(parse.DefaultOptions())
	drain(p, "GET / HTTP/1.1\r\nHost: a\r\n\r\n\r\n")
	if p.Finish() != nil {
		t.Fatal("Finish between requests is not an error")
	}
	for _, text := range []string{"GET / HT", "GET / HTTP/1.1\r\nHost: a\r\n", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nab", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n"} {
		p := parse.New(parse.DefaultOptions())
		drain(p, text)
		if err := p.Finish(); err == nil || err.Status != 400 {
			t.Errorf("Finish in %q: %v", text, err)
		}
		if n, ev := p.Parse([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")); n != 0 || ev != parse.Failed {
			t.Errorf("after Finish: %d %d", n, ev)
		}
	}
	p = parse.New(parse.DefaultOptions())
	drain(p, "BAD\x01")
	p.Reset()
	if got := drain(p, "GET / HTTP/1.1\r\nHost: a\r\n\r\n"); got != "head complete" {
		t.Fatalf("after Reset: %s", got)
	}
	p = parse.New(parse.DefaultOptions())
	if drain(p, "GET / HTTP/1.1\r\nHo"); !p.InHead() {
		t.Fatal("InHead inside a head")
	}
}

func drain(p *parse.Parser, text string) string {
	var out []string
	in := []byte(text)
	for {
		n, ev := p.Parse(in)
		in = in[n:]
		switch ev {
		case parse.GotHead:
			out = append(out, "head")
		case parse.Complete:
			out = append(out, "complete")
		case parse.NeedMore, parse.Failed:
			return strings.Join(out, " ")
		}
	}
}

// On a port a standalone server owns (Options.Connect) CONNECT is node's: any target,
// no body whatever the headers say, an upgrade whose following bytes are the tunnel's
// (llhttp's, as node's server takes CONNECT).
func TestConnectIsServedWhereTheServerOwnsThePort(t *testing.T) {
	o := parse.DefaultOptions()
	o.Connect, o.StrictHost = true, false
	for _, target := range []string{"example.com:443", "/x", "http://a/x", "*"} {
		ev := run(t, o, "CONNECT "+target+" HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\n")
		h := firstHead(t, ev)
		if h.Method != "CONNECT" || h.URL != target || !h.Upgrade || h.HasBody || kinds(ev) != "head complete finish" {
			t.Errorf("%s: %s", target, js(t, ev))
		}
	}
	if got := status(t, "CONNECT example.com:443 HTTP/1.1\r\nHost: a\r\n\r\n", parse.DefaultOptions()); got != 400 {
		t.Errorf("a shared router's CONNECT: %d, want 400", got)
	}
}

// node's insecureHTTPParser (Options.Lenient): any header value byte but CR and LF.
func TestLenientTakesAnyHeaderValueByteButCRAndLF(t *testing.T) {
	o := parse.DefaultOptions()
	text := "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01b\x7f\r\n\r\n"
	if got := status(t, text, o); got != 400 {
		t.Fatalf("strict: %d, want 400", got)
	}
	o.Lenient = true
	if got := status(t, text, o); got != 200 {
		t.Fatalf("lenient: %d, want 200", got)
	}
	if got := status(t, "GET / HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n", o); got != 400 {
		t.Fatalf("lenient, a bare CR: %d, want 400", got)
	}
}

// node's 'clientError' names the second of Content-Length and Transfer-Encoding
// (test-http-invalid-te.js): the reason says which came last.
func TestContentLengthAndTransferEncodingOrder(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{"Content-Length: 10\r\nTransfer-Encoding: eee, chunked\r\n", "Transfer-Encoding last"},
		{"Transfer-Encoding: chunked\r\nContent-Length: 10\r\n", "Content-Length last"},
		{"Transfer-Encoding: gzip\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n", "Content-Length last"},
	} {
		got := js(t, run(t, parse.DefaultOptions(), "POST / HTTP/1.1\r\nHost: a\r\n"+c.head+"\r\n"))
		if !strings.Contains(got, `"both Content-Length and Transfer-Encoding, `+c.want+`"`) {
			t.Errorf("%q: %s", c.head, got)
		}
	}
}
