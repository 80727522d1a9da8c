package route

import "unicode/utf8"

// jsonString is JSON.stringify(s) for the reasons that quote their input, so they read
// as the JS's: '"' and '\' escaped, the C0 controls as \b \f \n \r \t or \u00xx,
// everything else as it is (no HTML escaping, U+2028 and U+2029 kept). An invalid
// UTF-8 byte, where the JS would hold a lone surrogate (which it writes \udxxx), is
// written \ufffd.
func jsonString(s string) string {
	const hex = "0123456789abcdef"
	out := make([]byte, 0, len(s)+2)
	out = append(out, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				out = append(out, `\ufffd`...)
			} else {
				out = append(out, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			if c < 0x20 {
				out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&15])
			} else {
				out = append(out, c)
			}
		}
		i++
	}
	return string(append(out, '"'))
}
