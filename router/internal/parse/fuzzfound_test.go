package parse_test

import (
	"runtime"
	"strings"
	"testing"

	"httpsys/router/internal/parse"
)

// The cases of the JS router's parser test "parser bugs found by fuzzing" (bugs the
// fuzzer found in the JS parser; the test went with the JS router, issue 25), held against
// this parser too.

// statusOfPieces is the error status the pieces get, each a read of its own, or 200.
func statusOfPieces(t *testing.T, o parse.Options, pieces ...string) int {
	t.Helper()
	for _, e := range run(t, o, pieces...) {
		if e.Kind == "error" {
			return e.Status
		}
	}
	return 200
}

func TestAMalformedOverLongLineGetsTheSameStatusHoweverItIsCut(t *testing.T) {
	small := opts(func(o *parse.Options) { o.MaxHeaderSize = 64 })
	pieces := []string{"GET / HTTP/1.1\r\nHost: a\r\nX: ", "\x00" + strings.Repeat("a", 64) + "\r\n\r\n"}
	if got := statusOfPieces(t, small, pieces[0]+pieces[1]); got != 400 {
		t.Errorf("in one piece: %d, want 400", got)
	}
	if got := statusOfPieces(t, small, pieces...); got != 400 {
		t.Errorf("cut: %d, want 400", got)
	}
	// a line that is fine up to the limit is still the limit's
	if got := statusOfPieces(t, small, "GET / HTTP/1.1\r\nHost: a\r\nX: ", strings.Repeat("a", 64)+"\x00\r\n\r\n"); got != 431 {
		t.Errorf("a NUL past the limit: %d, want 431", got)
	}
	// the same with the default limit: a chunk extension line of 16 KiB with a NUL early on
	head := "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;e"
	rest := "\x00" + strings.Repeat("e", 16400) + "\r\nx\r\n0\r\n\r\n"
	o := parse.DefaultOptions()
	if whole, cut := statusOfPieces(t, o, head+rest), statusOfPieces(t, o, head, rest); whole != cut {
		t.Errorf("a chunk extension line: %d whole, %d cut", whole, cut)
	}
}

func TestContentLengthUpTo2To53Minus1IsReadExactly(t *testing.T) {
	req := func(n string) string { return "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " + n + "\r\n\r\n" }
	for _, c := range []struct {
		n    string
		want int64
	}{{"9007199254740989", 9007199254740989}, {"9007199254740991", 9007199254740991}} {
		p := parse.New(parse.DefaultOptions())
		if _, ev := p.Parse([]byte(req(c.n))); ev != parse.GotHead || p.Head().ContentLength != c.want {
			t.Errorf("Content-Length %s: event %d, read as %d", c.n, ev, p.Head().ContentLength)
		}
	}
	if got := status(t, req("9007199254740992"), parse.DefaultOptions()); got != 413 {
		t.Errorf("Content-Length 2^53: %d, want 413", got)
	}
}

func TestALongReadIntoACutLineKeepsNoMoreThanAboutMaxHeaderSize(t *testing.T) {
	p := parse.New(parse.DefaultOptions())
	p.Parse([]byte("GET / HTTP/1.1\r\nHost: a\r\nX: "))
	big := []byte(strings.Repeat("a", 16<<20))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	p.Parse(big)
	runtime.ReadMemStats(&after)
	if err := p.Err(); err == nil || err.Status != 431 {
		t.Fatalf("a 16 MiB header line: %v, want 431", err)
	}
	if n, ev := p.Parse([]byte("x")); n != 0 || ev != parse.Failed {
		t.Fatalf("after the error: %d %d", n, ev)
	}
	if copied := after.TotalAlloc - before.TotalAlloc; copied > 1<<20 {
		t.Fatalf("the parser allocated %d bytes for a 16 MiB read", copied)
	}
}
