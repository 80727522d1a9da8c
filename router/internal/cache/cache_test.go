package cache

import (
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeClock is a settable wall clock in ms.
type fakeClock struct{ ms int64 }

func (f *fakeClock) now() int64 { return f.ms }

func newTest(o Options) (*Cache, *fakeClock) {
	clk := &fakeClock{ms: 1_000_000}
	o.Now = clk.now
	if o.MaxSize == 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.MaxResponseSize == 0 {
		o.MaxResponseSize = DefaultMaxResponseSize
	}
	return New(o), clk
}

// get is a plain GET for target with Host localhost:8080 on port 8080.
func get(target string, fields ...string) *Query {
	q := &Query{Port: 8080, Host: "localhost:8080", Target: target, Method: "GET"}
	for i := 0; i+1 < len(fields); i += 2 {
		q.Field([]byte(fields[i]), []byte(fields[i+1]))
	}
	return q
}

// store runs a response through Begin and Commit; false when it was refused.
func store(c *Cache, a *App, q *Query, ttl uint32, block, body string) bool {
	cp := c.Begin(a, q, a.Epoch(), ttl, 200, []byte("OK"), []byte(block), []byte(body))
	if cp == nil {
		return false
	}
	cp.Commit()
	return true
}

// answer is what the cache writes for q, or "" for a miss.
func answer(c *Cache, a *App, q *Query, connLine string) string {
	ans, ok := c.Lookup(a, q)
	if !ok {
		return ""
	}
	return string(ans.Append(nil, connLine, q.Method == "HEAD"))
}

const publicBlock = "Cache-Control: public, max-age=60\r\nContent-Type: text/plain\r\nETag: \"v1\"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 5\r\n"

func TestKey(t *testing.T) {
	cases := []struct {
		secure       bool
		port         int
		host, target string
		want         string
	}{
		{false, 80, "Example.COM", "/a?b", "http 80 example.com /a?b"},
		{true, 8443, "a.test:8443", "/x", "https 8443 a.test:8443 /x"},
		// the Host's port is the app's, not the listener's (issue 23)
		{false, 8080, "a.test:1337", "/x", "http 8080 a.test:1337 /x"},
		{false, 8080, "", "/", "http 8080  /"},
	}
	for _, tc := range cases {
		if got := string(AppendKey(nil, tc.secure, tc.port, tc.host, tc.target)); got != tc.want {
			t.Errorf("AppendKey(%v, %d, %q, %q) = %q, want %q", tc.secure, tc.port, tc.host, tc.target, got, tc.want)
		}
	}
}

func TestHitAnswersTheStoredResponse(t *testing.T) {
	c, clk := newTest(Options{})
	a := c.NewApp()
	if answer(c, a, get("/x"), "") != "" {
		t.Fatal("a hit before anything was stored")
	}
	if !store(c, a, get("/x"), 60, publicBlock+"Connection: keep-alive\r\nKeep-Alive: timeout=5\r\nAge: 7\r\n", "hello") {
		t.Fatal("not stored")
	}
	clk.ms += 2500
	want := "HTTP/1.1 200 OK\r\nCache-Control: public, max-age=60\r\nContent-Type: text/plain\r\nETag: \"v1\"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 5\r\nAge: 2\r\n"
	if got := answer(c, a, get("/x"), ""); got != want+"\r\nhello" {
		t.Errorf("GET:\n%q\nwant\n%q", got, want+"\r\nhello")
	}
	if got := answer(c, a, get("/x"), "Connection: close\r\n"); got != want+"Connection: close\r\n\r\nhello" {
		t.Errorf("GET closing:\n%q", got)
	}
	head := get("/x")
	head.Method = "HEAD"
	if got := answer(c, a, head, ""); got != want+"\r\n" {
		t.Errorf("HEAD:\n%q", got)
	}
	// the key: Host case does not matter, its port and the listener's do
	if answer(c, a, &Query{Port: 8080, Host: "LOCALHOST:8080", Target: "/x", Method: "GET"}, "") == "" {
		t.Error("Host case made a miss")
	}
	for _, q := range []*Query{
		{Port: 8080, Host: "localhost:1337", Target: "/x", Method: "GET"},
		{Port: 8081, Host: "localhost:8080", Target: "/x", Method: "GET"},
		{Port: 8080, Host: "localhost:8080", Target: "/x", Method: "GET", Secure: true},
		{Port: 8080, Host: "localhost:8080", Target: "/X", Method: "GET"},
	} {
		if answer(c, a, q, "") != "" {
			t.Errorf("%+v was answered from another key's entry", q)
		}
	}
	s := a.Stats()
	if s.Hits != 4 || s.Misses != 5 || s.Stores != 1 || s.Entries != 1 {
		t.Errorf("stats %+v", s)
	}
	// another queue's entry for the key is not its answer
	if answer(c, c.NewApp(), get("/x"), "") != "" {
		t.Error("answered from another app's entry")
	}
}

func TestRulesRefuse(t *testing.T) {
	c, _ := newTest(Options{MaxResponseSize: 100})
	a := c.NewApp()
	cases := []struct {
		name  string
		q     *Query
		block string
		body  string
	}{
		{"HEAD", &Query{Port: 1, Target: "/", Method: "HEAD"}, publicBlock, ""},
		{"POST", &Query{Port: 1, Target: "/", Method: "POST"}, publicBlock, ""},
		{"a request body", &Query{Port: 1, Target: "/", Method: "GET", HasBody: true}, publicBlock, ""},
		{"Authorization", get("/", "AUTHORIZATION", "Basic x"), publicBlock, ""},
		{"Set-Cookie", get("/"), "set-cookie: a=1\r\n", ""},
		{"Vary", get("/"), "Vary: Accept\r\n", ""},
		{"Pragma", get("/"), "Pragma: no-cache\r\n", ""},
		{"private", get("/"), "Cache-Control: public\r\nCache-Control: private\r\n", ""},
		{"no-store", get("/"), "Cache-Control: max-age=1, No-Store\r\n", ""},
		{"no-cache", get("/"), "Cache-Control: no-cache=\"x\"\r\n", ""},
		{"s-maxage=0", get("/"), "Cache-Control: public, s-maxage=0\r\n", ""},
		{"a line without a colon", get("/"), "Broken\r\n", ""},
		{"a transfer coding other than chunked", get("/"), "Transfer-Encoding: gzip\r\n", ""},
		{"chunked twice", get("/"), "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", ""},
		{"chunked with a Content-Length", get("/"), "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n", ""},
		{"two Content-Lengths", get("/"), "Content-Length: 5\r\nContent-Length: 6\r\n", "hello"},
		{"a bad Content-Length", get("/"), "Content-Length: 5x\r\n", "hello"},
		{"a Content-Length over the largest stored", get("/"), "Content-Length: 101\r\n", ""},
		{"a body over the largest stored", get("/"), "", strings.Repeat("x", 101)},
		{"a client certificate without public", &Query{Port: 1, Target: "/", Method: "GET", ClientCert: true}, "Cache-Control: s-maxage=60\r\n", ""},
	}
	for _, tc := range cases {
		if store(c, a, tc.q, 60, tc.block, tc.body) {
			t.Errorf("%s: stored", tc.name)
		}
	}
	if cp := c.Begin(a, get("/"), a.Epoch(), 60, 404, nil, nil, nil); cp != nil {
		t.Error("a 404: captured")
	}
	if cp := c.Begin(a, get("/"), a.Epoch(), 0, 200, nil, nil, nil); cp != nil {
		t.Error("no time to live: captured")
	}
	// what is stored: a repeated Content-Length of one value, public for a client with a certificate
	if !store(c, a, get("/ok"), 60, "Content-Length: 2\r\ncontent-length: 2\r\n", "hi") {
		t.Error("a repeated Content-Length of one value was refused")
	}
	if !store(c, a, &Query{Port: 1, Target: "/cert", Method: "GET", ClientCert: true}, 60, "Cache-Control: PUBLIC, s-maxage=60\r\n", "") {
		t.Error("a public response to a client with a certificate was refused")
	}
	if n, _ := c.Len(); n != 2 {
		t.Errorf("%d entries, want 2", n)
	}
}

func TestAuthorizationAndClientCertificates(t *testing.T) {
	c, _ := newTest(Options{})
	a := c.NewApp()
	store(c, a, get("/smax"), 60, "Cache-Control: s-maxage=60\r\n", "anon")
	store(c, a, get("/pub"), 60, "Cache-Control: public, s-maxage=60\r\n", "pub")
	if answer(c, a, get("/smax", "authorization", "x"), "") != "" {
		t.Error("a request with Authorization was answered from the cache")
	}
	cert := get("/smax")
	cert.ClientCert = true
	if answer(c, a, cert, "") != "" {
		t.Error("a client with a certificate got an entry that did not say public")
	}
	cert.Target = "/pub"
	if answer(c, a, cert, "") == "" {
		t.Error("a client with a certificate was not answered from a public entry")
	}
}

func TestCapturesAcrossFramesAndChunked(t *testing.T) {
	c, _ := newTest(Options{MaxResponseSize: 64})
	a := c.NewApp()
	cp := c.Begin(a, get("/parts"), a.Epoch(), 60, 200, []byte("Fine"), []byte("Content-Length: 10\r\n"), []byte("01234"))
	if cp == nil || !cp.Append([]byte("56789")) {
		t.Fatal("refused")
	}
	cp.Commit()
	if got := answer(c, a, get("/parts"), ""); got != "HTTP/1.1 200 Fine\r\nContent-Length: 10\r\nAge: 0\r\n\r\n0123456789" {
		t.Errorf("%q", got)
	}
	// shorter than it said: not stored
	cp = c.Begin(a, get("/short"), a.Epoch(), 60, 200, nil, []byte("Content-Length: 10\r\n"), []byte("01234"))
	cp.Commit()
	if answer(c, a, get("/short"), "") != "" {
		t.Error("a response shorter than its Content-Length was stored")
	}
	// chunked: stored bare, with a Content-Length; trailers or bad framing: not stored
	for target, framed := range map[string]string{
		"/chunked":  "5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n",
		"/trailers": "5\r\nhello\r\n0\r\nX-T: 1\r\n\r\n",
		"/bad":      "5\r\nhell\r\n0\r\n\r\n",
		"/cut":      "5\r\nhello\r\n",
	} {
		cp := c.Begin(a, get(target), a.Epoch(), 60, 200, nil, []byte("Transfer-Encoding: Chunked\r\n"), []byte(framed))
		if cp == nil {
			t.Fatalf("%s: refused", target)
		}
		cp.Commit()
	}
	if got := answer(c, a, get("/chunked"), ""); got != "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nAge: 0\r\n\r\nhello world" {
		t.Errorf("chunked: %q", got)
	}
	for _, target := range []string{"/trailers", "/bad", "/cut"} {
		if answer(c, a, get(target), "") != "" {
			t.Errorf("%s was stored", target)
		}
	}
	// growing past the largest response stored
	cp = c.Begin(a, get("/big"), a.Epoch(), 60, 200, nil, nil, []byte(strings.Repeat("x", 60)))
	if cp.Append([]byte("12345")) {
		t.Error("a response past MaxResponseSize was kept")
	}
}

func TestRangesAndConditions(t *testing.T) {
	c, _ := newTest(Options{})
	a := c.NewApp()
	store(c, a, get("/r"), 60, strings.Replace(publicBlock, "Content-Length: 5\r\n", "", 1), "0123456789")
	lines := "Cache-Control: public, max-age=60\r\nContent-Type: text/plain\r\nETag: \"v1\"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
	cases := []struct {
		fields []string
		want   string
	}{
		{[]string{"Range", "bytes=2-4"}, "HTTP/1.1 206 Partial Content\r\n" + lines + "Content-Range: bytes 2-4/10\r\nContent-Length: 3\r\nAge: 0\r\n\r\n234"},
		{[]string{"range", " BYTES = -3 "}, "HTTP/1.1 206 Partial Content\r\n" + lines + "Content-Range: bytes 7-9/10\r\nContent-Length: 3\r\nAge: 0\r\n\r\n789"},
		{[]string{"Range", "bytes=8-"}, "HTTP/1.1 206 Partial Content\r\n" + lines + "Content-Range: bytes 8-9/10\r\nContent-Length: 2\r\nAge: 0\r\n\r\n89"},
		{[]string{"Range", "bytes=8-99999999999999999999999"}, "HTTP/1.1 206 Partial Content\r\n" + lines + "Content-Range: bytes 8-9/10\r\nContent-Length: 2\r\nAge: 0\r\n\r\n89"},
		{[]string{"Range", "bytes=10-"}, "HTTP/1.1 416 Range Not Satisfiable\r\n" + lines + "Content-Range: bytes */10\r\nContent-Length: 0\r\nAge: 0\r\n\r\n"},
		{[]string{"Range", "bytes=-0"}, "HTTP/1.1 416 Range Not Satisfiable\r\n" + lines + "Content-Range: bytes */10\r\nContent-Length: 0\r\nAge: 0\r\n\r\n"},
		{[]string{"If-None-Match", "\"a\", W/\"v1\""}, "HTTP/1.1 304 Not Modified\r\nCache-Control: public, max-age=60\r\nETag: \"v1\"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\nAge: 0\r\n\r\n"},
		{[]string{"If-None-Match", "\"a\"", "If-None-Match", "\"v1\""}, "HTTP/1.1 304 Not Modified\r\nCache-Control: public, max-age=60\r\nETag: \"v1\"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\nAge: 0\r\n\r\n"},
		{[]string{"If-None-Match", "*"}, "HTTP/1.1 304 Not Modified\r\nCache-Control: public, max-age=60\r\nETag: \"v1\"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\nAge: 0\r\n\r\n"},
		{[]string{"If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"}, "HTTP/1.1 304 Not Modified\r\nCache-Control: public, max-age=60\r\nETag: \"v1\"\r\nLast-Modified: Sun, 06 Nov 1994 08:49:37 GMT\r\nAge: 0\r\n\r\n"},
	}
	full := "HTTP/1.1 200 OK\r\n" + lines + "Content-Length: 10\r\nAge: 0\r\n\r\n0123456789"
	whole := [][]string{
		{"Range", "bytes=0-1,3-4"}, // several ranges
		{"Range", "bytes=5-2"},     // last before first
		{"Range", "items=0-1"},     // another unit
		{"Range", "bytes=-"},       // neither
		{"Range", "bytes=0-1", "If-Range", "\"v2\""},
		{"Range", "bytes=0-1", "If-Range", "W/\"v1\""}, // If-Range compares strongly
		{"If-None-Match", "\"v2\""},
		{"If-Modified-Since", "Sat, 05 Nov 1994 08:49:37 GMT"},
		{"If-Modified-Since", "yesterday"},
	}
	for _, w := range whole {
		cases = append(cases, struct {
			fields []string
			want   string
		}{w, full})
	}
	for _, tc := range cases {
		if got := answer(c, a, get("/r", tc.fields...), ""); got != tc.want {
			t.Errorf("%q:\n%q\nwant\n%q", tc.fields, got, tc.want)
		}
	}
	// If-Range naming the ETag, or the exact Last-Modified: the range
	for _, v := range []string{"\"v1\"", "Sun, 06 Nov 1994 08:49:37 GMT"} {
		if got := answer(c, a, get("/r", "Range", "bytes=0-0", "If-Range", v), ""); !strings.HasPrefix(got, "HTTP/1.1 206 ") {
			t.Errorf("If-Range %s: %q", v, got)
		}
	}
	// a HEAD never gets a range
	h := get("/r", "Range", "bytes=0-0")
	h.Method = "HEAD"
	if got := answer(c, a, h, ""); !strings.HasPrefix(got, "HTTP/1.1 200 ") || strings.HasSuffix(got, "0123456789") {
		t.Errorf("HEAD with Range: %q", got)
	}
	// an empty body: any range is 416
	store(c, a, get("/empty"), 60, "", "")
	if got := answer(c, a, get("/empty", "Range", "bytes=0-"), ""); !strings.HasPrefix(got, "HTTP/1.1 416 ") {
		t.Errorf("empty body: %q", got)
	}
}

func TestTimeToLive(t *testing.T) {
	c, clk := newTest(Options{})
	a := c.NewApp()
	store(c, a, get("/t"), 2, "", "x")
	clk.ms += 2000
	if answer(c, a, get("/t"), "") == "" {
		t.Fatal("expired at its time to live, not after it")
	}
	clk.ms++
	if answer(c, a, get("/t"), "") != "" {
		t.Fatal("answered after its time to live")
	}
	if s := a.Stats(); s.Entries != 0 || s.Bytes != 0 || s.Evictions != 0 {
		t.Errorf("an expired entry asked for: %+v", s)
	}
	// the sweep drops expired entries every tenth tick
	store(c, a, get("/s"), 1, "", "x")
	clk.ms += 1001
	for i := 1; i < purgeEvery; i++ {
		c.Sweep()
	}
	if n, _ := c.Len(); n != 1 {
		t.Fatalf("purged before the tenth tick: %d", n)
	}
	c.Sweep()
	if n, size := c.Len(); n != 0 || size != 0 || a.Stats().Entries != 0 {
		t.Fatalf("not purged: %d entries, %d bytes", n, size)
	}
}

// the size an entry counts: 512 + its key + its lines three
// times + its body (twice under 16 KB)
func TestEntrySizeCountsTheKey(t *testing.T) {
	c, _ := newTest(Options{})
	a := c.NewApp()
	host := strings.Repeat("h", 8000)
	q := &Query{Port: 8080, Host: host, Target: "/k", Method: "GET"}
	store(c, a, q, 60, "X-A: 1\r\n", "hello")
	key := len("http 8080 ") + len(host) + len(" /k")
	want := int64(512 + key + len("X-A: 1\r\n")*3 + 5*2)
	if s := a.Stats(); s.Bytes != want {
		t.Errorf("bytes %d, want %d", s.Bytes, want)
	}
	big := strings.Repeat("b", joinedBody)
	store(c, a, get("/big"), 60, "", big)
	if s := a.Stats(); s.Bytes != want+int64(512+len("http 8080 localhost:8080 /big")+joinedBody) {
		t.Errorf("a body of %d counted %d", joinedBody, s.Bytes-want)
	}
}

func TestBudgetEvictsTheLeastRecentlyUsed(t *testing.T) {
	// room for three entries of about 1 KB
	c, _ := newTest(Options{MaxSize: 3 * 1100})
	a := c.NewApp()
	body := strings.Repeat("b", 250) // 512 + ~30 key + 500
	for i := 0; i < 3; i++ {
		store(c, a, get("/"+strconv.Itoa(i)), 60, "", body)
	}
	if n, _ := c.Len(); n != 3 {
		t.Fatalf("%d entries", n)
	}
	answer(c, a, get("/0"), "") // /0 is now the most recently used
	store(c, a, get("/3"), 60, "", body)
	if answer(c, a, get("/1"), "") != "" {
		t.Error("/1, the least recently used, was kept")
	}
	for _, p := range []string{"/0", "/2", "/3"} {
		if answer(c, a, get(p), "") == "" {
			t.Errorf("%s was evicted", p)
		}
	}
	s := a.Stats()
	if s.Evictions != 1 || s.Entries != 3 || s.Stores != 4 {
		t.Errorf("stats %+v", s)
	}
	if _, size := c.Len(); size > 3*1100 || size != s.Bytes {
		t.Errorf("%d bytes held, stats say %d", size, s.Bytes)
	}
	// replacing an entry is not an eviction
	store(c, a, get("/3"), 60, "", body)
	if s := a.Stats(); s.Evictions != 1 || s.Entries != 3 {
		t.Errorf("after a replace: %+v", s)
	}
	// larger than the whole budget: not stored, nothing evicted
	store(c, a, get("/huge"), 60, "", strings.Repeat("h", 4000))
	if n, _ := c.Len(); n != 3 || answer(c, a, get("/huge"), "") != "" {
		t.Error("an entry larger than the budget was stored")
	}
}

func TestEntriesBoundedInNumber(t *testing.T) {
	// one per KB of the budget: 4
	c, _ := newTest(Options{MaxSize: 4096 * 10, MaxEntries: 4})
	a := c.NewApp()
	for i := 0; i < 6; i++ {
		store(c, a, get("/"+strconv.Itoa(i)), 60, "", "")
	}
	if n, _ := c.Len(); n != 4 {
		t.Errorf("%d entries, want 4", n)
	}
	if s := a.Stats(); s.Evictions != 2 {
		t.Errorf("evictions %d", s.Evictions)
	}
	if d := New(Options{MaxSize: 64 << 20}); d.maxEntries != 65536 {
		t.Errorf("default bound %d, want 65536", d.maxEntries)
	}
}

func TestInvalidate(t *testing.T) {
	c, _ := newTest(Options{})
	a, b := c.NewApp(), c.NewApp()
	store(c, a, get("/a"), 60, "", "a")
	store(c, b, get("/b"), 60, "", "b")
	// a response on its way when an instance attaches is not stored
	cp := c.Begin(a, get("/late"), a.Epoch(), 60, 200, nil, nil, []byte("x"))
	c.Invalidate(a)
	cp.Commit()
	if answer(c, a, get("/a"), "") != "" || answer(c, a, get("/late"), "") != "" {
		t.Error("a's entries outlived its invalidation")
	}
	if answer(c, b, get("/b"), "") == "" {
		t.Error("b's entry went with a's")
	}
	if s := a.Stats(); s.Entries != 0 || s.Bytes != 0 {
		t.Errorf("a's stats %+v", s)
	}
}

func TestParseRange(t *testing.T) {
	cases := []struct {
		v       string
		size    int
		a, z, r int
	}{
		{"bytes=0-0", 10, 0, 0, rangeOne},
		{"bytes=0-", 10, 0, 9, rangeOne},
		{"bytes=-20", 10, 0, 9, rangeOne},
		{"bytes=9-100", 10, 9, 9, rangeOne},
		{"bytes=10-", 10, 0, 0, rangeUnsatisfiable},
		{"bytes=0-", 0, 0, 0, rangeUnsatisfiable},
		{"bytes=-0", 10, 0, 0, rangeUnsatisfiable},
		{"bytes=3-2", 10, 0, 0, rangeIgnored},
		{"bytes=1-2,4-5", 10, 0, 0, rangeIgnored},
		{"bytes=a-b", 10, 0, 0, rangeIgnored},
		{"bytes 0-1", 10, 0, 0, rangeIgnored},
		{"\tBytes\t=\t1\t-\t2\t", 10, 1, 2, rangeOne},
		{"bytes=99999999999999999999999999-", 10, 0, 0, rangeUnsatisfiable},
	}
	for _, tc := range cases {
		a, z, r := parseRange([]byte(tc.v), tc.size)
		if r != tc.r || (r == rangeOne && (a != tc.a || z != tc.z)) {
			t.Errorf("parseRange(%q, %d) = %d, %d, %d; want %d, %d, %d", tc.v, tc.size, a, z, r, tc.a, tc.z, tc.r)
		}
	}
}

// The hit path: Lookup and Append into a buffer with room, as a connection does, take
// no allocation (issue 25: a cached hello costs the router no more than nginx's).
func TestHitAllocatesNothing(t *testing.T) {
	c, _ := newTest(Options{})
	a := c.NewApp()
	store(c, a, get("/hello"), 60, publicBlock, "hello")
	q := get("/hello", "Accept", "*/*", "If-None-Match", "\"zz\"", "Range", "bytes=0-1")
	dst := make([]byte, 0, 4096)
	n := testing.AllocsPerRun(1000, func() {
		ans, ok := c.Lookup(a, q)
		if !ok {
			t.Fatal("miss")
		}
		dst = ans.Append(dst[:0], "", false)
	})
	if n != 0 {
		t.Errorf("a hit allocates %v times", n)
	}
	// reading the request's fields for it neither
	name, value := []byte("If-Modified-Since"), []byte("Sun, 06 Nov 1994 08:49:37 GMT")
	if n := testing.AllocsPerRun(1000, func() {
		var q Query
		q.Field(name, value)
	}); n != 0 {
		t.Errorf("Field allocates %v times", n)
	}
}

func BenchmarkHit(b *testing.B) {
	c, _ := newTest(Options{})
	a := c.NewApp()
	store(c, a, get("/hello"), 60, publicBlock, "hello")
	q := get("/hello")
	dst := make([]byte, 0, 4096)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		dst := make([]byte, 0, 4096)
		for pb.Next() {
			ans, _ := c.Lookup(a, q)
			dst = ans.Append(dst[:0], "", false)
		}
	})
	_ = dst
}

// What an h2 answer is made of: the status, the fields and the body Append writes.
func TestAnswerParts(t *testing.T) {
	c, _ := newTest(Options{})
	a := c.NewApp()
	store(c, a, get("/p"), 60, "X-A: 1\r\nETag: \"v\"\r\n", "0123456789")
	cases := []struct {
		fields []string
		status int
		lines  string
		body   string
	}{
		{nil, 200, "X-A: 1\r\nETag: \"v\"\r\nContent-Length: 10\r\nAge: 0\r\n", "0123456789"},
		{[]string{"Range", "bytes=2-4"}, 206, "X-A: 1\r\nETag: \"v\"\r\nContent-Range: bytes 2-4/10\r\nContent-Length: 3\r\nAge: 0\r\n", "234"},
		{[]string{"Range", "bytes=20-"}, 416, "X-A: 1\r\nETag: \"v\"\r\nContent-Range: bytes */10\r\nContent-Length: 0\r\nAge: 0\r\n", ""},
		{[]string{"If-None-Match", "\"v\""}, 304, "ETag: \"v\"\r\nAge: 0\r\n", ""},
	}
	for _, tc := range cases {
		ans, ok := c.Lookup(a, get("/p", tc.fields...))
		if !ok {
			t.Fatalf("%q: miss", tc.fields)
		}
		if ans.Status() != tc.status || string(ans.AppendFields(nil)) != tc.lines || string(ans.Body(false)) != tc.body || ans.Body(true) != nil {
			t.Errorf("%q: %d %q %q", tc.fields, ans.Status(), ans.AppendFields(nil), ans.Body(false))
		}
		if !strings.HasSuffix(string(ans.Append(nil, "", false)), "\r\n"+tc.lines+"\r\n"+tc.body) {
			t.Errorf("%q: Append is not its parts: %q", tc.fields, ans.Append(nil, "", false))
		}
	}
}

// Hits, stores, invalidations and sweeps from many goroutines at once (run with -race):
// the counters stay true to what is held.
func TestConcurrentUse(t *testing.T) {
	c, _ := newTest(Options{MaxSize: 16 << 10})
	apps := []*App{c.NewApp(), c.NewApp()}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			dst := make([]byte, 0, 1024)
			for i := 0; i < 2000; i++ {
				a := apps[(g+i)%2]
				q := get("/" + strconv.Itoa(i%50))
				if ans, ok := c.Lookup(a, q); ok {
					dst = ans.Append(dst[:0], "", false)
				} else {
					store(c, a, q, 60, "X: 1\r\n", strings.Repeat("b", i%300))
				}
				switch {
				case i%500 == 0:
					c.Invalidate(a)
				case i%97 == 0:
					c.Sweep()
				}
			}
		}(g)
	}
	wg.Wait()
	n, size := c.Len()
	var entries, bytes int64
	for _, a := range apps {
		s := a.Stats()
		entries += s.Entries
		bytes += s.Bytes
	}
	if int64(n) != entries || size != bytes || size > 16<<10 {
		t.Errorf("%d entries of %d bytes held; the apps count %d of %d", n, size, entries, bytes)
	}
}
