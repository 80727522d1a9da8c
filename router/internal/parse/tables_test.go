package parse

import (
	"strings"
	"testing"
)

// The class table against the definitions it encodes (RFC 9110 5.6.2, 5.5, 5.6.4; RFC
// 3986).
func TestByteClassesAreTheRFCs(t *testing.T) {
	alnum := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
	in := func(set string) func(byte) bool { return func(c byte) bool { return strings.IndexByte(set, c) >= 0 } }
	defs := []struct {
		name  string
		class byte
		def   func(byte) bool
	}{
		{"tchar (RFC 9110 5.6.2)", cTchar, func(c byte) bool { return alnum(c) || in("!#$%&'*+-.^_`|~")(c) }},
		{"request-target (VCHAR)", cTarget, func(c byte) bool { return c >= 0x21 && c <= 0x7e }},
		{"field-vchar, SP, HTAB (RFC 9110 5.5)", cFvalue, func(c byte) bool { return c >= 0x20 && c != 0x7f || c == '\t' }},
		{"qdtext (RFC 9110 5.6.4)", cQdtext, func(c byte) bool {
			return c == '\t' || c == ' ' || c == '!' || c >= 0x23 && c <= 0x5b || c >= 0x5d && c <= 0x7e || c >= 0x80
		}},
		{"host (RFC 3986)", cHost, func(c byte) bool { return alnum(c) || in("-._~%!$&'()*+,;=:[]")(c) }},
		{"scheme (RFC 3986 3.1)", cScheme, func(c byte) bool { return alnum(c) || in("+-.")(c) }},
	}
	for _, d := range defs {
		for c := range 256 {
			if is(byte(c), d.class) != d.def(byte(c)) {
				t.Errorf("%s: byte %#x is %v", d.name, c, is(byte(c), d.class))
			}
		}
	}
	for c := range 256 {
		want := strings.IndexByte("0123456789abcdef", byte(c)|0x20)
		if !('0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f') {
			want = -1
		}
		if unhex(byte(c)) != want {
			t.Errorf("unhex(%#x) = %d", c, unhex(byte(c)))
		}
	}
}
