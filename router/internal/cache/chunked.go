package cache

import "bytes"

// unchunk takes HTTP/1.1 chunked framing (RFC 9112 7.1) off a whole body a worker
// framed (src/http frames a response given with writeHead() then end()): the cache
// stores bodies bare, with a Content-Length of its own (src/wire/chunked.js). ok is
// false when buf is not one whole, well-formed chunked body; trailers says it carried
// trailer fields (such a body is not stored: a cached answer has no trailer section).
func unchunk(buf []byte) (body []byte, trailers, ok bool) {
	var parts [][]byte
	n := 0
	p := 0
	for {
		eol := bytes.Index(buf[p:], crlf)
		if eol < 0 {
			return nil, false, false
		}
		eol += p
		line := buf[p:eol]
		// chunk extensions after ';' are ignored
		if semi := indexByte(line, ';'); semi >= 0 {
			line = line[:semi]
		}
		size, good := hexSize(trim(line))
		if !good {
			return nil, false, false
		}
		if size == 0 {
			rest := buf[eol+2:]
			trailers = len(rest) > 2
			if len(rest) < 2 || rest[len(rest)-2] != '\r' || rest[len(rest)-1] != '\n' {
				return nil, trailers, false
			}
			if trailers && bytes.Index(rest, []byte("\r\n\r\n")) != len(rest)-4 {
				return nil, trailers, false
			}
			break
		}
		start := eol + 2
		end := start + size
		if end+2 > len(buf) || buf[end] != '\r' || buf[end+1] != '\n' {
			return nil, false, false
		}
		parts = append(parts, buf[start:end])
		n += size
		p = end + 2
	}
	if len(parts) == 1 {
		return parts[0], trailers, true
	}
	body = make([]byte, 0, n)
	for _, x := range parts {
		body = append(body, x...)
	}
	return body, trailers, true
}

var crlf = []byte("\r\n")

// hexSize: 1 to 12 hex digits (chunked.js), so the size fits an int.
func hexSize(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 12 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			n = n<<4 | int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n<<4 | int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n<<4 | int(c-'A'+10)
		default:
			return 0, false
		}
	}
	return n, true
}
