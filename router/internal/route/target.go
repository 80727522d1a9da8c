package route

import "strings"

// The request side: the path routing matches on (CanonicalTarget), the target an app
// sees (CanonicalizeTarget), and the Host checks. A target and a Host are the bytes the
// client sent.

// Target is a request target as routing reads it (CanonicalTarget).
type Target struct {
	// Path is canonical: the query dropped, %-encoded unreserved characters decoded,
	// ASCII letters in lower case, other escapes and bytes past ASCII as lower-case
	// %xx, \ turned into /, dot segments resolved without climbing above /.
	Path string
	// Host is an absolute-form target's authority without user info (RFC 9112 3.2.2:
	// it names the host, whatever the Host header says).
	Host     string
	Absolute bool
}

// CanonicalTarget canonicalises a raw target the way HTTP.SYS does before routing (the
// JS's canonicalTarget); false when the target is malformed (a bad % escape, or neither
// origin-form nor http(s) absolute-form). "" and "*" are "/".
func CanonicalTarget(raw string) (Target, bool) {
	var t Target
	if raw == "" || raw == "*" {
		t.Path = "/"
		return t, true
	}
	start := 0
	if raw[0] != '/' {
		n := absoluteScheme(raw)
		if n == 0 {
			return t, false
		}
		end := n
		for end < len(raw) && !isPathStart(raw[end]) {
			end++
		}
		t.Host, t.Absolute = raw[n:end], true
		if at := strings.LastIndexByte(t.Host, '@'); at != -1 {
			t.Host = t.Host[at+1:]
		}
		start = end
	}
	const hex = "0123456789abcdef"
	out := make([]byte, 1, len(raw)-start+1)
	out[0] = '/'
	i := start
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	for ; i < len(raw); i++ {
		c := raw[i]
		if c == '?' || c == '#' {
			break
		}
		switch {
		case c == '%':
			v := hexByte(raw, i+1)
			if v == -1 {
				return t, false // HTTP.SYS never accepts a bare % in a path
			}
			if v < 128 && unreserved[v] {
				out = append(out, lowerByte(byte(v)))
			} else {
				out = append(out, '%', lowerByte(raw[i+1]), lowerByte(raw[i+2]))
			}
			i += 2
		case c == '\\':
			out = append(out, '/')
		case c < 128:
			out = append(out, lowerByte(c))
		default:
			out = append(out, '%', hex[c>>4], hex[c&15])
		}
	}
	t.Path = removeDotSegments(string(out))
	return t, true
}

// CanonicalizeTarget is the target an app sees (README "The router's rules"): the
// origin-form (RFC 9112 3.2.1) of the path routing matched on, with case and every
// escape but the unreserved ones kept, and the query as sent (the JS's
// canonicalizeTarget). url is raw itself, with no allocation, when raw has no '%', '\'
// or '/.' before its query, and for "*".
//
// host is an absolute-form target's authority (RFC 9112 3.2.2: the server "MUST ignore
// the received Host header field"): the caller makes it every Host header's value, and
// adds a Host when there was none (HTTP/1.0). host is "" for an origin-form target.
// ok is false when the target is malformed (400 Invalid URL): a bad % escape, neither
// form, or an authority that is empty, starts with ':', holds user info (RFC 9110
// 4.2.4) or a character a host and port may not.
func CanonicalizeTarget(raw string) (url, host string, ok bool) {
	if isCanonicalPath(raw) || raw == "*" {
		return raw, "", true
	}
	if raw == "" {
		return raw, "", false
	}
	start := 0
	if raw[0] != '/' {
		n := absoluteScheme(raw)
		if n == 0 {
			return raw, "", false
		}
		start = n
		for start < len(raw) && !isPathStart(raw[start]) {
			start++
		}
		host = raw[n:start]
		if !isAuthority(host) {
			return raw, "", false
		}
	}
	end := start
	for end < len(raw) && raw[end] != '?' && raw[end] != '#' {
		end++
	}
	path := make([]byte, 1, end-start+1)
	path[0] = '/'
	i := start
	if i < len(raw) && raw[i] == '/' {
		i++
	}
	for ; i < end; i++ {
		c := raw[i]
		switch {
		case c == '%':
			v := hexByte(raw, i+1)
			if v == -1 {
				return raw, "", false // HTTP.SYS never accepts a bare % in a path
			}
			if v < 128 && unreserved[v] {
				path = append(path, byte(v))
			} else {
				path = append(path, raw[i:i+3]...)
			}
			i += 2
		case c == '\\':
			path = append(path, '/')
		default:
			path = append(path, c)
		}
	}
	return removeDotSegments(string(path)) + raw[end:], host, true
}

// removeDotSegments is RFC 3986 5.2.4 on an absolute path; ".." at the root stays at
// the root.
func removeDotSegments(path string) string {
	if strings.IndexByte(path, '.') == -1 {
		return path
	}
	segments := strings.Split(path, "/")
	out := make([]string, 0, len(segments))
	last := len(segments) - 1
	for i := 1; i <= last; i++ {
		s := segments[i]
		if s == "." || s == ".." {
			if s == ".." && len(out) > 0 {
				out = out[:len(out)-1]
			}
			if i == last {
				out = append(out, "")
			}
		} else {
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}

// isCanonicalPath: an origin-form target CanonicalizeTarget gives back as it is.
func isCanonicalPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for i := 1; i < len(p); i++ {
		switch c := p[i]; {
		case c == '?' || c == '#':
			return true
		case c == '%' || c == '\\' || c == '.' && p[i-1] == '/':
			return false
		}
	}
	return true
}

// fastPathEnd is the end of the path in a raw target that routing can match as it is
// (an ordinary origin-form path: no '%', '\', '/.' or byte past '~'), else -1.
func fastPathEnd(p string) int {
	if p == "" || p[0] != '/' {
		return -1
	}
	for i := 1; i < len(p); i++ {
		c := p[i]
		if c == '?' || c == '#' {
			return i
		}
		if c == '%' || c == '\\' || c > '~' || c == '.' && p[i-1] == '/' {
			return -1
		}
	}
	return len(p)
}

// absoluteScheme is the length of a leading "http://" or "https://" (any case), else 0.
func absoluteScheme(s string) int {
	if len(s) < 7 || s[0]|32 != 'h' || s[1]|32 != 't' || s[2]|32 != 't' || s[3]|32 != 'p' {
		return 0
	}
	i := 4
	if s[i]|32 == 's' {
		i++
	}
	if len(s) < i+3 || s[i:i+3] != "://" {
		return 0
	}
	return i + 3
}

func isPathStart(c byte) bool {
	return c == '/' || c == '?' || c == '#'
}

// authorityChar: RFC 3986 3.2.2 host and 3.2.3 port characters, what an authority may
// hold once user info is refused (the set the HTTP/1.1 parser accepts in a Host).
var authorityChar = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+,;=:[]")

// isAuthority: a non-empty host[:port] (RFC 9110 4.2.1: an http URI with an empty host
// is invalid), without user info (RFC 9110 4.2.4: a recipient treats it as an error).
func isAuthority(a string) bool {
	if a == "" || a[0] == ':' {
		return false
	}
	for i := 0; i < len(a); i++ {
		if !authorityChar[a[i]] {
			return false
		}
	}
	return true
}

// HostnameOf is the name explicit prefixes are keyed by: a Host value with its port
// dropped and ASCII letters in lower case ("[v6]" keeps its brackets). Bytes past ASCII
// stay as they are: no explicit prefix holds one, so no case of theirs matters.
func HostnameOf(host string) string {
	return asciiLower(hostnameSpan(host))
}

// hostnameSpan is the part of a Host value HostnameOf keeps.
func hostnameSpan(host string) string {
	if host != "" && host[0] == '[' {
		if end := strings.IndexByte(host, ']'); end != -1 {
			return host[:end+1]
		}
		return host
	}
	if colon := strings.IndexByte(host, ':'); colon != -1 {
		return host[:colon]
	}
	return host
}

// IsValidHostPort is RFC 3986 3.2.3 (port = *DIGIT), the Host port rule of the HTTP/1.1
// parser (Host, and an absolute-form target's authority) and of h2 (:authority): a Host
// value (or authority) has no port, or a port of digits only; an IP literal's port
// follows its "]", nothing else may. HTTP.SYS refuses any other Host, and the app and
// the output cache see the Host's port (issue 23; docs/output-cache.md "Keys, memory
// and invalidation").
func IsValidHostPort(host string) bool {
	var i int
	if host != "" && host[0] == '[' {
		i = strings.IndexByte(host, ']') + 1
		if i == 0 {
			return false
		}
		if i == len(host) {
			return true
		}
		if host[i] != ':' {
			return false
		}
	} else {
		i = strings.IndexByte(host, ':')
		if i == -1 {
			return true
		}
	}
	for i++; i < len(host); i++ {
		if host[i] < '0' || host[i] > '9' {
			return false
		}
	}
	return true
}

// IsInvalidUrl tells why routing said 400: HTTP.SYS answers a target it cannot
// canonicalise with "400 Bad Request - Invalid URL" before it looks at the host, and
// a host nobody registered with "400 Bad Request - Invalid Hostname". True when target
// is neither origin-form nor http(s) absolute-form, or its path (not its query) holds a
// bare or malformed % escape: exactly when CanonicalTarget fails. Cold path: it runs
// only after a 400.
// https://learn.microsoft.com/troubleshoot/developer/webapps/iis/iisadmin-service-inetinfo/httpsys-registry-windows
func IsInvalidUrl(target string) bool {
	if target == "" || target == "*" {
		return false
	}
	i := 0
	if target[0] != '/' {
		n := absoluteScheme(target)
		if n == 0 {
			return true
		}
		i = n
		for i < len(target) && !isPathStart(target[i]) {
			i++
		}
	}
	for ; i < len(target); i++ {
		c := target[i]
		if c == '?' || c == '#' {
			return false // the query is the app's business
		}
		if c == '%' && hexByte(target, i+1) == -1 {
			return true
		}
	}
	return false
}
