package route

// IP literals, as node reads them: net.isIPv4 and net.isIPv6 (lib/internal/net.js, node
// 20: strict dotted decimal with no leading zeros; RFC 4291 text where "::" stands for
// at least one zero group, optionally ending in such an IPv4 address), and the WHATWG URL
// serialiser for IPv6, which is RFC 5952 text (lower case, no leading zeros, the first
// longest run of two or more zero groups as "::").

// addr is an IP address; an IPv4 address is stored IPv4-mapped (::ffff:a.b.c.d), so
// that the two spellings of one socket address are one key (an IPv4-mapped address
// reaches the IPv4 socket).
type addr [16]byte

// parseIPv4 is node's isIPv4, into the mapped form.
func parseIPv4(s string) (a addr, ok bool) {
	var v4 [4]byte
	if !parseDotted(s, &v4) {
		return a, false
	}
	a[10], a[11] = 0xff, 0xff
	copy(a[12:], v4[:])
	return a, true
}

// parseDotted reads four decimal numbers 0-255 without leading zeros, separated by dots.
func parseDotted(s string, out *[4]byte) bool {
	i := 0
	for k := range 4 {
		if k > 0 {
			if i >= len(s) || s[i] != '.' {
				return false
			}
			i++
		}
		start := i
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' && i-start < 3 {
			n = n*10 + int(s[i]-'0')
			i++
		}
		digits := i - start
		if digits == 0 || n > 255 || (digits > 1 && s[start] == '0') {
			return false
		}
		out[k] = byte(n)
	}
	return i == len(s)
}

// parseIPv6 is node's isIPv6 without a zone (the callers refuse or strip "%zone").
func parseIPv6(s string) (a addr, ok bool) {
	var groups [8]uint16
	n := 0         // groups written
	ellipsis := -1 // where "::" stood, in groups
	i := 0
	if len(s) >= 2 && s[0] == ':' && s[1] == ':' {
		ellipsis = 0
		i = 2
		if i == len(s) {
			return a, true
		}
	}
	for i < len(s) {
		if n == 8 {
			return a, false
		}
		// a group, or a dotted IPv4 address as the last 32 bits
		start := i
		v := 0
		for i < len(s) && i-start < 5 {
			d := hexDigit(s[i])
			if d < 0 {
				break
			}
			v = v<<4 | d
			i++
		}
		if i < len(s) && s[i] == '.' {
			var v4 [4]byte
			if n > 6 || !parseDotted(s[start:], &v4) {
				return a, false
			}
			groups[n] = uint16(v4[0])<<8 | uint16(v4[1])
			groups[n+1] = uint16(v4[2])<<8 | uint16(v4[3])
			n += 2
			i = len(s)
			break
		}
		if i == start || i-start > 4 {
			return a, false
		}
		groups[n] = uint16(v)
		n++
		if i == len(s) {
			break
		}
		if s[i] != ':' {
			return a, false
		}
		i++
		if i < len(s) && s[i] == ':' {
			if ellipsis != -1 {
				return a, false
			}
			ellipsis = n
			i++
			if i == len(s) {
				break
			}
		} else if i == len(s) {
			return a, false // a trailing single ':'
		}
	}
	if ellipsis == -1 {
		if n != 8 {
			return a, false
		}
	} else {
		if n > 7 {
			return a, false
		}
		// move the groups after "::" to the end
		tail := n - ellipsis
		copy(groups[8-tail:], groups[ellipsis:n])
		for k := ellipsis; k < 8-tail; k++ {
			groups[k] = 0
		}
	}
	for k, g := range groups {
		a[2*k], a[2*k+1] = byte(g>>8), byte(g)
	}
	return a, true
}

// mapped reports whether a is an IPv4 address (stored IPv4-mapped).
func (a addr) mapped() bool {
	for _, b := range a[:10] {
		if b != 0 {
			return false
		}
	}
	return a[10] == 0xff && a[11] == 0xff
}

// v6Text is the WHATWG URL serialisation of a as IPv6 (no brackets).
func (a addr) v6Text() string {
	var g [8]uint16
	for k := range g {
		g[k] = uint16(a[2*k])<<8 | uint16(a[2*k+1])
	}
	// the first longest run of two or more zero groups
	best, bestLen := -1, 1
	for k := 0; k < 8; {
		if g[k] != 0 {
			k++
			continue
		}
		j := k
		for j < 8 && g[j] == 0 {
			j++
		}
		if j-k > bestLen {
			best, bestLen = k, j-k
		}
		k = j
	}
	buf := make([]byte, 0, 39)
	for k := 0; k < 8; k++ {
		if k == best {
			buf = append(buf, ':', ':')
			k += bestLen - 1
			continue
		}
		if k > 0 && k != best+bestLen {
			buf = append(buf, ':')
		}
		buf = appendHex(buf, g[k])
	}
	return string(buf)
}

// v4Text is the dotted decimal text of an IPv4 (mapped) address.
func (a addr) v4Text() string {
	buf := make([]byte, 0, 15)
	for k := 12; k < 16; k++ {
		if k > 12 {
			buf = append(buf, '.')
		}
		buf = appendDecimal(buf, int(a[k]))
	}
	return string(buf)
}

// keyText is the JS's text for the routing identity of an address (src/urlprefix.js
// unmapped): an IPv4 (or IPv4-mapped) address in dotted decimal, else IPv6 text.
func (a addr) keyText() string {
	if a.mapped() {
		return a.v4Text()
	}
	return a.v6Text()
}

// localAddr is the JS's addressKey: a socket address (maybe in brackets, maybe with a
// zone) as the key IP-bound prefixes are indexed by. Allocation-free: it runs per
// request.
func localAddr(s string) (a addr, ok bool) {
	if len(s) > 0 && s[0] == '[' {
		// the JS drops the first and the last character whatever the last is
		if len(s) < 2 {
			s = ""
		} else {
			s = s[1 : len(s)-1]
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			s = s[:i]
			break
		}
	}
	if a, ok = parseIPv4(s); ok {
		return a, true
	}
	return parseIPv6(s)
}

// AddressKey is the routing identity of a local address, as the JS's addressKey gives
// it: "127.0.0.1" for 127.0.0.1, ::ffff:127.0.0.1 and [::ffff:7f00:1]; RFC 5952 text for
// other IPv6 addresses, zone dropped; "" when addr is not an address.
func AddressKey(addr string) string {
	a, ok := localAddr(addr)
	if !ok {
		return ""
	}
	return a.keyText()
}

func appendHex(buf []byte, v uint16) []byte {
	const digits = "0123456789abcdef"
	started := false
	for shift := 12; shift >= 0; shift -= 4 {
		d := (v >> shift) & 0xf
		if d != 0 || started || shift == 0 {
			buf = append(buf, digits[d])
			started = true
		}
	}
	return buf
}

func appendDecimal(buf []byte, v int) []byte {
	if v >= 100 {
		buf = append(buf, byte('0'+v/100))
	}
	if v >= 10 {
		buf = append(buf, byte('0'+v/10%10))
	}
	return append(buf, byte('0'+v%10))
}

func hexDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c|32 >= 'a' && c|32 <= 'f':
		return int(c|32) - 'a' + 10
	}
	return -1
}
