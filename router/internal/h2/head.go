package h2

import (
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"httpsys/router/internal/conn"
	"httpsys/router/internal/route"
	"httpsys/router/internal/wire"
)

// field is a decoded header field.
type field struct{ name, value string }

// block is a header block's fields as decoded, with the list's size (RFC 9113 6.5.2:
// name + value + 32 each); over is set once it passed maxHeaderList (what is past it
// is not kept).
type block struct {
	fields []field
	size   int
	over   bool
}

func (b *block) add(name, value string) {
	b.size += len(name) + len(value) + 32
	if b.size > maxHeaderList {
		b.over = true
		return
	}
	b.fields = append(b.fields, field{name, value})
}

// checkFields applies the rules node's nghttp2 applies to a request's header
// block (RFC 9113 8.2, 8.3; node 20's nghttp2, probed): ok is false for a malformed
// block (the stream is reset with PROTOCOL_ERROR); kept is the block without the
// fields nghttp2 drops silently (a name that is no token but has no upper case, a
// value with a control character or surrounding white space, a Host that is no
// authority). Malformed: a pseudo-header that is unknown (:protocol included),
// repeated, after a regular field or with a bad value (:method not a token, :path
// with a space or control character, :authority with a character no authority has,
// :scheme not a scheme); a name with upper case; a connection-specific field; TE
// other than "trailers"; Content-Length not digits or given twice; :method,
// :scheme, :path or an authority (:authority or Host) missing, or a :path that does
// not start with "/" ("*" for OPTIONS), or, for CONNECT, :scheme or :path present or
// :authority missing. trailers: a trailing block (no pseudo-header at all).
func checkFields(fields []field, trailers bool) (kept []field, ok bool) {
	kept = fields[:0:0]
	regular := false
	var method, scheme, path, authority, host, length int
	for _, f := range fields {
		if strings.HasPrefix(f.name, ":") {
			if regular || trailers {
				return nil, false
			}
			good := false
			switch f.name {
			case ":method":
				method++
				good = httpguts.ValidHeaderFieldName(f.value)
			case ":scheme":
				scheme++
				good = isScheme(f.value)
			case ":path":
				path++
				good = pathChars(f.value)
			case ":authority":
				authority++
				good = authorityChars(f.value)
			}
			if !good {
				return nil, false
			}
			kept = append(kept, f)
			continue
		}
		regular = true
		if !httpguts.ValidHeaderFieldName(f.name) {
			if hasUpper(f.name) {
				return nil, false
			}
			continue
		}
		if hasUpper(f.name) {
			return nil, false
		}
		switch f.name {
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			return nil, false
		case "te":
			if !strings.EqualFold(f.value, "trailers") {
				return nil, false
			}
		case "content-length":
			length++
			if length > 1 || !allDigits(f.value) {
				return nil, false
			}
		case "host":
			if !authorityChars(f.value) {
				continue
			}
			host++
		}
		if !validValue(f.value) {
			continue
		}
		kept = append(kept, f)
	}
	if trailers {
		return kept, true
	}
	if method != 1 || scheme > 1 || path > 1 || authority > 1 {
		return nil, false
	}
	m, p := valueOf(kept, ":method"), valueOf(kept, ":path")
	if m == "CONNECT" {
		return kept, scheme == 0 && path == 0 && authority == 1
	}
	if scheme != 1 || path != 1 || (authority == 0 && host == 0) {
		return nil, false
	}
	return kept, p[0] == '/' || (m == "OPTIONS" && p == "*")
}

// isScheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986 3.1).
func isScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return s != ""
}

// pathChars: no control character, space or DEL (obs-text passes, as in nghttp2).
func pathChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return s != ""
}

// authorityChars: the characters of a URI authority (RFC 3986 3.2), '@' included.
func authorityChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~%!$&'()*+,;=:[]@", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// validValue: no control character but HTAB, no leading or trailing space or tab
// (RFC 9113 8.2.1).
func validValue(v string) bool {
	if v != "" && (v[0] == ' ' || v[0] == '\t' || v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		return false
	}
	return httpguts.ValidHeaderFieldValue(v)
}

func valueOf(fields []field, name string) string {
	for _, f := range fields {
		if f.name == name {
			return f.value
		}
	}
	return ""
}

// head is a stream's request: the REQUEST payload, or the status the router answers
// instead (400, 431) and its page.
type head struct {
	method     string
	url        string // canonical: routing and the app see it
	host       string
	hasBody    bool
	expect100  bool
	contentLen int64
	payload    []byte
	status     int
	variant    conn.Variant
	reason     string
}

// headOf builds a stream's head from its (well-formed) header block.
func (c *Conn) headOf(fields []field, hasBody bool) *head {
	h := &head{method: "GET", url: "/", hasBody: hasBody, contentLen: -1}
	bad := func(status int, reason string, v conn.Variant) *head {
		h.status, h.reason, h.variant = status, reason, v
		return h
	}
	path, hasPath := "", false
	authority := ""
	for _, f := range fields {
		switch f.name {
		case ":method":
			h.method = f.value
		case ":path":
			path, hasPath = f.value, true
		case ":authority":
			authority = f.value
		}
	}
	if hasPath {
		h.url = path
	}
	// the request line as HTTP/1.1 would count it ("GET / HTTP/1.1\r\n"), then each field
	size := len(h.method) + len(h.url) + 12
	host, hasHost := "", false
	cookie, hasCookie := "", false
	raw := make([]field, 0, len(fields)+1)
	expectOther := false
	for _, f := range fields {
		if f.name[0] == ':' {
			continue
		}
		size += len(f.name) + len(f.value) + 4
		switch f.name {
		case "cookie":
			// RFC 9113 8.2.3: cookie fields are joined for an HTTP/1.1 app
			if hasCookie {
				cookie += "; " + f.value
			} else {
				cookie, hasCookie = f.value, true
			}
			continue
		case "host":
			if hasHost && host != f.value {
				return bad(400, "conflicting Host fields", conn.Plain)
			}
			host, hasHost = f.value, true
		case "content-length":
			n, err := strconv.ParseInt(f.value, 10, 64)
			if err != nil || !allDigits(f.value) || (h.contentLen != -1 && h.contentLen != n) {
				return bad(400, "invalid Content-Length", conn.Plain)
			}
			h.contentLen = n
		case "expect":
			if strings.EqualFold(f.value, "100-continue") {
				h.expect100 = true
			} else {
				expectOther = true
			}
		}
		raw = append(raw, f)
	}
	if hasCookie {
		raw = append(raw, field{"cookie", cookie})
	}
	if size > c.h.srv.Limits.MaxHeaderSize {
		return bad(431, "header fields too large", conn.Plain)
	}
	if !c.h.methods[h.method] || h.method == "CONNECT" {
		return bad(400, "method", conn.Plain)
	}
	if !hasPath || !vcharOnly(path) {
		return bad(400, "invalid :path", conn.InvalidURL)
	}
	if authority != "" {
		// RFC 9113 8.3.1: a Host that names another authority makes the request malformed
		if hasHost && !strings.EqualFold(host, authority) {
			return bad(400, "Host differs from :authority", conn.Plain)
		}
		if !hasHost {
			raw = append([]field{{"host", authority}}, raw...)
		}
		host, hasHost = authority, true
	}
	if !hasHost || !hostChars(host) || !route.IsValidHostPort(host) {
		return bad(400, "missing or invalid authority", conn.InvalidHostname)
	}
	h.host = host
	url, abs, ok := route.CanonicalizeTarget(h.url)
	if !ok {
		return bad(400, "url", conn.InvalidURL)
	}
	h.url = url
	if abs != "" {
		h.host = abs
	}
	flags := uint8(wire.ReqKeepAlive | wire.ReqGrantedWindow)
	if hasBody {
		flags |= wire.ReqHasBody
	}
	if h.expect100 {
		flags |= wire.ReqExpectContinue
	} else if expectOther {
		flags |= wire.ReqExpectOther
	}
	if c.tls != nil {
		flags |= wire.ReqTLS
	}
	n := 32 + len(h.method) + len(url) + len(c.remoteAddr) + len(c.localAddr) + len(c.tls)
	for _, f := range raw {
		n += 4 + len(f.name) + len(f.value)
	}
	p, pairsAt := wire.AppendRequestHead(make([]byte, 0, n), &wire.Request{
		Flags: flags, VersionMajor: 2, VersionMinor: 0, Family: c.family,
		RemotePort: c.remotePort, LocalPort: uint16(c.port), ConnectionID: c.id,
		Method: h.method, URL: []byte(url), RemoteAddress: c.remoteAddr, LocalAddress: c.localAddr,
	})
	for _, f := range raw {
		p = wire.AppendField(p, f.name, f.value)
	}
	wire.SetRequestPairs(p, pairsAt, uint32(len(raw)))
	p = append(p, c.tls...)
	h.payload = p
	return h
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func vcharOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return s != ""
}

// hostChars: the characters the HTTP/1.1 parser accepts in a Host (URI host and port).
func hostChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("-._~%!$&'()*+,;=:[]", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}
