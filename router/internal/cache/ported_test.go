package cache

import (
	"strconv"
	"strings"
	"testing"
)

// The JS router's output-cache test "parseRange" (removed with it, issue 25), case for
// case: RFC 9110 14.1.2's one range, the ranges a 416 answers, and what is ignored
// (the whole body goes out).
func TestParseRangeAsTheHubs(t *testing.T) {
	for _, c := range []struct {
		v    string
		size int
		a, z int
	}{
		// a single range
		{"bytes=0-99", 1000, 0, 99},
		{"bytes=10-10", 1000, 10, 10},
		{"bytes=0-0", 1, 0, 0},
		{"bytes=999-999", 1000, 999, 999},
		// open-ended
		{"bytes=500-", 1000, 500, 999},
		{"bytes=0-", 1000, 0, 999},
		{"bytes=999-", 1000, 999, 999},
		// suffix
		{"bytes=-100", 1000, 900, 999},
		{"bytes=-1", 1000, 999, 999},
		{"bytes=-1000", 1000, 0, 999},
		{"bytes=-2000", 1000, 0, 999}, // longer than the body: all of it
		// the end beyond the body is clamped
		{"bytes=0-5000", 1000, 0, 999},
		{"bytes=900-1000", 1000, 900, 999},
		{"bytes=0-99999999999999999999", 1000, 0, 999},
		// the unit is case-insensitive; whitespace around the parts is tolerated
		{"BYTES=0-9", 1000, 0, 9},
		{"Bytes = 5 - 9", 1000, 5, 9},
		{" bytes=-10 ", 1000, 990, 999},
	} {
		if a, z, r := parseRange([]byte(c.v), c.size); r != rangeOne || a != c.a || z != c.z {
			t.Errorf("parseRange(%q, %d) = %d, %d, %d; want %d-%d", c.v, c.size, a, z, r, c.a, c.z)
		}
	}
	for _, c := range []struct {
		v    string
		size int
	}{
		{"bytes=1000-", 1000}, // first = size
		{"bytes=1000-1000", 1000},
		{"bytes=1500-", 1000}, // first > size
		{"bytes=1500-1600", 1000},
		{"bytes=-0", 1000}, // an empty suffix
		{"bytes=-00", 1000},
		// an empty body has no byte to give: 416, never "Content-Range: bytes 0--1/0"
		{"bytes=0-", 0},
		{"bytes=0-0", 0},
		{"bytes=-5", 0},
	} {
		if _, _, r := parseRange([]byte(c.v), c.size); r != rangeUnsatisfiable {
			t.Errorf("parseRange(%q, %d) = %d; want unsatisfiable (416)", c.v, c.size, r)
		}
	}
	for _, v := range []string{
		"bytes=50-10", "bytes=1-0", "bytes=2000-1000", // last < first: invalid
		"bytes=0-1,5-9", "bytes=0-1, 5-9", "bytes=-5,-1", "bytes=0-1,", // several ranges
		"items=0-1", "bytes 0-1", "bytes=", "bytes=-", "bytes=a-b", "bytes=0x10-20",
		"bytes=1.5-2", "bytes=--1", "bytes=0-1-2", "garbage", "",
	} {
		if _, _, r := parseRange([]byte(v), 1000); r != rangeIgnored {
			t.Errorf("parseRange(%q, 1000) = %d; want ignored (the whole body)", v, r)
		}
	}
}

// The rest of the JS router's OutputCache cases (issue 23) the tests beside this one
// held only in part.

const public60 = "Cache-Control: public, max-age=60\r\n"

func TestAHostWithAnotherPortIsAnotherEntry(t *testing.T) {
	c, _ := newTest(Options{})
	a := c.NewApp()
	// a page that reflects its Host: what one Host made never answers another
	page := func(host string) string { return `<a href="http://` + host + `/next">next</a>` }
	at := func(host string) *Query { q := get("/"); q.Host = host; return q }
	if !store(c, a, at("localhost:1337"), 60, public60, page("localhost:1337")) {
		t.Fatal("not stored")
	}
	if answer(c, a, at("localhost"), "") != "" || answer(c, a, at("localhost:8080"), "") != "" {
		t.Error("Host: localhost:1337 answered another Host")
	}
	if !strings.HasSuffix(answer(c, a, at("localhost:1337"), ""), page("localhost:1337")) {
		t.Error("its own Host missed")
	}
	store(c, a, at("localhost"), 60, public60, page("localhost"))
	if !strings.HasSuffix(answer(c, a, at("localhost"), ""), page("localhost")) || !strings.HasSuffix(answer(c, a, at("localhost:1337"), ""), page("localhost:1337")) {
		t.Error("two Hosts, two entries")
	}
	// the Host's case does not matter; the scheme, the listener's port and the target do
	store(c, a, at("A.Test:8080"), 60, public60, "x")
	if answer(c, a, at("a.test:8080"), "") == "" {
		t.Error("the Host's case made another entry")
	}
	other := at("a.test:8080")
	other.Port = 8081
	secure := at("a.test:8080")
	secure.Secure = true
	target := at("a.test:8080")
	target.Target = "/y"
	for _, q := range []*Query{other, secure, target} {
		if answer(c, a, q, "") != "" {
			t.Errorf("%+v answered from another entry", q)
		}
	}
}

func TestThreeThousandEntriesWith15KBHostsStayWithinA1MBBudget(t *testing.T) {
	c, _ := newTest(Options{MaxSize: 1 << 20})
	a := c.NewApp()
	long := strings.Repeat("h", 15000)
	for i := 0; i < 3000; i++ {
		q := get("/")
		q.Host = long + strconv.Itoa(i)
		store(c, a, q, 60, public60, "small page "+strconv.Itoa(i))
	}
	n, size := c.Len()
	s := a.Stats()
	if size > 1<<20 || n >= (1<<20)/15000 {
		t.Fatalf("%d entries of %d bytes in a 1 MiB budget", n, size)
	}
	if s.Entries != int64(n) || s.Bytes != size || s.Evictions != uint64(3000-n) {
		t.Errorf("stats %+v for %d entries of %d bytes", s, n, size)
	}
	// the most recent ones are kept
	q := get("/")
	q.Host = long + "2999"
	if !strings.HasSuffix(answer(c, a, q, ""), "small page 2999") {
		t.Error("the most recent entry went")
	}
}

func TestAnEntryIsCountedWithItsKeyA200KBURLUnderA100KBBudgetIsNotStored(t *testing.T) {
	c, _ := newTest(Options{MaxSize: 100 * 1024})
	a := c.NewApp()
	store(c, a, get("/"+strings.Repeat("u", 200*1024)), 60, public60, "x")
	if n, _ := c.Len(); n != 0 {
		t.Fatalf("%d entries", n)
	}
}

func TestAtMostOneEntryPerKBOfTheBudget(t *testing.T) {
	c, _ := newTest(Options{MaxSize: 1 << 20})
	a := c.NewApp()
	for i := 0; i < 5000; i++ {
		store(c, a, get("/"+strconv.Itoa(i)), 60, public60, "")
	}
	if n, _ := c.Len(); n != 1024 {
		t.Fatalf("%d entries, want 1024", n)
	}
	if s := a.Stats(); s.Entries != 1024 || s.Evictions != 5000-1024 {
		t.Errorf("stats %+v", s)
	}
	if _, ok := c.Lookup(a, get("/4999")); !ok {
		t.Error("the most recent entry went")
	}
	if _, ok := c.Lookup(a, get("/0")); ok {
		t.Error("the least recently used entry stayed")
	}
	// an explicit bound; storing a key again replaces its entry and evicts nothing
	small, _ := newTest(Options{MaxSize: 1 << 20, MaxEntries: 2})
	b := small.NewApp()
	for _, u := range []string{"/a", "/b", "/c"} {
		store(small, b, get(u), 60, public60, u)
	}
	if _, ok := small.Lookup(b, get("/a")); ok {
		t.Error("/a, the least recently used, stayed")
	}
	store(small, b, get("/c"), 60, public60, "again")
	if n, _ := small.Len(); n != 2 || !strings.HasSuffix(answer(small, b, get("/b"), ""), "/b") {
		t.Errorf("a replace evicted: %d entries", n)
	}
}

func TestAResponseToAClientWithACertificateIsStoredOnlyWhenPublic(t *testing.T) {
	c, _ := newTest(Options{})
	a := c.NewApp()
	withCert := func(target string) *Query { q := get(target); q.Secure = true; q.ClientCert = true; return q }
	withoutCert := func(target string) *Query { q := get(target); q.Secure = true; return q }
	store(c, a, withCert("/"), 60, "Cache-Control: s-maxage=60\r\nContent-Type: text/html\r\n", "hello CN=alice")
	if answer(c, a, withoutCert("/"), "") != "" || answer(c, a, withCert("/"), "") != "" {
		t.Error("a response to a client with a certificate was stored")
	}
	if s := a.Stats(); s.Stores != 0 {
		t.Errorf("stores %d", s.Stores)
	}
	// public: the app says the page is the same for everyone
	store(c, a, withCert("/pub"), 60, public60, "the same for all")
	if answer(c, a, withoutCert("/pub"), "") == "" || answer(c, a, withCert("/pub"), "") == "" {
		t.Error("a public page was not shared")
	}
	// stored for a client without one: not given to one with a certificate
	store(c, a, withoutCert("/anon"), 60, "Cache-Control: s-maxage=60\r\n", "hello anonymous")
	if answer(c, a, withCert("/anon"), "") != "" || answer(c, a, withoutCert("/anon"), "") == "" {
		t.Error("a page that did not say public went to a client with a certificate")
	}
}
