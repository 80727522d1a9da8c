package route_test

import (
	"strings"
	"testing"

	"httpsys/router/internal/route"
)

var fuzzTargets = []string{
	"/", "*", "", "/a/./b/../c", "/%2e%2E/x", "/a%2Fb/%2f", "/a\\b\\..\\c", "/A/B/../C?Q=%2e", "/x%zz", "/100%",
	"http://u@h/x", "HTTP://Internal.Local:8080/a/../b?x=1", "http:///x", "/caf\xc3\xa9", "/.well-known/x", "/a#f/../b",
}

// FuzzCanonical: the canonical path is what the JS's invariants say it is, whatever
// the target: CanonicalTarget fails exactly when IsInvalidUrl says so; its path is a
// fixed point with no capital, no '\' and no dot segment; the app's target
// (CanonicalizeTarget) is a fixed point too, and canonicalises to the same path as the
// raw target (the app sees what routing saw).
func FuzzCanonical(f *testing.F) {
	for _, s := range fuzzTargets {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		c, ok := route.CanonicalTarget(raw)
		if ok == route.IsInvalidUrl(raw) {
			t.Fatalf("CanonicalTarget(%q) ok %v, IsInvalidUrl %v", raw, ok, route.IsInvalidUrl(raw))
		}
		url, host, appOK := route.CanonicalizeTarget(raw)
		if !ok {
			if appOK {
				t.Fatalf("CanonicalizeTarget(%q) = %q: a target routing refuses", raw, url)
			}
			return
		}
		p := c.Path
		if p == "" || p[0] != '/' || strings.ContainsAny(p, "\\ABCDEFGHIJKLMNOPQRSTUVWXYZ?#") {
			t.Fatalf("CanonicalTarget(%q).Path = %q", raw, p)
		}
		for _, s := range strings.Split(p, "/") {
			if s == "." || s == ".." {
				t.Fatalf("CanonicalTarget(%q).Path = %q has a dot segment", raw, p)
			}
		}
		if again, _ := route.CanonicalTarget(p); again.Path != p || again.Absolute {
			t.Fatalf("CanonicalTarget(%q) = %q, then %q", raw, p, again.Path)
		}
		if !appOK {
			if !c.Absolute && raw != "" { // "" is no target an app can be given
				t.Fatalf("CanonicalizeTarget(%q) refused an origin-form target routing takes", raw)
			}
			return
		}
		if again, _, _ := route.CanonicalizeTarget(url); again != url {
			t.Fatalf("CanonicalizeTarget(%q) = %q, then %q", raw, url, again)
		}
		if u, _ := route.CanonicalTarget(url); u.Path != p {
			t.Fatalf("%q routes on %q, the app's %q on %q", raw, p, url, u.Path)
		}
		if host != c.Host || (host != "") != c.Absolute {
			t.Fatalf("CanonicalizeTarget(%q) host %q, CanonicalTarget host %q", raw, host, c.Host)
		}
	})
}

// FuzzRoute: whatever the target, Host and local address, Route answers a target,
// 400 or 404; the fast path (an ordinary target matched as it is) answers as the
// canonical path does; and the app's target with its Host routes as the raw one did.
func FuzzRoute(f *testing.F) {
	for _, s := range fuzzTargets {
		f.Add(s, "example.com:8080", "127.0.0.1")
	}
	f.Add("/admin/x", "other", "::ffff:127.0.0.1")
	f.Add("/ADMIN", "[::1]:8080", "[::1]")
	f.Add("/Static/x", "WWW.EXAMPLE.COM", "")
	tb := serverTable(f)
	f.Fuzz(func(t *testing.T, path, host, local string) {
		a := route.Args{Port: 8080, Host: host, LocalAddress: local, Path: path}
		r := tb.Route(a)
		if r.Target == nil && r.Status != 400 && r.Status != 404 || r.Target != nil && (r.Status != 0 || r.Prefix == "") {
			t.Fatalf("Route(%+v) = %+v", a, r)
		}
		c, ok := route.CanonicalTarget(path)
		if !ok {
			if r.Status != 400 {
				t.Fatalf("Route(%+v) = %+v for a malformed target", a, r)
			}
			return
		}
		b := a
		b.Path = c.Path
		if c.Absolute {
			b.Host = c.Host
		}
		if rb := tb.Route(b); rb != r {
			t.Fatalf("Route(%+v) = %+v, on its canonical path %+v", a, r, rb)
		}
		if url, h, ok := route.CanonicalizeTarget(path); ok {
			b := a
			b.Path = url
			if h != "" {
				b.Host = h
			}
			if rb := tb.Route(b); rb != r {
				t.Fatalf("Route(%+v) = %+v, the app's target %+v", a, r, rb)
			}
		}
	})
}
