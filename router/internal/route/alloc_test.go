package route_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"httpsys/router/internal/route"
)

// A table like a server's: apps on prefixes of every category, on two ports.
func serverTable(tb testing.TB) *route.Table {
	return table(tb,
		reg{"http://+:8080/api/", "api"},
		reg{"http://+:8080/api/v2/", "api2"},
		reg{"http://example.com:8080/", "site"},
		reg{"http://www.example.com:8080/", "www"},
		reg{"http://example.com:8080/static/", "static"},
		reg{"http://127.0.0.1:8080/admin/", "admin"},
		reg{"http://[::1]:8080/admin/", "admin6"},
		reg{"http://*:8080/", "fallback"},
		reg{"https://+:8443/", "tls"},
	)
}

// The hot path: an ordinary path with a known Host (in any case, with or without a
// port), an IP-bound prefix, the weak wildcard, and the answers 404 and 400, cost no
// allocation, from any number of goroutines (no cache to fill or lock).
func TestRouteDoesNotAllocate(t *testing.T) {
	tb := serverTable(t)
	for _, c := range []struct {
		args route.Args
		want any
	}{
		{route.Args{Port: 8080, Host: "example.com:8080", LocalAddress: "10.0.0.1", Path: "/index.html"}, "site"},
		{route.Args{Port: 8080, Host: "Example.COM", LocalAddress: "10.0.0.1", Path: "/Static/app.js?v=3"}, "static"},
		{route.Args{Port: 8080, Host: "WWW.example.com:8080", Path: "/"}, "www"},
		{route.Args{Port: 8080, Host: "example.com", Path: "/api/v2/users/7"}, "api2"},
		{route.Args{Port: 8080, Host: "other.org", LocalAddress: "127.0.0.1", Path: "/admin/x"}, "admin"},
		{route.Args{Port: 8080, Host: "other.org", LocalAddress: "::ffff:127.0.0.1", Path: "/admin/x"}, "admin"},
		{route.Args{Port: 8080, Host: "[::1]:8080", LocalAddress: "::1", Path: "/admin/x"}, "admin6"},
		{route.Args{Port: 8080, Host: "other.org", LocalAddress: "10.0.0.1", Path: "/x"}, "fallback"},
		{route.Args{Scheme: "https", Port: 8443, Host: "a", Path: "/x"}, "tls"},
		{route.Args{Port: 9000, Host: "a", Path: "/x"}, 400},
	} {
		r := tb.Route(c.args)
		if got := any(r.Status); r.Target != nil {
			got = r.Target
			if got != c.want {
				t.Errorf("%+v: %+v", c.args, r)
			}
		} else if got != c.want {
			t.Errorf("%+v: %+v", c.args, r)
		}
		if n := testing.AllocsPerRun(200, func() { tb.Route(c.args) }); n != 0 {
			t.Errorf("%+v: %v allocations per route", c.args, n)
		}
	}
}

// Route runs from many goroutines while prefixes come and go: every answer is one a
// whole table gives (here: the api prefix or the root, never a 404 or a 400 of a
// table caught half-changed).
func TestRouteWhileTheTableChanges(t *testing.T) {
	tb := table(t, reg{"http://+:8080/", "root"}, reg{"http://example.com:8080/", "site"})
	api := route.Prefix{Prefix: "http://+:8080/api/"}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Value
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				r := tb.Route(route.Args{Port: 8080, Host: "example.com", Path: "/api/x"})
				if r.Target != "api" && r.Target != "root" {
					bad.Store(r)
				}
			}
		}()
	}
	for i := range 2000 {
		if i%2 == 0 {
			if err := tb.Add(api, "api"); err != nil {
				t.Error(err)
			}
		} else if !tb.Remove(api) {
			t.Error("Remove")
		}
	}
	stop.Store(true)
	wg.Wait()
	if r := bad.Load(); r != nil {
		t.Errorf("a route saw %+v", r)
	}
}

func benchRoute(b *testing.B, a route.Args) {
	tb := serverTable(b)
	b.ReportAllocs()
	for b.Loop() {
		tb.Route(a)
	}
}

func BenchmarkRouteStrong(b *testing.B) {
	benchRoute(b, route.Args{Port: 8080, Host: "example.com:8080", LocalAddress: "127.0.0.1", Path: "/api/v2/users/7?fields=name"})
}

func BenchmarkRouteExplicitHost(b *testing.B) {
	benchRoute(b, route.Args{Port: 8080, Host: "example.com:8080", LocalAddress: "127.0.0.1", Path: "/static/app.js"})
}

func BenchmarkRouteExplicitHostCapitals(b *testing.B) {
	benchRoute(b, route.Args{Port: 8080, Host: "WWW.Example.COM:8080", LocalAddress: "127.0.0.1", Path: "/index.html"})
}

func BenchmarkRouteIPv6Bound(b *testing.B) {
	benchRoute(b, route.Args{Port: 8080, Host: "[::1]:8080", LocalAddress: "::1", Path: "/admin/users"})
}

func BenchmarkRouteWeak(b *testing.B) {
	benchRoute(b, route.Args{Port: 8080, Host: "other.org", LocalAddress: "10.0.0.1", Path: "/hello"})
}

// A target that needs canonicalising (escapes, dot segments): allocates.
func BenchmarkRouteCanonicalised(b *testing.B) {
	benchRoute(b, route.Args{Port: 8080, Host: "example.com", LocalAddress: "10.0.0.1", Path: "/static/%2e%2e/API/./v2/x%41?q"})
}

func BenchmarkRouteParallel(b *testing.B) {
	tb := serverTable(b)
	a := route.Args{Port: 8080, Host: "example.com:8080", LocalAddress: "127.0.0.1", Path: "/static/app.js"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			tb.Route(a)
		}
	})
}
