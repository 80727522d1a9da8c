package parse_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"httpsys/router/internal/parse"
)

// The JS router's parser test "time grows linearly with the input" (the shapes of
// test/fuzz/scaling.js; the test went with the JS router, issue 25): where an incremental
// line parser can go quadratic (pending-line copies,
// LF searches, early request-line checks), each shape is timed at n and 4n bytes, best
// of a few runs. Linear time gives a ratio near 4, quadratic near 16.

type shape struct {
	name string
	make func(n int) ([][]byte, parse.Options)
}

func bytewise(s string) [][]byte {
	out := make([][]byte, len(s))
	for i := range s {
		out[i] = []byte(s[i : i+1])
	}
	return out
}

func every(s string, k int) [][]byte {
	var out [][]byte
	for i := 0; i < len(s); i += k {
		out = append(out, []byte(s[i:min(i+k, len(s))]))
	}
	return out
}

// the limits out of the way: time is what is measured
func big() parse.Options {
	return opts(func(o *parse.Options) { o.MaxHeaderSize = 1 << 24 })
}

func scalingShapes() []shape {
	return []shape{
		{"header line, byte by byte", func(n int) ([][]byte, parse.Options) {
			return bytewise("GET / HTTP/1.1\r\nHost: a\r\nX-Long: " + strings.Repeat("v", n) + "\r\n\r\n"), big()
		}},
		{"request-target, byte by byte", func(n int) ([][]byte, parse.Options) {
			return bytewise("GET /" + strings.Repeat("u", n) + " HTTP/1.1\r\nHost: a\r\n\r\n"), big()
		}},
		{"chunk extension, byte by byte", func(n int) ([][]byte, parse.Options) {
			return bytewise("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n1;e=\"" + strings.Repeat("\\\"", n>>1) + "\"\r\nx\r\n0\r\n\r\n"), big()
		}},
		{"many header lines, one buffer", func(n int) ([][]byte, parse.Options) {
			return [][]byte{[]byte("GET / HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X-H: v\r\n", n>>3) + "\r\n")}, big()
		}},
		{"many header lines, 7-byte reads", func(n int) ([][]byte, parse.Options) {
			return every("GET / HTTP/1.1\r\nHost: a\r\n"+strings.Repeat("X-H: v\r\n", n>>3)+"\r\n", 7), big()
		}},
		{"many chunks with extensions, 5-byte reads", func(n int) ([][]byte, parse.Options) {
			return every("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"+strings.Repeat("3;a=b\r\nxyz\r\n", n/13)+"0\r\n\r\n", 5), big()
		}},
		{"pipeline after a large head, one buffer", func(n int) ([][]byte, parse.Options) {
			return [][]byte{[]byte("GET / HTTP/1.1\r\nHost: a\r\nX: " + strings.Repeat("p", 16000) + "\r\n\r\n" + strings.Repeat("GET / HTTP/1.1\r\nHost: a\r\n\r\n", n/27))}, parse.DefaultOptions()
		}},
		{"Content-Length body, byte by byte", func(n int) ([][]byte, parse.Options) {
			return append([][]byte{[]byte("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: " + strconv.Itoa(n) + "\r\n\r\n")}, bytewise(strings.Repeat("b", n))...), parse.DefaultOptions()
		}},
	}
}

// timeOnce parses the pieces as reads of their own (the parser takes each whole).
func timeOnce(t *testing.T, pieces [][]byte, o parse.Options) time.Duration {
	p := parse.New(o)
	t0 := time.Now()
	for _, piece := range pieces {
		for rest := piece; ; {
			n, ev := p.Parse(rest)
			rest = rest[n:]
			if ev == parse.Failed {
				t.Fatalf("a scaling input was refused: %v", p.Err())
			}
			if ev == parse.NeedMore {
				break
			}
		}
	}
	return time.Since(t0)
}

func best(t *testing.T, pieces [][]byte, o parse.Options, runs int) time.Duration {
	m := time.Duration(1 << 62)
	for i := 0; i < runs; i++ {
		m = min(m, timeOnce(t, pieces, o))
	}
	return m
}

func TestTimeGrowsLinearlyWithTheInput(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	const n = 16384
	// room for a machine busy with other tests (and -race); quadratic is ~16
	const maxRatio = 12
	for _, s := range scalingShapes() {
		small, o := s.make(n)
		large, _ := s.make(4 * n)
		best(t, small, o, 2) // warm up
		ms, ms4 := best(t, small, o, 3), best(t, large, o, 3)
		floor := 50 * time.Microsecond
		ratio := float64(ms4) / float64(max(ms, floor))
		if ratio > maxRatio {
			// measured once more before it counts (GC, a busy core)
			ms, ms4 = min(ms, best(t, small, o, 3)), min(ms4, best(t, large, o, 3))
			ratio = float64(ms4) / float64(max(ms, floor))
		}
		if ratio > maxRatio {
			t.Errorf("%s: %v at %d bytes, %v at %d: ratio %.1f", s.name, ms, n, ms4, 4*n, ratio)
		}
	}
}
