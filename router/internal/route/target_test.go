package route_test

import (
	"testing"

	"httpsys/router/internal/route"
)

// The cases of test/unit/urlprefix-target.test.js and of the JS router's request-target
// tests (removed with it, issue 25).

func TestCanonicalizeTargetOriginForm(t *testing.T) {
	for _, c := range [][2]string{
		{"/", "/"},
		{"/a/b?x=/../y", "/a/b?x=/../y"},
		{"/a/./b/../c", "/a/c"},
		{"/a/b/..", "/a/"},
		{"/a/b/.", "/a/b/"},
		{"/..", "/"},
		{"/../../x", "/x"},
		{"/a\\b\\..\\c", "/a/c"},
		{"/%2e%2E/x", "/x"},
		{"/a/%2e/b", "/a/b"},
		{"/%41%62c%7e%2d%5f%2E", "/Abc~-_."},
		{"/a%2Fb/%2f", "/a%2Fb/%2f"},
		{"/a%20b/%C3%A9/%25", "/a%20b/%C3%A9/%25"},
		{"/%252e%252e/x", "/%252e%252e/x"},
		{"/a%5C..%5Cb", "/a%5C..%5Cb"},
		{"/.well-known/x", "/.well-known/x"},
		{"/a/...", "/a/..."},
		{"/a//b/../c", "/a//c"},
		{"/A/B/../C?Q=%2e", "/A/C?Q=%2e"},
		{"/a/..?x", "/?x"},
		{"/a#frag/../b", "/a#frag/../b"},
		{"/caf\xc3\xa9/./x", "/caf\xc3\xa9/x"},
		{"*", "*"},
	} {
		url, host, ok := route.CanonicalizeTarget(c[0])
		if url != c[1] || host != "" || !ok {
			t.Errorf("CanonicalizeTarget(%q) = %q, %q, %v; want %q", c[0], url, host, ok, c[1])
		}
	}
}

func TestCanonicalizeTargetAbsoluteForm(t *testing.T) {
	for _, c := range [][3]string{
		{"http://internal.local/reset", "/reset", "internal.local"},
		{"HTTP://Internal.Local:8080/a/../b?x=1", "/b?x=1", "Internal.Local:8080"},
		{"https://h", "/", "h"},
		{"http://h?q", "/?q", "h"},
		{"http://[::1]:81/x", "/x", "[::1]:81"},
	} {
		url, host, ok := route.CanonicalizeTarget(c[0])
		if url != c[1] || host != c[2] || !ok {
			t.Errorf("CanonicalizeTarget(%q) = %q, %q, %v; want %q, %q", c[0], url, host, ok, c[1], c[2])
		}
	}
}

func TestCanonicalizeTargetRefusesMalformed(t *testing.T) {
	for _, raw := range []string{
		"/x%zz", "/100%", "/a%4", "ftp://h/x", "http:/x", "http:///x", "http://:80/x", "http://u@h/x",
		`http://h"/x`, "http://h<>/x", "http://h\xe9/x", "x/y", "",
	} {
		if url, host, ok := route.CanonicalizeTarget(raw); ok || url != raw || host != "" {
			t.Errorf("CanonicalizeTarget(%q) = %q, %q, %v; want malformed", raw, url, host, ok)
		}
	}
}

// An ordinary target is handed over as it is, without a copy.
func TestCanonicalizeTargetKeepsAnOrdinaryTarget(t *testing.T) {
	raw := "/api/users?page=2&sort=/../x"
	if n := testing.AllocsPerRun(100, func() { route.CanonicalizeTarget(raw) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestCanonicalTarget(t *testing.T) {
	for _, c := range []struct {
		raw, path, host string
		absolute, ok    bool
	}{
		{"", "/", "", false, true},
		{"*", "/", "", false, true},
		{"/A/%41%2f%2F/\xc3\xa9", "/a/a%2f%2f/%c3%a9", "", false, true},
		{"/a/./b/../%2E%2e/c\\d?q#f", "/c/d", "", false, true},
		{"/%7E%5f", "/~_", "", false, true},
		{"HTTPS://u:p@Example.com:80/X", "/x", "Example.com:80", true, true},
		{"http://h", "/", "h", true, true},
		{"http:///x", "/x", "", true, true},
		{"/a%zz", "", "", false, false},
		{"x", "", "", false, false},
		{"http:/x", "", "", false, false},
	} {
		got, ok := route.CanonicalTarget(c.raw)
		if ok != c.ok || got.Path != c.path || got.Host != c.host || got.Absolute != c.absolute {
			t.Errorf("CanonicalTarget(%q) = %+v, %v", c.raw, got, ok)
		}
	}
}

func TestIsInvalidUrl(t *testing.T) {
	for _, s := range []string{"/x%zz", "/100%", "/a%4", "/%", "http://h/%zz", "HTTPS://h/a%g1", "ftp://x/", "relative"} {
		if !route.IsInvalidUrl(s) {
			t.Errorf("%q is an invalid URL", s)
		}
	}
	// a 400 for these is about the host
	for _, s := range []string{"/", "*", "", "/ok%41", "/%2F%2f", "/q?x=%zz", "/p#%", "http://h/ok", "http://h%zz/a", "http://h?%"} {
		if route.IsInvalidUrl(s) {
			t.Errorf("%q is a valid URL", s)
		}
	}
}

func TestIsValidHostPort(t *testing.T) {
	for _, h := range []string{"", "a", "a:", "a:80", "[::1]", "[::1]:", "[::1]:8080", "a:0080"} {
		if !route.IsValidHostPort(h) {
			t.Errorf("%q has a valid port", h)
		}
	}
	for _, h := range []string{"a:'onmouseover=x", "a:80a", "a:8:0", "[::1", "[::1]x", "[::1]:a", "a:-1", "a: 80"} {
		if route.IsValidHostPort(h) {
			t.Errorf("%q has a bad port", h)
		}
	}
}

func TestHostnameOf(t *testing.T) {
	for _, c := range [][2]string{
		{"Example.COM:8080", "example.com"},
		{"example.com", "example.com"},
		{"[::1]:80", "[::1]"},
		{"[::1", "[::1"},
		{"a:b:c", "a"},
		{"", ""},
		{"B\xc4", "b\xc4"},
	} {
		if got := route.HostnameOf(c[0]); got != c[1] {
			t.Errorf("HostnameOf(%q) = %q", c[0], got)
		}
	}
}

func TestAddressKey(t *testing.T) {
	for _, c := range [][2]string{
		{"127.0.0.1", "127.0.0.1"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"[::ffff:7f00:1]", "127.0.0.1"},
		{"::1", "::1"},
		{"0:0:0:0:0:0:0:1", "::1"},
		{"fe80::1%eth0", "fe80::1"},
		{"[fe80::1%25eth0]", "fe80::1"},
		{"2001:DB8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},
		{"[127.0.0.1]", "127.0.0.1"},
		{"[::1", "::"}, // the JS drops the first and the last character
		{"01.2.3.4", ""},
		{"garbage", ""},
		{"", ""},
	} {
		if got := route.AddressKey(c[0]); got != c[1] {
			t.Errorf("AddressKey(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// The JS test's walk through targets built from the characters that matter: the app's
// url routes as the raw target does, and canonicalising is a fixed point.
func TestCanonicalizeTargetRoutesAsTheRawTarget(t *testing.T) {
	var tb route.Table
	for _, p := range []string{"/", "/a/", "/a/b/", "/b/", "/A./", "/~/", "/.a/", "/a%2fb/"} {
		if err := tb.Add(route.Prefix{Prefix: "http://+:80" + p}, p); err != nil {
			t.Fatal(err)
		}
	}
	for _, raw := range walk(3000) {
		url, _, ok := route.CanonicalizeTarget(raw)
		if !ok {
			continue
		}
		if a, b := tb.Route(route.Args{Port: 80, Host: "a", Path: url}), tb.Route(route.Args{Port: 80, Host: "a", Path: raw}); a != b {
			t.Errorf("%q routes to %+v, its url %q to %+v", raw, b, url, a)
		}
		if again, _, _ := route.CanonicalizeTarget(url); again != url {
			t.Errorf("%q -> %q -> %q", raw, url, again)
		}
	}
}

var pieces = []string{"a", "B", ".", "..", "/", "/", "%2e", "%2E", "%41", "%2f", "%25", "\\", "~", "%7e", "?", "/..", "/.", "x"}

func walk(n int) []string {
	seed := uint32(12345)
	rand := func(k int) int {
		seed = seed*1103515245 + 12345
		return int(seed % uint32(k))
	}
	out := make([]string, n)
	for i := range out {
		t := "/"
		for range 1 + rand(10) {
			t += pieces[rand(len(pieces))]
		}
		out[i] = t
	}
	return out
}
