package cache

// The rules of src/cache/rules.js that the router applies itself (docs/output-cache.md
// "The rules"): the worker computed a response's time to live from the same table, and
// the router does not take its word for the refusals (a worker cannot cache what the
// rules forbid).

// cacheControl is what the cache reads of Cache-Control (RFC 9111 5.2).
type cacheControl struct {
	public, private, noStore, noCache bool
	sMaxAge                           int64 // -1 when absent or not delta-seconds
}

// parseCacheControl reads one value, or several joined with ",": names in any case,
// arguments as tokens or quoted strings (src/cache/rules.js parseCacheControl).
func (cc *cacheControl) parse(v []byte) {
	for len(v) > 0 {
		part := v
		if i := indexByte(v, ','); i >= 0 {
			part, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		name, arg := part, []byte(nil)
		if eq := indexByte(part, '='); eq >= 0 {
			name, arg = part[:eq], trim(part[eq+1:])
			if len(arg) >= 2 && arg[0] == '"' && arg[len(arg)-1] == '"' {
				arg = arg[1 : len(arg)-1]
			}
		}
		name = trim(name)
		switch {
		case equalFold(name, "public"):
			cc.public = true
		case equalFold(name, "private"):
			cc.private = true
		case equalFold(name, "no-store"):
			cc.noStore = true
		case equalFold(name, "no-cache"):
			cc.noCache = true
		case equalFold(name, "s-maxage"):
			// delta-seconds of 1 to 10 digits (src/cache/rules.js seconds)
			cc.sMaxAge = decimal(arg, 10)
		}
	}
}

// decimal is b's value when it is 1 to most digits, else -1.
func decimal(b []byte, most int) int64 {
	if len(b) == 0 || len(b) > most {
		return -1
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int64(c-'0')
	}
	return n
}

// responseRules is what the rules say of a response's header fields.
type responseRules struct {
	refused bool // Set-Cookie, Vary, Pragma; Cache-Control private, no-store, no-cache or s-maxage=0
	public  bool // Cache-Control: public (it may answer a client that sent a certificate)
}

// judge applies rules.js responseRefused and publicResponse to [name, value, ...]:
// Cache-Control fields are read together, as one list (RFC 9110 5.3).
func judge(pairs [][]byte) responseRules {
	cc := cacheControl{sMaxAge: -1}
	seen := false
	var out responseRules
	for i := 0; i+1 < len(pairs); i += 2 {
		n := pairs[i]
		switch {
		case equalFold(n, "vary"), equalFold(n, "pragma"), equalFold(n, "set-cookie"):
			out.refused = true
		case equalFold(n, "cache-control"):
			// parsing each value in turn is parsing them joined with ","
			cc.parse(pairs[i+1])
			seen = true
		}
	}
	if seen {
		out.public = cc.public
		if cc.private || cc.noStore || cc.noCache || cc.sMaxAge == 0 {
			out.refused = true
		}
	}
	return out
}

// trim drops what JavaScript's String.prototype.trim drops of a latin1 string: the
// ASCII whitespace and line ends, and NO-BREAK SPACE.
func trim(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xa0 }

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// equalFold: b is name (lower case ASCII) in any case.
func equalFold(b []byte, name string) bool {
	if len(b) != len(name) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c |= 0x20
		}
		if c != name[i] {
			return false
		}
	}
	return true
}
