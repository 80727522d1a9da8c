package route_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"httpsys/router/internal/route"
)

// The cases of test/unit/urlprefix.test.js ("RoutingTable").

func mustParse(t testing.TB, s string) route.Prefix {
	t.Helper()
	p, err := route.Parse(s, false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// byString is a Prefix known only by its text, as Add, Remove and Has read it.
func byString(s string) route.Prefix { return route.Prefix{Prefix: s} }

func TestTableRegistrations(t *testing.T) {
	var tb route.Table
	if err := tb.Add(mustParse(t, "HTTP://+:8080/api"), "a"); err != nil {
		t.Fatal(err)
	}
	if err := tb.Add(byString("http://*:80/"), "b"); err != nil {
		t.Fatal(err)
	}
	if err := tb.Add(byString("https://example.com:443/"), "c"); err != nil {
		t.Fatal(err)
	}
	if tb.Len() != 3 || !slices.Equal(tb.Ports(), []int{80, 443, 8080}) {
		t.Errorf("Len %d, Ports %v", tb.Len(), tb.Ports())
	}
	if !tb.Has(byString("http://+:8080/API/")) || tb.Has(byString("http://*:8080/api/")) || tb.Has(byString("not a prefix")) {
		t.Error("Has")
	}
	var got []string
	for _, e := range tb.Entries() {
		got = append(got, e.Prefix.Prefix+" "+e.Target.(string))
	}
	if !slices.Equal(got, []string{"http://+:8080/api/ a", "http://*:80/ b", "https://example.com:443/ c"}) {
		t.Errorf("Entries %v", got)
	}
	if !tb.Remove(byString("http://+:8080/Api")) || tb.Remove(byString("http://+:8080/api/")) || tb.Remove(byString("garbage")) {
		t.Error("Remove")
	}
	if tb.Len() != 2 || !slices.Equal(tb.Ports(), []int{80, 443}) {
		t.Errorf("after Remove: Len %d, Ports %v", tb.Len(), tb.Ports())
	}
	if r := tb.Route(route.Args{Port: 8080, Host: "x", Path: "/api/"}); r.Status != 400 || r.Target != nil {
		t.Errorf("a removed port routes: %+v", r)
	}
}

func TestTableAddRefusesABadPrefix(t *testing.T) {
	var tb route.Table
	var e *route.Error
	for _, p := range []route.Prefix{byString("http://+/"), byString("http://+:0/"), {}} {
		if err := tb.Add(p, "a"); !errors.As(err, &e) {
			t.Errorf("Add(%q) = %v", p.Prefix, err)
		}
	}
	// Add reads the normal form alone: a Prefix whose fields disagree with it is not trusted
	p := mustParse(t, "http://+:80/a/")
	p.Path = "/b/"
	if err := tb.Add(p, "a"); err != nil {
		t.Fatal(err)
	}
	if r := tb.Route(route.Args{Port: 80, Path: "/a/x"}); r.Target != "a" {
		t.Errorf("%+v", r)
	}
}

type named struct{ name string }

func (n named) Name() string { return n.name }

func TestTableConflicts(t *testing.T) {
	for _, c := range [][2]string{
		{"http://+:8080/api/", "http://+:8080/api/"},
		{"http://+:8080/api/", "HTTP://+:8080/API"},
		{"http://Example.com:80/", "http://example.COM:80/"},
		{"http://[::1]:80/", "http://[0:0::1]:80/"},
		{"http://127.0.0.1:80/", "http://[::ffff:127.0.0.1]:80/"},
		{"http://*:80/~u/", "http://*:80/%7Eu/"},
		{"http://+:80/café/", "http://+:80/caf%C3%A9/"},
	} {
		var tb route.Table
		if err := tb.Add(mustParse(t, c[0]), named{"app-one"}); err != nil {
			t.Fatal(err)
		}
		err := tb.Add(mustParse(t, c[1]), named{"app-two"})
		var conflict *route.ConflictError
		if !errors.As(err, &conflict) || conflict.Owner != (named{"app-one"}) || tb.Len() != 1 {
			t.Errorf("%s then %s: %v", c[0], c[1], err)
			continue
		}
		want := "The URL prefix " + mustParse(t, c[1]).Prefix + " is already registered by app-one. " +
			"Stop the other owner or choose another prefix (another path, or another port)."
		if err.Error() != want {
			t.Errorf("message %q", err)
		}
	}
	var tb route.Table
	tb.Add(byString("http://+:80/"), "queue-7")
	if err := tb.Add(byString("http://+:80/"), "x"); err == nil || !strings.HasPrefix(err.Error(), "The URL prefix http://+:80/ is already registered by queue-7.") {
		t.Errorf("a string owner: %v", err)
	}
}

func TestTableNoConflict(t *testing.T) {
	for _, c := range [][2]string{
		{"http://+:80/vroot/", "http://*:80/vroot/"},
		{"http://+:80/vroot/", "http://www.adatum.com:80/vroot/"},
		{"http://127.0.0.1:80/", "http://*:80/"},
		{"http://127.0.0.1:80/", "http://+:80/"},
		{"http://+:80/", "https://+:80/"},
		{"http://+:80/", "http://+:81/"},
		{"http://+:80/a/", "http://+:80/b/"},
		{"http://a.com:80/", "http://b.com:80/"},
	} {
		var tb route.Table
		if err := tb.Add(mustParse(t, c[0]), 1); err != nil {
			t.Fatal(err)
		}
		if err := tb.Add(mustParse(t, c[1]), 2); err != nil || tb.Len() != 2 {
			t.Errorf("%s and %s: %v", c[0], c[1], err)
		}
	}
}

type reg struct{ prefix, target string }

func table(t testing.TB, regs ...reg) *route.Table {
	var tb route.Table
	for _, r := range regs {
		if err := tb.Add(mustParse(t, r.prefix), r.target); err != nil {
			t.Fatal(err)
		}
	}
	return &tb
}

// req is the JS test's default request with some fields replaced ("-" for none).
func req(over ...string) route.Args {
	a := route.Args{Port: 8080, Host: "example.com:8080", LocalAddress: "127.0.0.1", Path: "/"}
	for i := 0; i < len(over); i += 2 {
		v := over[i+1]
		if v == "-" {
			v = ""
		}
		switch over[i] {
		case "path":
			a.Path = v
		case "host":
			a.Host = v
		case "local":
			a.LocalAddress = v
		case "scheme":
			a.Scheme = v
		case "port":
			fmt.Sscan(v, &a.Port)
		}
	}
	return a
}

var (
	plusAndHost  = []reg{{"http://+:8080/", "plus"}, {"http://example.com:8080/", "host"}}
	apiAndHost   = []reg{{"http://+:8080/api/", "plus"}, {"http://example.com:8080/", "host"}}
	host         = []reg{{"http://example.com:8080/", "host"}}
	hostIPWeak   = []reg{{"http://example.com:8080/", "host"}, {"http://127.0.0.1:8080/", "ip"}, {"http://*:8080/", "weak"}}
	ipPathWeak   = []reg{{"http://127.0.0.1:8080/ip/", "ip"}, {"http://*:8080/", "weak"}}
	ip           = []reg{{"http://127.0.0.1:8080/", "ip"}}
	v6           = []reg{{"http://[::1]:8080/", "v6"}}
	rootSna      = []reg{{"http://+:8080/", "root"}, {"http://+:8080/dir/sna/", "sna"}}
	api          = []reg{{"http://+:8080/api/", "api"}}
	apiRoot      = []reg{{"http://+:8080/api/", "api"}, {"http://+:8080/", "root"}}
	root         = []reg{{"http://+:8080/", "root"}}
	routingCases = []struct {
		regs   []reg
		over   []string
		expect any // a target, or a status
	}{
		// a strong wildcard hides an explicit host on the same path
		{plusAndHost, nil, "plus"},
		{plusAndHost, []string{"path", "/x/y"}, "plus"},
		{plusAndHost, []string{"host", "other.org"}, "plus"},
		// a strong wildcard with a longer path beside an explicit host with /
		{apiAndHost, []string{"path", "/api/users"}, "plus"},
		{apiAndHost, []string{"path", "/api"}, "plus"},
		{apiAndHost, []string{"path", "/apix"}, "host"},
		{apiAndHost, []string{"path", "/"}, "host"},
		{apiAndHost, []string{"path", "/", "host", "other.org"}, 404},
		// explicit: Host with and without port, case-insensitive, missing Host
		{host, []string{"host", "EXAMPLE.com"}, "host"},
		{host, []string{"host", "example.com:9999"}, "host"},
		{host, []string{"host", "www.example.com"}, 400},
		{host, []string{"host", "-"}, 400},
		{append(host, reg{"http://*:8080/", "weak"}), []string{"host", "-"}, "weak"},
		// explicit beats IP-bound beats weak
		{hostIPWeak, nil, "host"},
		{hostIPWeak, []string{"host", "x.org"}, "ip"},
		{hostIPWeak, []string{"host", "x.org", "local", "10.0.0.1"}, "weak"},
		// IP-bound vs weak: the IP-bound path must match, else weak takes it
		{ipPathWeak, []string{"path", "/ip/a"}, "ip"},
		{ipPathWeak, []string{"path", "/other"}, "weak"},
		{ipPathWeak, []string{"path", "/ip/a", "local", "10.0.0.2"}, "weak"},
		// IP-bound matches the local address, never the Host header
		{ip, []string{"host", "127.0.0.1:8080", "local", "10.0.0.1"}, 400},
		{ip, []string{"host", "anything", "local", "::ffff:127.0.0.1"}, "ip"},
		{ip, []string{"local", "-"}, 400},
		// IPv6 literals
		{v6, []string{"host", "[::1]:8080", "local", "::1"}, "v6"},
		{v6, []string{"host", "[::1]", "local", "0:0:0:0:0:0:0:1"}, "v6"},
		{v6, []string{"local", "[::1]"}, "v6"},
		{v6, []string{"local", "127.0.0.1"}, 400},
		{[]reg{{"http://[fe80::1]:8080/", "v6"}}, []string{"local", "fe80::1%eth0"}, "v6"},
		{[]reg{{"http://[::ffff:127.0.0.1]:8080/", "mapped"}}, []string{"local", "127.0.0.1"}, "mapped"},
		// weak catches what nobody else takes
		{[]reg{{"http://*:8080/", "weak"}}, []string{"host", "-", "local", "-"}, "weak"},
		// longest path within a category
		{rootSna, []string{"path", "/dir/sna/snadefault.htm"}, "sna"},
		{rootSna, []string{"path", "/dir/app.htm"}, "root"},
		{rootSna, []string{"path", "/dir/sna"}, "sna"},
		{[]reg{{"http://+:8080/a/", "a"}, {"http://+:8080/a/b/", "ab"}, {"http://+:8080/a/b/c/", "abc"}}, []string{"path", "/a/b/x"}, "ab"},
		// segment boundaries
		{api, []string{"path", "/api"}, "api"},
		{api, []string{"path", "/api/"}, "api"},
		{api, []string{"path", "/apix"}, 404},
		{api, []string{"path", "/ap"}, 404},
		// case-insensitive paths
		{[]reg{{"http://+:8080/Api/", "api"}}, []string{"path", "/aPI/Users"}, "api"},
		{api, []string{"path", "/API"}, "api"},
		// query strings
		{api, []string{"path", "/api?x=/y"}, "api"},
		{api, []string{"path", "/apix?/api/"}, 404},
		{api, []string{"path", "/api/%41?q"}, "api"},
		// percent-encoding of unreserved characters is decoded before matching
		{api, []string{"path", "/%61%50i/x"}, "api"},
		{[]reg{{"http://+:8080/~user/", "u"}}, []string{"path", "/%7Euser/"}, "u"},
		{[]reg{{"http://+:8080/a%20b/", "sp"}}, []string{"path", "/A%20B/c"}, "sp"},
		{[]reg{{"http://+:8080/café/", "cafe"}}, []string{"path", "/CAF%C3%A9/menu"}, "cafe"},
		{[]reg{{"http://+:8080/café/", "cafe"}}, []string{"path", "/caf\xc3\xa9/menu"}, "cafe"},
		// an encoded / stays data, never a separator
		{api, []string{"path", "/api%2Fx"}, 404},
		// dot segments are resolved and never climb above /
		{apiRoot, []string{"path", "/api/../admin"}, "root"},
		{api, []string{"path", "/api/../admin"}, 404},
		{api, []string{"path", "/api/%2e%2e/admin"}, 404},
		{api, []string{"path", "/x/../api/y"}, "api"},
		{api, []string{"path", "/../../api/y"}, "api"},
		{api, []string{"path", "/./api/./y"}, "api"},
		{api, []string{"path", "/api/x/.."}, "api"},
		{api, []string{"path", "/api/.."}, 404},
		{api, []string{"path", "/.well-known/api/"}, 404},
		// backslash is a separator for HTTP.SYS (KB 896287)
		{api, []string{"path", "/api\\x"}, "api"},
		{api, []string{"path", "/api\\..\\admin"}, 404},
		// malformed percent-encoding is a bad request
		{root, []string{"path", "/a%zz"}, 400},
		// absolute-form target: its authority is the host
		{host, []string{"host", "other", "path", "http://Example.com:8080/x?y"}, "host"},
		{host, []string{"path", "http://u@Example.com/x"}, "host"},
		{host, []string{"path", "http:///x"}, 400},
		{root, []string{"path", "OPTIONS-garbage"}, 400},
		{root, []string{"path", "*"}, "root"},
		{root, []string{"path", ""}, "root"},
		// nothing registered on that port, or for that scheme
		{root, []string{"port", "8081"}, 400},
		{root, []string{"scheme", "https"}, 400},
		{root, []string{"scheme", "ftp"}, 400},
		{[]reg{{"https://+:8080/", "tls"}}, []string{"scheme", "https"}, "tls"},
		{[]reg{{"https://+:8080/", "tls"}, {"http://+:8080/", "plain"}}, nil, "plain"},
		{nil, nil, 400},
	}
)

func TestRouteAsHTTPSYS(t *testing.T) {
	for _, c := range routingCases {
		tb := table(t, c.regs...)
		r := tb.Route(req(c.over...))
		switch want := c.expect.(type) {
		case int:
			if r.Status != want || r.Target != nil || r.Prefix != "" {
				t.Errorf("%v + %q: %+v, want %d", c.regs, c.over, r, want)
			}
		case string:
			var prefix string
			for _, g := range c.regs {
				if g.target == want {
					prefix = mustParse(t, g.prefix).Prefix
				}
			}
			if r.Target != want || r.Prefix != prefix || r.Status != 0 {
				t.Errorf("%v + %q: %+v, want %s (%s)", c.regs, c.over, r, want, prefix)
			}
		}
	}
}

func TestRemoveLetsTheNextCategoryTakeOver(t *testing.T) {
	tb := table(t, plusAndHost...)
	if r := tb.Route(req()); r.Target != "plus" {
		t.Fatal(r)
	}
	tb.Remove(byString("http://+:8080/"))
	if r := tb.Route(req()); r.Target != "host" {
		t.Fatal(r)
	}
	tb.Remove(byString("http://example.com:8080/"))
	if r := tb.Route(req()); r.Status != 400 {
		t.Fatal(r)
	}
}

func TestRegistrationOrderDoesNotChangeTheLongestMatch(t *testing.T) {
	a := table(t, reg{"http://+:8080/a/b/", "ab"}, reg{"http://+:8080/", "root"}, reg{"http://+:8080/a/", "a"})
	b := table(t, reg{"http://+:8080/", "root"}, reg{"http://+:8080/a/", "a"}, reg{"http://+:8080/a/b/", "ab"})
	for _, p := range []string{"/a/b/c", "/a/x", "/z"} {
		if ra, rb := a.Route(req("path", p)), b.Route(req("path", p)); ra != rb {
			t.Errorf("%s: %+v and %+v", p, ra, rb)
		}
	}
	if r := a.Route(req("path", "/a/b/c")); r.Target != "ab" {
		t.Error(r)
	}
}

func TestRouteAnswersWithTheTargetItself(t *testing.T) {
	target := &struct{ name string }{"app"}
	var tb route.Table
	tb.Add(byString("http://+:8080/"), target)
	if r := tb.Route(req()); r.Target != target {
		t.Error(r)
	}
}

func TestManyHostsDoNotBreakExplicitRouting(t *testing.T) {
	tb := table(t, reg{"http://example.com:8080/", "host"}, reg{"http://*:8080/", "weak"})
	for i := range 1000 {
		if r := tb.Route(req("host", fmt.Sprintf("h%d.test", i))); r.Target != "weak" {
			t.Fatal(r)
		}
	}
	if r := tb.Route(req()); r.Target != "host" {
		t.Error(r)
	}
}
