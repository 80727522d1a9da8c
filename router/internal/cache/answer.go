package cache

import (
	"net/http"
	"strconv"
	"time"
)

// What a hit answers (docs/output-cache.md "What a cached answer looks like").
const (
	answerFull        = iota // the stored 200
	answerNotModified        // 304
	answerPartial            // 206, one range
	answerUnsatisfied        // 416
)

// Answer is a request answered from an entry: Append writes it.
type Answer struct {
	e    *entry
	kind int
	age  int64
	a, z int // the range, first and last byte
}

// Lookup: a GET or HEAD routed to a's queue (not an upgrade). ok: a fresh entry answers
// it; the caller appends the Answer instead of queueing the request. A hit takes no
// allocation.
func (c *Cache) Lookup(a *App, q *Query) (Answer, bool) {
	if a.entries.Load() == 0 || q.HasBody {
		a.misses.Add(1)
		return Answer{}, false
	}
	// (on the stack: a longer key, a Host near the header limit, costs an allocation)
	var buf [512]byte
	key := AppendKey(buf[:0], q.Secure, q.Port, q.Host, q.Target)
	now := c.now()
	c.mu.Lock()
	e := c.get(key, now)
	c.mu.Unlock()
	// an entry of another queue (its URL space moved) is not this app's answer; a client
	// with a certificate is answered only from a response that said public (issue 23)
	if e == nil || e.app != a || q.authorization || (!e.shared && q.ClientCert) {
		a.misses.Add(1)
		return Answer{}, false
	}
	a.hits.Add(1)
	return e.answer(q, now), true
}

// answer: what the request asks of the entry: a condition, a range, or all of it.
func (e *entry) answer(q *Query, now int64) Answer {
	// RFC 9111 4.2.3: the router's copy is the origin's: its age is its time here
	ans := Answer{e: e, age: max(0, (now-e.stored)/1000)}
	if (q.hasINM || q.hasIMS) && e.notModified(q) {
		ans.kind = answerNotModified
		return ans
	}
	if q.hasRange && q.Method != "HEAD" && (!q.hasIfRange || e.rangeStillValid(trim(q.ifRange))) {
		a, z, r := parseRange(q.rng, len(e.body))
		switch r {
		case rangeUnsatisfiable:
			ans.kind = answerUnsatisfied
			return ans
		case rangeOne:
			ans.kind, ans.a, ans.z = answerPartial, a, z
			return ans
		}
	}
	return ans
}

// Append appends the answer: its head with connLine (the router's Connection header
// line, or "") and, but for a HEAD (head), its body.
func (ans *Answer) Append(dst []byte, connLine string, head bool) []byte {
	e := ans.e
	switch ans.kind {
	case answerFull:
		// (the stored head has its status line)
		dst = append(dst, e.head...)
		dst = strconv.AppendInt(dst, ans.age, 10)
		dst = append(dst, "\r\n"...)
	case answerNotModified:
		dst = append(dst, "HTTP/1.1 304 Not Modified\r\n"...)
		dst = ans.AppendFields(dst)
	case answerUnsatisfied:
		dst = append(dst, "HTTP/1.1 416 Range Not Satisfiable\r\n"...)
		dst = ans.AppendFields(dst)
	case answerPartial:
		dst = append(dst, "HTTP/1.1 206 Partial Content\r\n"...)
		dst = ans.AppendFields(dst)
	}
	dst = append(dst, connLine...)
	dst = append(dst, "\r\n"...)
	return append(dst, ans.Body(head)...)
}

// Status is the answer's status: 200, 206, 304 or 416 (an h2 answer's :status).
func (ans *Answer) Status() int {
	switch ans.kind {
	case answerNotModified:
		return 304
	case answerPartial:
		return 206
	case answerUnsatisfied:
		return 416
	}
	return 200
}

// AppendFields appends the answer's header lines ("Name: value\r\n", the app's as
// stored, then Content-Length or Content-Range and Age): what Append writes between
// the status line and the router's Connection line, for an h2 answer's HEADERS.
func (ans *Answer) AppendFields(dst []byte) []byte {
	e := ans.e
	switch ans.kind {
	case answerFull:
		dst = append(dst, e.head[e.linesAt:]...)
		dst = strconv.AppendInt(dst, ans.age, 10)
		return append(dst, "\r\n"...)
	case answerNotModified:
		// RFC 9110 15.4.5: the fields a 304 carries, with Age
		lines := e.lines()
		for len(lines) > 0 {
			le := len(lines)
			for i := 0; i+1 < len(lines); i++ {
				if lines[i] == '\r' && lines[i+1] == '\n' {
					le = i + 2
					break
				}
			}
			line := lines[:le]
			lines = lines[le:]
			if colon := indexByte(line, ':'); colon > 0 && in304(line[:colon]) {
				dst = append(dst, line...)
			}
		}
	case answerUnsatisfied:
		dst = append(dst, e.lines()...)
		dst = append(dst, "Content-Range: bytes */"...)
		dst = strconv.AppendInt(dst, int64(len(e.body)), 10)
		dst = append(dst, "\r\nContent-Length: 0\r\n"...)
	case answerPartial:
		dst = append(dst, e.lines()...)
		dst = append(dst, "Content-Range: bytes "...)
		dst = strconv.AppendInt(dst, int64(ans.a), 10)
		dst = append(dst, '-')
		dst = strconv.AppendInt(dst, int64(ans.z), 10)
		dst = append(dst, '/')
		dst = strconv.AppendInt(dst, int64(len(e.body)), 10)
		dst = append(dst, "\r\nContent-Length: "...)
		dst = strconv.AppendInt(dst, int64(ans.z-ans.a+1), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "Age: "...)
	dst = strconv.AppendInt(dst, ans.age, 10)
	return append(dst, "\r\n"...)
}

// Body is the bytes the answer carries: none for a HEAD (head), a 304 or a 416. It is
// the entry's own memory: read it, never change it.
func (ans *Answer) Body(head bool) []byte {
	switch {
	case head:
		return nil
	case ans.kind == answerFull:
		return ans.e.body
	case ans.kind == answerPartial:
		return ans.e.body[ans.a : ans.z+1]
	}
	return nil
}

var fields304 = [...]string{"etag", "cache-control", "expires", "date", "content-location", "last-modified"}

func in304(name []byte) bool {
	for _, n := range fields304 {
		if equalFold(name, n) {
			return true
		}
	}
	return false
}

// notModified: RFC 9110 13.1.2 and 13.1.3: If-None-Match (weak comparison, or "*")
// decides when present; else If-Modified-Since against the entry's Last-Modified.
func (e *entry) notModified(q *Query) bool {
	if q.hasINM {
		if string(trim(q.inm)) == "*" {
			return true
		}
		if e.etag == nil {
			return false
		}
		mine := weak(e.etag)
		for v := q.inm; ; {
			t := v
			i := indexByte(v, ',')
			if i >= 0 {
				t = v[:i]
			}
			if string(weak(trim(t))) == string(mine) {
				return true
			}
			if i < 0 {
				return false
			}
			v = v[i+1:]
		}
	}
	if e.modified == nil {
		return false
	}
	since, ok1 := parseDate(q.ims)
	modified, ok2 := parseDate(e.modified)
	return ok1 && ok2 && !modified.After(since)
}

// parseDate reads an HTTP date in any of its three forms (RFC 9110 5.6.7).
func parseDate(b []byte) (time.Time, bool) {
	t, err := http.ParseTime(string(trim(b)))
	return t, err == nil
}

// rangeStillValid: RFC 9110 13.1.5: If-Range holds when it names the entry's ETag by
// strong comparison (neither weak) or is exactly its Last-Modified date; otherwise the
// whole body goes out.
func (e *entry) rangeStillValid(ifRange []byte) bool {
	if len(ifRange) > 0 && ifRange[0] == '"' || hasWeakPrefix(ifRange) {
		return e.etag != nil && !hasWeakPrefix(ifRange) && !hasWeakPrefix(e.etag) && string(ifRange) == string(e.etag)
	}
	return e.modified != nil && string(ifRange) == string(e.modified)
}

func hasWeakPrefix(t []byte) bool { return len(t) >= 2 && t[0] == 'W' && t[1] == '/' }

func weak(t []byte) []byte {
	if hasWeakPrefix(t) {
		return t[2:]
	}
	return t
}

// What parseRange found.
const (
	rangeIgnored       = iota // not one range we answer: the whole body (RFC 9110 14.2 allows it)
	rangeOne                  // [a, z]
	rangeUnsatisfiable        // 416
)

// parseRange reads one byte range (RFC 9110 14.1.2: bytes=a-b, bytes=a-, bytes=-n, in
// any case, with optional whitespace) of a body of size bytes.
func parseRange(v []byte, size int) (a, z, result int) {
	v = trim(v)
	if len(v) < 5 || !equalFold(v[:5], "bytes") {
		return 0, 0, rangeIgnored
	}
	v = trim(v[5:])
	if len(v) == 0 || v[0] != '=' {
		return 0, 0, rangeIgnored
	}
	v = trim(v[1:])
	first, v := digits(v)
	v = trim(v)
	if len(v) == 0 || v[0] != '-' {
		return 0, 0, rangeIgnored
	}
	last, v := digits(trim(v[1:]))
	if len(trim(v)) != 0 || (len(first) == 0 && len(last) == 0) {
		return 0, 0, rangeIgnored
	}
	if size == 0 {
		return 0, 0, rangeUnsatisfiable // no byte of an empty body can be asked for
	}
	if len(first) == 0 {
		n := number(last)
		if n == 0 {
			return 0, 0, rangeUnsatisfiable
		}
		return int(max(0, int64(size)-n)), size - 1, rangeOne
	}
	fa := number(first)
	zz := int64(size - 1)
	if len(last) > 0 {
		l := number(last)
		if l < fa {
			return 0, 0, rangeIgnored
		}
		zz = min(l, zz)
	}
	if fa >= int64(size) {
		return 0, 0, rangeUnsatisfiable
	}
	return int(fa), int(zz), rangeOne
}

// digits splits v after its leading ASCII digits.
func digits(v []byte) (d, rest []byte) {
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	return v[:i], v[i:]
}

// number is a run of digits' value, saturating (a number past any body's size is as
// good as infinite, as a JS number made it on the JS router).
func number(d []byte) int64 {
	var n int64
	for _, c := range d {
		if n > (1<<62)/10 {
			return 1 << 62
		}
		n = n*10 + int64(c-'0')
	}
	return n
}
