package parse_test

import (
	"strings"
	"testing"

	"httpsys/router/internal/parse"
)

const browserGet = "GET /api/users?page=2 HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n" +
	"Accept: text/html,application/xhtml+xml;q=0.9,*/*;q=0.8\r\nAccept-Encoding: gzip, deflate, br\r\n" +
	"Connection: keep-alive\r\nCookie: session=0123456789abcdef; theme=dark\r\n\r\n"

const smallPost = "POST /form HTTP/1.1\r\nHost: localhost:8080\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 11\r\n\r\na=1&b=2&c=3"

// parseAll parses whole requests from in (a keep-alive connection's reads), as the
// router's connection loop will: it reads each field of each head.
func parseAll(tb testing.TB, p *parse.Parser, in []byte) int {
	n := 0
	for {
		k, ev := p.Parse(in)
		in = in[k:]
		switch ev {
		case parse.GotHead:
			h := p.Head()
			for i := range h.NumFields() {
				h.Field(i)
			}
		case parse.Complete:
			n++
		case parse.Failed:
			tb.Fatal(p.Err())
		case parse.NeedMore:
			return n
		}
	}
}

// An ordinary request costs no allocation once the parser's buffers have grown to a
// head's size: one GET with a browser's headers, a small POST, ten pipelined GETs, and
// a request whose head is cut between two reads.
func TestAnOrdinaryRequestDoesNotAllocate(t *testing.T) {
	cut := len(browserGet) / 2
	for name, reads := range map[string][]string{
		"browser GET":         {browserGet},
		"POST with a body":    {smallPost},
		"ten pipelined GETs":  {strings.Repeat(browserGet, 10)},
		"a head in two reads": {browserGet[:cut], browserGet[cut:]},
	} {
		p := parse.New(parse.DefaultOptions())
		bufs := make([][]byte, len(reads))
		for i, r := range reads {
			bufs[i] = []byte(r)
		}
		for _, b := range bufs {
			parseAll(t, p, b) // warm up
		}
		n := testing.AllocsPerRun(100, func() {
			for _, b := range bufs {
				parseAll(t, p, b)
			}
		})
		if n != 0 {
			t.Errorf("%s: %v allocations per run", name, n)
		}
	}
}

func BenchmarkParseBrowserGet(b *testing.B) {
	p := parse.New(parse.DefaultOptions())
	in := []byte(browserGet)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		parseAll(b, p, in)
	}
}

func BenchmarkParsePipelined(b *testing.B) {
	p := parse.New(parse.DefaultOptions())
	in := []byte(strings.Repeat("GET /hello HTTP/1.1\r\nHost: localhost:8080\r\nUser-Agent: wrk\r\n\r\n", 16))
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		parseAll(b, p, in)
	}
}

func BenchmarkParseSmallPost(b *testing.B) {
	p := parse.New(parse.DefaultOptions())
	in := []byte(smallPost)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		parseAll(b, p, in)
	}
}
