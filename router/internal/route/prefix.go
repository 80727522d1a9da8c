package route

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The reasons Parse gives, in the JS's words (src/urlprefix.js parse); the ones that
// quote the input are built where they are used.
const (
	reasonEmpty        = "the prefix is empty"
	reasonSpace        = "whitespace and control characters are not allowed"
	reasonNoScheme     = "missing scheme: a prefix starts with http:// or https://"
	reasonQuery        = "a query string (?) is not allowed in a prefix"
	reasonFragment     = "a fragment (#) is not allowed in a prefix"
	reasonUserInfo     = "user info (user@) is not allowed in a prefix"
	reasonNoClose      = "bad IPv6 literal: the closing ] is missing"
	reasonAfterClose   = "bad IPv6 literal: only :port may follow the closing ]"
	reasonNoPort       = "a port is required (http://host:port/); it is never implied by the scheme"
	reasonColon        = "a host may contain \":\" only as an IPv6 literal in brackets, e.g. http://[::1]:8080/"
	reasonEmptyHost    = "the host is empty: use +, *, a host name or an IP address"
	reasonPortZero     = "the port must not start with 0"
	reasonZone         = "bad IPv6 literal: zone ids (%...) are not allowed"
	reasonAny6         = "[::] is not an interface address: use + (every host) or * (what nobody else takes)"
	reasonAny4         = "0.0.0.0 is not an interface address: use + (every host) or * (what nobody else takes)"
	reasonWildcard     = "a wildcard (* or +) must be the whole host, not part of a host name"
	reasonLongName     = "the host name is longer than 253 characters"
	reasonLongLabel    = "a host name label is longer than 63 characters"
	reasonBadEscape    = "bad percent-encoding in the path (% must be followed by two hex digits)"
	reasonBackslash    = "a backslash is not allowed in the path (use /)"
	reasonEmptySegment = "empty path segment (//) in the path"
	reasonDotSegment   = "dot segments (. or ..) are not allowed in the path"
	reasonNotUnicode   = "the path is not valid Unicode"
)

// Parse parses and normalises a UrlPrefix (scheme://host:port/path/), as the JS's
// parse() does; the error is an *Error whose Reason is the JS's. allowPortZero accepts
// port 0 (listen(0): "pick a free port").
//
// One difference, by design: the JS turns an international host name into punycode
// with node's domainToASCII (UTS 46, whose tables the standard library does not
// have). Parse refuses a host name that is not ASCII and asks for the punycode the
// JS's normal form has; every normal form the JS gives parses here to itself. An
// invalid UTF-8 sequence stands where the JS could hold a lone surrogate, and fails
// as one does.
func Parse(prefix string, allowPortZero bool) (Prefix, error) {
	p, reason := parse(prefix, allowPortZero)
	if reason != "" {
		return Prefix{}, &Error{Prefix: prefix, Reason: reason}
	}
	return p, nil
}

func parse(input string, allowPortZero bool) (Prefix, string) {
	var p Prefix
	if input == "" {
		return p, reasonEmpty
	}
	for _, r := range input {
		if isSpaceOrControl(r) {
			return p, reasonSpace
		}
	}
	sep := strings.Index(input, "://")
	if sep <= 0 {
		return p, reasonNoScheme
	}
	// Only ASCII letters lower-case to "http" in the JS's toLowerCase too.
	p.Scheme = asciiLower(input[:sep])
	if p.Scheme != "http" && p.Scheme != "https" {
		return p, "the scheme must be http or https, not " + jsonString(input[:sep])
	}
	if strings.IndexByte(input, '?') != -1 {
		return p, reasonQuery
	}
	if strings.IndexByte(input, '#') != -1 {
		return p, reasonFragment
	}

	rest := input[sep+3:]
	authority, rawPath := rest, "/"
	if slash := strings.IndexByte(rest, '/'); slash != -1 {
		authority, rawPath = rest[:slash], rest[slash:]
	}
	if strings.IndexByte(authority, '@') != -1 {
		return p, reasonUserInfo
	}

	var hostPart, portPart string
	if authority != "" && authority[0] == '[' {
		end := strings.IndexByte(authority, ']')
		if end == -1 {
			return p, reasonNoClose
		}
		hostPart = authority[:end+1]
		after := authority[end+1:]
		if after == "" {
			return p, reasonNoPort
		}
		if after[0] != ':' {
			return p, reasonAfterClose
		}
		portPart = after[1:]
	} else {
		colon := strings.LastIndexByte(authority, ':')
		if colon == -1 {
			return p, reasonNoPort
		}
		hostPart, portPart = authority[:colon], authority[colon+1:]
		if strings.IndexByte(hostPart, ':') != -1 {
			return p, reasonColon
		}
	}
	if hostPart == "" {
		return p, reasonEmptyHost
	}

	var reason string
	if p.Port, reason = parsePort(portPart, allowPortZero); reason != "" {
		return p, reason
	}
	if p.Host, p.HostKind, p.IP, reason = parseHost(hostPart); reason != "" {
		return p, reason
	}
	if p.Path, reason = parsePath(rawPath); reason != "" {
		return p, reason
	}
	p.Prefix = p.Scheme + "://" + p.Host + ":" + strconv.Itoa(p.Port) + p.Path
	return p, ""
}

func parsePort(text string, allowZero bool) (int, string) {
	if text == "" {
		return 0, reasonNoPort
	}
	for i := 0; i < len(text); i++ {
		if text[i] < '0' || text[i] > '9' {
			return 0, "the port must be a decimal number (no wildcard), not " + jsonString(text)
		}
	}
	if len(text) > 1 && text[0] == '0' {
		return 0, reasonPortZero
	}
	port := 65536
	if len(text) <= 5 {
		port, _ = strconv.Atoi(text)
	}
	if port == 0 && allowZero {
		return 0, ""
	}
	if port < 1 || port > 65535 {
		return 0, "port " + text + " is out of range (1-65535)"
	}
	return port, ""
}

func parseHost(text string) (host string, kind HostKind, ip string, reason string) {
	switch text {
	case "+":
		return "+", Strong, "", ""
	case "*":
		return "*", Weak, "", ""
	}
	if text[0] == '[' {
		inner := text[1 : len(text)-1]
		if strings.IndexByte(inner, '%') != -1 {
			return "", "", "", reasonZone
		}
		a, ok := parseIPv6(inner)
		if !ok {
			return "", "", "", "bad IPv6 literal " + text
		}
		ip = a.v6Text()
		if ip == "::" {
			return "", "", "", reasonAny6
		}
		return "[" + ip + "]", IP, ip, ""
	}
	if strings.ContainsAny(text, "*+") {
		return "", "", "", reasonWildcard
	}
	if isDigitsAndDots(text) {
		if _, ok := parseIPv4(text); !ok {
			return "", "", "", "bad IPv4 literal " + text + " (four numbers 0-255, no leading zeros)"
		}
		if text == "0.0.0.0" {
			return "", "", "", reasonAny4
		}
		return text, IP, text, ""
	}
	name, ascii := lowerHostName(text)
	if !ascii {
		return "", "", "", "the host name " + jsonString(text) + " is not ASCII: give an international name in punycode (xn--...), " +
			"the normal form src/urlprefix.js gives it"
	}
	if len(name) > 253 {
		return "", "", "", reasonLongName
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" {
			return "", "", "", "bad host name " + jsonString(text) + ": empty label"
		}
		if len(label) > 63 {
			return "", "", "", reasonLongLabel
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
				return "", "", "", "bad host name " + jsonString(text) + ": only letters, digits, - and _ are allowed"
			}
		}
	}
	return name, Explicit, "", ""
}

// lowerHostName is the JS's toLowerCase of a host name when the result is ASCII: ASCII
// letters, and the Kelvin sign, whose lower case is k. Every other character's lower
// case is not ASCII, and takes the JS to domainToASCII.
func lowerHostName(text string) (string, bool) {
	var b strings.Builder
	b.Grow(len(text))
	for _, r := range text {
		switch {
		case r < utf8.RuneSelf:
			b.WriteByte(lowerByte(byte(r)))
		case r == '\u212a':
			b.WriteByte('k')
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unreserved: RFC 3986 2.3, the characters a percent-escape never needs to hide.
var unreserved = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

// pathChar: RFC 3986 pchar minus pct-encoded, plus '/': what a prefix path may hold
// literally.
var pathChar = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/")

func parsePath(raw string) (string, string) {
	out := make([]byte, 0, len(raw)+1)
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '%':
			v := hexByte(raw, i+1)
			if v == -1 {
				return "", reasonBadEscape
			}
			if v < 128 && unreserved[v] {
				out = append(out, byte(v))
			} else {
				out = append(out, '%', upperByte(raw[i+1]), upperByte(raw[i+2]))
			}
			i += 2
		case c == '\\':
			return "", reasonBackslash
		case c < 128 && !pathChar[c]:
			return "", "the character " + jsonString(raw[i:i+1]) + " is not allowed in the path (percent-encode it)"
		default:
			out = append(out, c)
		}
	}
	if len(out) == 0 || out[len(out)-1] != '/' {
		out = append(out, '/')
	}
	path := string(out)
	segments := strings.Split(path, "/")
	for _, s := range segments[1 : len(segments)-1] {
		if s == "" {
			return "", reasonEmptySegment
		}
		if s == "." || s == ".." {
			return "", reasonDotSegment
		}
	}
	if !utf8.ValidString(path) {
		return "", reasonNotUnicode
	}
	return path, ""
}

// isSpaceOrControl is the JS's /[\s\u0000-\u001f\u007f]/: ECMAScript WhiteSpace and
// LineTerminator (Unicode Zs, tab, VT, FF, LF, CR, U+2028, U+2029, U+FEFF) and the C0
// controls with DEL.
func isSpaceOrControl(r rune) bool {
	switch {
	case r <= 0x20 || r == 0x7f:
		return true
	case r < 0xa0:
		return false
	case r == 0xa0 || r == 0x1680 || r >= 0x2000 && r <= 0x200a || r == 0x2028 || r == 0x2029 ||
		r == 0x202f || r == 0x205f || r == 0x3000 || r == 0xfeff:
		return true
	}
	return false
}

func isDigitsAndDots(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && s[i] != '.' {
			return false
		}
	}
	return s != ""
}

// conflictKey is what makes two prefixes the same registration: the scheme, the host
// category, the host's routing identity (an IPv4 address and its IPv4-mapped IPv6 form
// reach the same socket), the port and the matching form of the path.
func conflictKey(p *Prefix) string {
	return p.Scheme + " " + string(p.HostKind) + " " + hostKeyOf(p) + " " + strconv.Itoa(p.Port) + " " + pathKey(p.Path)
}

func hostKeyOf(p *Prefix) string {
	if p.IP == "" {
		return p.Host
	}
	a, _ := parseIP(p.IP)
	return a.keyText()
}

// parseIP reads a Prefix's IP: dotted IPv4 or IPv6 text.
func parseIP(s string) (addr, bool) {
	if a, ok := parseIPv4(s); ok {
		return a, true
	}
	return parseIPv6(s)
}

// pathKey is the matching form of a prefix path: ASCII in lower case, every other byte
// as a lower-case %xx (the UTF-8 clients send; the JS's encodeURIComponent).
func pathKey(path string) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(path))
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c < 128 {
			out = append(out, lowerByte(c))
		} else {
			out = append(out, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(out)
}

func byteSet(chars string) (set [256]bool) {
	for i := 0; i < len(chars); i++ {
		set[chars[i]] = true
	}
	return set
}

// hexByte is the byte of the two hex digits at s[i:i+2], or -1.
func hexByte(s string, i int) int {
	if i+1 >= len(s) {
		return -1
	}
	hi, lo := hexDigit(s[i]), hexDigit(s[i+1])
	if hi < 0 || lo < 0 {
		return -1
	}
	return hi<<4 | lo
}

func lowerByte(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c | 32
	}
	return c
}

func upperByte(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c &^ 32
	}
	return c
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				b[j] = lowerByte(b[j])
			}
			return string(b)
		}
	}
	return s
}
