package parse_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"httpsys/router/internal/parse"
	"httpsys/router/internal/parse/parsetest"
)

// FuzzParse: whatever the bytes, the parser keeps its contract (parsetest.Record
// checks every call); every accepted head obeys the rules the JS parser's header
// comment lists, read again from its raw headers; and every way of cutting the input
// into reads gives the events of one buffer, with the JS fuzzer's two allowances
// (test/fuzz/fuzz.js): an error's reason may depend on where a line was cut, and an
// error in a line the input never ends is found by Finish once cut, and must then be
// found as soon as an LF follows.
func FuzzParse(f *testing.F) {
	for i, s := range []string{
		browserGet, smallPost, pipeline, headOf(200),
		"GET http://a.test:80/x HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4;a=\"q\\\"\"\r\nwiki\r\n0\r\nT: 1\r\n\r\n",
		"OPTIONS * HTTP/1.0\r\nConnection: keep-alive\r\nExpect: 100-continue\r\n\r\n",
		"GET /ws HTTP/1.1\r\nHost: [::1]:80\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\nraw",
		"\r\n\r\nPUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc",
	} {
		f.Add([]byte(s), uint64(i), byte(i))
	}
	f.Fuzz(func(t *testing.T, input []byte, seed uint64, mode byte) {
		o := optionsFor(mode)
		whole := record(t, o, input, nil, false, nil)
		checkMessages(t, o, whole.Events)
		rng := rand.New(rand.NewPCG(seed, uint64(mode)))
		plans := map[string][][2]int{"random cuts": cuts(len(input), rng, 1+rng.IntN(4))}
		if len(input) <= 4096 {
			plans["byte by byte"] = pieces(len(input), rng, 1)
		} else {
			plans["small pieces"] = pieces(len(input), rng, 97)
		}
		for name, splits := range plans {
			same(t, o, input, whole, splits, name)
		}
		// pieces of random sizes, overwritten once parsed, on a parser that was used
		// and Reset, and a caller that stops at some events and comes back with the
		// untaken bytes moved (parsetest.Plan.Stop)
		prefix := input[:rng.IntN(len(input)+1)]
		same(t, o, input, whole, pieces(len(input), rng, 1+rng.IntN(len(input)+1)), "scribbled pieces after Reset", prefix)
	})
}

// optionsFor: the defaults mostly, small limits and strictHost off for the rest (as
// test/fuzz/fuzz.js optionsFor picks them).
func optionsFor(mode byte) parse.Options {
	o := parse.DefaultOptions()
	if mode < 200 {
		return o
	}
	o.MaxHeaderSize = []int{40, 64, 128, 256, 1024, 16384}[mode%6]
	o.MaxBodySize = []int64{0, 1, 10, 100, 4096, parse.NoBodyLimit}[mode/6%6]
	o.StrictHost = mode%5 != 0
	return o
}

func record(t *testing.T, o parse.Options, input []byte, splits [][2]int, scribble bool, prefix []byte) parsetest.Result {
	t.Helper()
	p := parse.New(o)
	if prefix != nil {
		if _, err := parsetest.Record(p, [][]byte{prefix}, scribble); err != nil {
			t.Fatalf("contract broken on the prefix %q: %v", prefix, err)
		}
		p.Reset()
	}
	plan := parsetest.Plan{Scribble: scribble}
	if scribble {
		plan.Stop, plan.Seed = 0.35, uint64(len(input))
	}
	res, err := parsetest.Run(p, parsetest.Pieces(input, splits), plan)
	if err != nil {
		t.Fatalf("contract broken (splits %v): %v", splits, err)
	}
	return res
}

func cuts(n int, rng *rand.Rand, k int) [][2]int {
	points := []int{0, n}
	for range k {
		points = append(points, rng.IntN(n+1))
	}
	slices.Sort(points)
	points = slices.Compact(points)
	var out [][2]int
	for i := 1; i < len(points); i++ {
		out = append(out, [2]int{points[i-1], points[i]})
	}
	return out
}

func pieces(n int, rng *rand.Rand, max int) [][2]int {
	out := [][2]int{}
	for i := 0; i < n; {
		k := min(n-i, 1+rng.IntN(max))
		out = append(out, [2]int{i, i + k})
		i += k
	}
	return out
}

// verdict is an event with an error's reason left out.
func verdict(e parsetest.Event) string {
	if e.Kind == "error" {
		e.Reason = ""
	}
	b, _ := json.Marshal(e)
	return string(b)
}

func same(t *testing.T, o parse.Options, input []byte, whole parsetest.Result, splits [][2]int, plan string, prefix ...[]byte) {
	t.Helper()
	scribble := len(prefix) > 0
	var pre []byte
	if scribble {
		pre = prefix[0]
	}
	got := record(t, o, input, splits, scribble, pre)
	if why := difference(t, o, input, whole, got, splits); why != "" {
		t.Fatalf("%s gives other events than one buffer: %s\ninput %q", plan, why, input)
	}
}

func difference(t *testing.T, o parse.Options, input []byte, a, b parsetest.Result, splits [][2]int) string {
	x, y := a.Events, b.Events
	i := 0
	for i < len(x) && i < len(y) && verdict(x[i]) == verdict(y[i]) {
		i++
	}
	if i == len(x) && len(x) == len(y) {
		return ""
	}
	show := func() string {
		return fmt.Sprintf("at event %d: one buffer %s, cut %s", i, eventsJSON(x[i:min(i+2, len(x))]), eventsJSON(y[i:min(i+2, len(y))]))
	}
	late := i < len(x) && x[i].Kind == "error" && i == len(y)-1 && y[i].Kind == "finish" && y[i].Status == 400 &&
		bytes.IndexByte(input[a.ErrorAt:], '\n') < 0
	if !late {
		return show()
	}
	withLF := append(slices.Clone(input), '\n')
	ref := record(t, o, withLF, nil, false, nil)
	again := record(t, o, withLF, append(slices.Clone(splits), [2]int{len(input), len(input) + 1}), false, nil)
	for k := 0; k <= i; k++ {
		if k >= len(ref.Events) || verdict(ref.Events[k]) != verdict(x[k]) {
			return show() + " (and an LF more changes the one-buffer verdict)"
		}
	}
	ry, ay := ref.Events, again.Events
	if len(ry) != len(ay) {
		return show() + " (and still once an LF follows)"
	}
	for k := range ry {
		if verdict(ry[k]) != verdict(ay[k]) {
			return show() + " (and still once an LF follows)"
		}
	}
	return ""
}

func eventsJSON(e []parsetest.Event) string {
	b, _ := json.Marshal(e)
	return string(b)
}

// checkMessages holds every accepted head to the rules, computed from its raw headers
// as test/fuzz/rules.js checkHead does, and bodies to their framing.
func checkMessages(t *testing.T, o parse.Options, events []parsetest.Event) {
	t.Helper()
	var head *parsetest.Head
	body := 0
	for _, e := range events {
		switch e.Kind {
		case "head":
			head = e.Head
			body = 0
			if why := headRule(o, head); why != "" {
				t.Fatalf("accepted a head that breaks a rule: %s\n%+v", why, head)
			}
		case "body":
			body += len(e.Body)
		case "complete":
			if head.ContentLength >= 0 && int64(body) != max(head.ContentLength, 0) || head.ContentLength < 0 && !head.Chunked && body != 0 {
				t.Fatalf("a body of %d bytes for %+v", body, head)
			}
		}
	}
}

func headRule(o parse.Options, h *parsetest.Head) string {
	if !slices.Contains(parse.Methods(), h.Method) || h.Method == "CONNECT" {
		return "method " + h.Method
	}
	if h.URL == "" || strings.IndexFunc(h.URL, func(r rune) bool { return r < 0x21 || r > 0x7e }) >= 0 {
		return "url bytes"
	}
	absolute := isAbsolute(h.URL)
	if h.URL[0] != '/' && !(h.URL == "*" && h.Method == "OPTIONS") && !absolute {
		return "request-target form"
	}
	if h.VersionMajor != 1 || h.VersionMinor > 1 {
		return "version"
	}
	raw := h.RawHeaders
	values := func(name string) []string {
		var out []string
		for i := 0; i < len(raw); i += 2 {
			if strings.EqualFold(raw[i], name) {
				out = append(out, raw[i+1])
			}
		}
		return out
	}
	for i := 0; i < len(raw); i += 2 {
		if raw[i] == "" || strings.Trim(raw[i+1], " \t") != raw[i+1] {
			return "a field name empty or a value untrimmed"
		}
	}
	hosts := values("host")
	if h.VersionMinor == 1 && len(hosts) == 0 && o.RequireHost {
		return "HTTP/1.1 without Host"
	}
	for _, v := range hosts {
		if v != hosts[0] {
			return "different Host values"
		}
	}
	first := ""
	if len(hosts) > 0 {
		first = hosts[0]
	}
	if h.Host != first {
		return "host is not the first Host value"
	}
	if o.StrictHost {
		if strings.IndexFunc(first, func(r rune) bool {
			return !(r < 0x80 && (r >= '0' && r <= '9' || r|0x20 >= 'a' && r|0x20 <= 'z' || strings.ContainsRune("-._~%!$&'()*+,;=:[]", r)))
		}) >= 0 {
			return "invalid Host characters"
		}
		if !portOK(first) {
			return "a Host port that is not digits"
		}
		if absolute && !portOK(authority(h.URL)) {
			return "an absolute-form authority port that is not digits"
		}
	}
	cls, tes := values("content-length"), values("transfer-encoding")
	switch {
	case len(cls) > 0 && len(tes) > 0:
		return "Content-Length with Transfer-Encoding"
	case len(tes) > 0:
		codings := list(tes)
		if h.VersionMinor != 1 || len(codings) == 0 || !strings.EqualFold(codings[len(codings)-1], "chunked") ||
			slices.IndexFunc(codings[:len(codings)-1], func(c string) bool { return strings.EqualFold(c, "chunked") }) >= 0 {
			return "Transfer-Encoding"
		}
		if !h.Chunked || h.ContentLength != -1 {
			return "chunked/contentLength do not follow Transfer-Encoding"
		}
	case len(cls) > 0:
		members := list(cls)
		for _, m := range members {
			if m != members[0] && strings.TrimLeft(m, "0") != strings.TrimLeft(members[0], "0") || strings.Trim(m, "0123456789") != "" {
				return "Content-Length values"
			}
		}
		if h.Chunked || h.ContentLength < 0 || h.ContentLength > o.MaxBodySize {
			return "contentLength"
		}
	default:
		if h.Chunked || h.ContentLength != -1 {
			return "framing without a framing header"
		}
	}
	if h.HasBody != (h.Chunked || h.ContentLength > 0) {
		return "hasBody"
	}
	conn := list(values("connection"))
	has := func(tok string) bool {
		return slices.IndexFunc(conn, func(c string) bool { return strings.EqualFold(c, tok) }) >= 0
	}
	if h.KeepAlive != (!has("close") && (h.VersionMinor == 1 || has("keep-alive"))) {
		return "keepAlive"
	}
	if h.Upgrade != (has("upgrade") && slices.IndexFunc(values("upgrade"), func(v string) bool { return v != "" }) >= 0) {
		return "upgrade"
	}
	expects := values("expect")
	cont := slices.IndexFunc(expects, func(v string) bool { return strings.EqualFold(v, "100-continue") }) >= 0
	if h.ExpectContinue != (h.VersionMinor == 1 && cont) || h.ExpectOther != (h.VersionMinor == 1 && len(expects) > 0 && !cont) {
		return "expect"
	}
	return ""
}

func isAbsolute(u string) bool {
	scheme, _, ok := strings.Cut(u, "://")
	return ok && scheme != "" && (scheme[0]|0x20 >= 'a' && scheme[0]|0x20 <= 'z') &&
		strings.Trim(strings.ToLower(scheme), "abcdefghijklmnopqrstuvwxyz0123456789+-.") == ""
}

func authority(u string) string {
	_, rest, _ := strings.Cut(u, "//")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// portOK: after an IP literal's "]", or after the first ":", digits only.
func portOK(host string) bool {
	port := ""
	if strings.HasPrefix(host, "[") {
		i := strings.IndexByte(host, ']')
		if i < 0 {
			return false
		}
		rest := host[i+1:]
		if rest == "" {
			return true
		}
		if rest[0] != ':' {
			return false
		}
		port = rest[1:]
	} else if _, p, ok := strings.Cut(host, ":"); ok {
		port = p
	}
	return strings.Trim(port, "0123456789") == ""
}

// list splits header values into their non-empty, OWS-trimmed members (RFC 9110 5.6.1).
func list(values []string) []string {
	var out []string
	for _, v := range values {
		for _, m := range strings.Split(v, ",") {
			if m = strings.Trim(m, " \t"); m != "" {
				out = append(out, m)
			}
		}
	}
	return out
}
