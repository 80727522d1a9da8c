package route_test

import (
	"errors"
	"strings"
	"testing"

	"httpsys/router/internal/route"
)

// The cases of test/unit/urlprefix.test.js ("parse"); route-differential.test.js
// holds the rest of the grammar to the JS on generated prefixes.

func TestParseNormalises(t *testing.T) {
	for _, c := range []struct {
		in, prefix string
		kind       route.HostKind
		port       int
		path, ip   string
	}{
		{"http://+:8080/", "http://+:8080/", route.Strong, 8080, "/", ""},
		{"https://*:443/", "https://*:443/", route.Weak, 443, "/", ""},
		{"http://+:8080", "http://+:8080/", route.Strong, 8080, "/", ""},
		{"HTTP://+:8080/api", "http://+:8080/api/", route.Strong, 8080, "/api/", ""},
		{"HtTpS://+:8443/a/b", "https://+:8443/a/b/", route.Strong, 8443, "/a/b/", ""},
		{"http://www.Adatum.COM:80/vroot/", "http://www.adatum.com:80/vroot/", route.Explicit, 80, "/vroot/", ""},
		{"http://localhost:3000/", "http://localhost:3000/", route.Explicit, 3000, "/", ""},
		{"http://my_host-1:3000/", "http://my_host-1:3000/", route.Explicit, 3000, "/", ""},
		{"http://xn--bcher-kva.example:80/", "http://xn--bcher-kva.example:80/", route.Explicit, 80, "/", ""},
		{"http://\u212aELVIN:80/", "http://kelvin:80/", route.Explicit, 80, "/", ""}, // the Kelvin sign lower-cases to k
		{"http://192.168.0.1:80/x/", "http://192.168.0.1:80/x/", route.IP, 80, "/x/", "192.168.0.1"},
		{"http://[::1]:8080/api", "http://[::1]:8080/api/", route.IP, 8080, "/api/", "::1"},
		{"http://[0:0:0:0:0:0:0:1]:8080/", "http://[::1]:8080/", route.IP, 8080, "/", "::1"},
		{"http://[3ffe:ffff::6ECB:0101]:80/", "http://[3ffe:ffff::6ecb:101]:80/", route.IP, 80, "/", "3ffe:ffff::6ecb:101"},
		{"http://[2001:db8:0:0:1:0:0:1]:80/", "http://[2001:db8::1:0:0:1]:80/", route.IP, 80, "/", "2001:db8::1:0:0:1"},
		{"http://[::ffff:127.0.0.1]:80/", "http://[::ffff:7f00:1]:80/", route.IP, 80, "/", "::ffff:7f00:1"},
		{"http://[1:0:0:2:0:0:0:3]:80/", "http://[1:0:0:2::3]:80/", route.IP, 80, "/", "1:0:0:2::3"},
		{"http://[1:0:2:3:4:5:6:7]:80/", "http://[1:0:2:3:4:5:6:7]:80/", route.IP, 80, "/", "1:0:2:3:4:5:6:7"},
		{"http://+:65535/", "http://+:65535/", route.Strong, 65535, "/", ""},
		{"http://+:1/", "http://+:1/", route.Strong, 1, "/", ""},
		{"http://+:80/Mixed/Case/", "http://+:80/Mixed/Case/", route.Strong, 80, "/Mixed/Case/", ""},
		{"http://+:80/%7euser/a%2fb/", "http://+:80/~user/a%2Fb/", route.Strong, 80, "/~user/a%2Fb/", ""},
		{"http://+:80/a:b@c!$&'()*+,;=/", "http://+:80/a:b@c!$&'()*+,;=/", route.Strong, 80, "/a:b@c!$&'()*+,;=/", ""},
		{"http://+:80/café/", "http://+:80/café/", route.Strong, 80, "/café/", ""},
	} {
		p, err := route.Parse(c.in, false)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if p.Prefix != c.prefix || p.HostKind != c.kind || p.Port != c.port || p.Path != c.path || p.IP != c.ip {
			t.Errorf("Parse(%q) = %+v", c.in, p)
		}
		if want := p.Scheme + "://" + p.Host + ":" + itoa(p.Port) + p.Path; p.Prefix != want {
			t.Errorf("Parse(%q).Prefix = %q, its parts say %q", c.in, p.Prefix, want)
		}
		// normalising is idempotent
		if q, err := route.Parse(p.Prefix, false); err != nil || q != p {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", p.Prefix, q, err, p)
		}
	}
}

func TestParsePortZeroOnlyWhenAllowed(t *testing.T) {
	if p, err := route.Parse("http://+:0/", true); err != nil || p.Port != 0 {
		t.Errorf("allowPortZero: %+v, %v", p, err)
	}
	expectReason(t, "http://+:0/", false, "out of range")
	expectReason(t, "http://+:00/", true, "start with 0")
}

func TestParseRefuses(t *testing.T) {
	for _, c := range []struct{ in, reason string }{
		{"", "empty"},
		{"+:8080/", "missing scheme"},
		{"//+:8080/", "missing scheme"},
		{"ftp://+:21/", `scheme must be http or https, not "ftp"`},
		{"ws://+:80/", "scheme must be http or https"},
		{"http://+/", "port is required"},
		{"http://+:/", "port is required"},
		{"http://example.com/", "port is required"},
		{"http://[::1]/", "port is required"},
		{"http://+:*/", `decimal number (no wildcard), not "*"`},
		{"http://+:80a/", "decimal number"},
		{"http://+:-1/", "decimal number"},
		{"http://+:65536/", "port 65536 is out of range"},
		{"http://+:99999999/", "out of range"},
		{"http://+:0/", "out of range"},
		{"http://+:080/", "start with 0"},
		{"http://:8080/", "host is empty"},
		{"http://[::1:8080/", "bad IPv6 literal"},
		{"http://[::1]x:8080/", "bad IPv6 literal"},
		{"http://[::g]:8080/", "bad IPv6 literal [::g]"},
		{"http://[1::2::3]:8080/", "bad IPv6 literal"},
		{"http://[1:2:3:4:5:6:7:8:9]:8080/", "bad IPv6 literal"},
		{"http://[1:2:3:4:5:6:7:8::]:8080/", "bad IPv6 literal"},
		{"http://[::1:2:3:4:5:6:7:8]:8080/", "bad IPv6 literal"},
		{"http://[1:2:3:4:5:6:7]:8080/", "bad IPv6 literal"},
		{"http://[::01.2.3.4]:8080/", "bad IPv6 literal"},
		{"http://[00001::]:8080/", "bad IPv6 literal"},
		{"http://[fe80::1%eth0]:8080/", "zone"},
		{"http://[::]:8080/", "not an interface address"},
		{"http://[0:0::0]:8080/", "not an interface address"},
		{"http://::1:8080/", "IPv6 literal in brackets"},
		{"http://+:8080/api/?x=1", "query"},
		{"http://+:8080/api/#top", "fragment"},
		{"http://*.example.com:80/", "wildcard"},
		{"http://+example:80/", "wildcard"},
		{"http://exa*mple:80/", "wildcard"},
		{"http://+:80 /", "whitespace"},
		{" http://+:80/", "whitespace"},
		{"http://+:80/a b/", "whitespace"},
		{"http://+:80/a\tb/", "whitespace"},
		{"http://+:80/a\u00a0b/", "whitespace"},
		{"http://+:80/a\u2028b/", "whitespace"},
		{"http://+:80/a\ufeffb/", "whitespace"},
		{"http://+:80/a\x7fb/", "whitespace"},
		{"http://user@+:80/", "user info"},
		{"http://256.1.1.1:80/", "bad IPv4 literal 256.1.1.1 (four numbers 0-255, no leading zeros)"},
		{"http://1.2.3:80/", "bad IPv4 literal"},
		{"http://01.2.3.4:80/", "bad IPv4 literal"},
		{"http://0.0.0.0:80/", "not an interface address"},
		{"http://exa..mple:80/", `bad host name "exa..mple": empty label`},
		{"http://example.com.:80/", "empty label"},
		{"http://Exa!mple:80/", `bad host name "Exa!mple": only letters, digits, - and _ are allowed`},
		{"http://exa\"mple:80/", `bad host name "exa\"mple"`},
		{"http://" + strings.Repeat("a", 64) + ".com:80/", "63 characters"},
		{"http://" + strings.Repeat("a.", 127) + "ab:80/", "longer than 253 characters"},
		{"http://+:80/a%zz/", "percent-encoding"},
		{"http://+:80/a%2/", "percent-encoding"},
		{"http://+:80/a\\b/", "backslash"},
		{"http://+:80/a<b>/", `the character "<" is not allowed in the path`},
		{"http://+:80/a\"b/", `the character "\"" is not allowed in the path`},
		{"http://+:80/a//b/", "empty path segment"},
		{"http://+:80/a/../b/", "dot segments"},
		{"http://+:80/a/./b/", "dot segments"},
		{"http://+:80/a/%2e%2E/", "dot segments"},
		// where the JS would hold a lone surrogate
		{"http://+:80/a\xffb/", "not valid Unicode"},
		{"ht\xfftp://+:80/", `not "ht\ufffdtp"`},
		// the JS makes these punycode (UTS 46); Go asks for it
		{"http://bücher.example:80/", `the host name "bücher.example" is not ASCII`},
		{"http://\u0130stanbul:80/", "is not ASCII"},
	} {
		expectReason(t, c.in, false, c.reason)
	}
	if p, err := route.Parse("http://+:80/", false); err != nil || p.Prefix != "http://+:80/" {
		t.Errorf("a valid prefix: %+v, %v", p, err)
	}
}

func TestErrorMessagesAreTheJSOnes(t *testing.T) {
	_, err := route.Parse("http://x", false)
	want := `Invalid URL prefix "http://x": a port is required (http://host:port/); it is never implied by the scheme. ` +
		"A prefix reads scheme://host:port/path/ (scheme http or https, a port, a path ending in /), for example http://+:8080/api/."
	if err == nil || err.Error() != want {
		t.Errorf("message %q", err)
	}
}

func expectReason(t *testing.T, in string, allowPortZero bool, reason string) {
	t.Helper()
	p, err := route.Parse(in, allowPortZero)
	var e *route.Error
	if !errors.As(err, &e) {
		t.Errorf("Parse(%q) = %+v, %v; want an *Error", in, p, err)
		return
	}
	if e.Prefix != in || !strings.Contains(e.Reason, reason) || !strings.Contains(e.Error(), e.Reason) {
		t.Errorf("Parse(%q): %+v; want the reason to hold %q", in, e, reason)
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
