package cache

import "strconv"

// Query is what the cache reads of a request. The connection fills it: the fields
// below, then Field for each header field as sent. Its byte slices must stay valid
// while it is used (the request's own REQUEST payload does).
type Query struct {
	Secure     bool
	Port       int    // the listener's
	Host       string // as the app saw it (an absolute-form target's authority)
	Target     string // the canonical target, as routed and as the app sees it
	Method     string
	HasBody    bool
	ClientCert bool // the client sent a certificate on the connection (TLS)

	authorization bool
	hasRange      bool
	hasIfRange    bool
	hasINM        bool
	hasIMS        bool
	rng           []byte
	ifRange       []byte
	inm           []byte
	ims           []byte
}

// Field reads one header field of the request: Authorization (RFC 9111 3.5: a shared
// cache never reuses a response for one without an explicit permission; HTTP.SYS never
// caches one), and what a hit answers from its entry (Range, If-Range, If-None-Match,
// If-Modified-Since). Repeated If-None-Match fields are one list (RFC 9110 5.3); of the
// others the last one counts, as on the JS router.
func (q *Query) Field(name, value []byte) {
	switch len(name) {
	case 5:
		if equalFold(name, "range") {
			q.rng, q.hasRange = value, true
		}
	case 8:
		if equalFold(name, "if-range") {
			q.ifRange, q.hasIfRange = value, true
		}
	case 13:
		if equalFold(name, "authorization") {
			q.authorization = true
		} else if equalFold(name, "if-none-match") {
			if q.hasINM {
				// (rare: the only allocation of a hit)
				q.inm = append(append(append(make([]byte, 0, len(q.inm)+1+len(value)), q.inm...), ','), value...)
			} else {
				q.inm, q.hasINM = value, true
			}
		}
	case 17:
		if equalFold(name, "if-modified-since") {
			q.ims, q.hasIMS = value, true
		}
	}
}

// Response header fields the cache does not store: the connection's own, the framing
// (the cache writes one Content-Length of its own), and Age (it writes the real one).
var notStored = [...]string{"connection", "keep-alive", "transfer-encoding", "content-length", "age", "proxy-connection", "upgrade"}

// Capture is a response being copied as it passes, until it is complete.
type Capture struct {
	c        *Cache
	app      *App
	key      string
	epoch    uint64
	ttlMs    int64
	reason   []byte
	lines    []byte
	declared int64 // its Content-Length, -1 without
	etag     []byte
	modified []byte
	shared   bool
	chunked  bool // the worker framed it (src/http: writeHead() then end()): stored bare
	body     []byte
}

// Begin: a RESPONSE frame with a time to live (ttl s) for a request routed to a's
// queue, which went to its worker at instance generation epoch. It returns the capture
// of the response, when every rule allows storing it (the worker computed the time to
// live from the same rules; the router does not take its word for the refusals), else
// nil. reason, block ("Name: value\r\n" lines) and body (its first bytes) are the
// frame's; nothing of them is kept.
func (c *Cache) Begin(a *App, q *Query, epoch uint64, ttl uint32, status int, reason, block, body []byte) *Capture {
	if ttl == 0 || q.Method != "GET" || q.HasBody || q.authorization || status != 200 {
		return nil
	}
	pairs, ok := pairsOf(block)
	if !ok {
		return nil
	}
	rules := judge(pairs)
	if rules.refused || (!rules.public && q.ClientCert) {
		return nil
	}
	cp := &Capture{c: c, app: a, epoch: epoch, ttlMs: int64(ttl) * 1000, declared: -1, shared: rules.public}
	lines := make([]byte, 0, len(block))
	for i := 0; i < len(pairs); i += 2 {
		name, value := pairs[i], pairs[i+1]
		switch {
		case equalFold(name, "transfer-encoding"):
			// the worker's chunked framing comes off when it is stored; any other coding stays out
			if !equalFold(value, "chunked") || cp.chunked {
				return nil
			}
			cp.chunked = true
			continue
		case equalFold(name, "content-length"):
			// 1 to 15 digits, as the JS router read it: below 2^53, which a JS number holds
			// exactly
			n := decimal(value, 15)
			if n < 0 || (cp.declared != -1 && n != cp.declared) {
				return nil
			}
			cp.declared = n // repeats of one value: stored once
			continue
		case isNotStored(name):
			continue
		case equalFold(name, "etag"):
			cp.etag = value
		case equalFold(name, "last-modified"):
			cp.modified = value
		}
		lines = append(lines, name...)
		lines = append(lines, ": "...)
		lines = append(lines, value...)
		lines = append(lines, "\r\n"...)
	}
	if cp.declared > c.maxResponse || (cp.chunked && cp.declared != -1) {
		return nil
	}
	// etag and modified point into block: copied with the lines
	cp.lines = lines
	if cp.etag != nil {
		cp.etag = append([]byte(nil), cp.etag...)
	}
	if cp.modified != nil {
		cp.modified = append([]byte(nil), cp.modified...)
	}
	if len(reason) > 0 {
		cp.reason = append([]byte(nil), reason...)
	} else {
		cp.reason = []byte("OK")
	}
	cp.key = string(AppendKey(make([]byte, 0, 16+len(q.Host)+len(q.Target)), q.Secure, q.Port, q.Host, q.Target))
	if len(body) > 0 && !cp.Append(body) {
		return nil
	}
	return cp
}

// Append copies body bytes of the captured response (they are not the capture's to
// keep). False: it grew past the largest response stored, and is dropped.
func (cp *Capture) Append(body []byte) bool {
	if int64(len(cp.body))+int64(len(body)) > cp.c.maxResponse {
		cp.body = nil
		return false
	}
	cp.body = append(cp.body, body...)
	return true
}

// Commit: the captured response is complete: stored, unless its app's instances
// changed meanwhile (or its queue went), or it is not the whole body it said.
func (cp *Capture) Commit() {
	c := cp.c
	if cp.app.epoch.Load() != cp.epoch {
		return
	}
	if cp.declared != -1 && cp.declared != int64(len(cp.body)) {
		return
	}
	body := cp.body
	if cp.chunked {
		// trailers are not stored (a cached answer has a Content-Length, no trailer section)
		b, trailers, ok := unchunk(body)
		if !ok || trailers {
			return
		}
		body = b
	}
	head := make([]byte, 0, 13+len(cp.reason)+2+len(cp.lines)+40)
	head = append(head, "HTTP/1.1 200 "...)
	head = append(head, cp.reason...)
	head = append(head, "\r\n"...)
	linesAt := len(head)
	head = append(head, cp.lines...)
	linesEnd := len(head)
	head = append(head, "Content-Length: "...)
	head = strconv.AppendInt(head, int64(len(body)), 10)
	head = append(head, "\r\nAge: "...)
	size := int64(entryOverhead + len(cp.key) + len(cp.lines)*lineCopies + len(body))
	if len(body) < joinedBody {
		size += int64(len(body))
	}
	if size > c.maxSize {
		return
	}
	now := c.now()
	e := &entry{key: cp.key, app: cp.app, stored: now, expires: now + cp.ttlMs, size: size, shared: cp.shared,
		head: head, linesAt: linesAt, linesEnd: linesEnd, body: body, etag: cp.etag, modified: cp.modified}
	c.mu.Lock()
	// (checked again under the lock: an Invalidate between the two must win)
	if cp.app.epoch.Load() == cp.epoch {
		c.put(e)
	}
	c.mu.Unlock()
}

// pairsOf splits "Name: value\r\n" lines into [name, value, ...] (values trimmed as JS's
// String trim() trims latin1 text: tab to CR, space, NBSP); false when a line is not one.
func pairsOf(block []byte) ([][]byte, bool) {
	var out [][]byte
	for len(block) > 0 {
		le := len(block)
		next := le
		for i := 0; i+1 < len(block); i++ {
			if block[i] == '\r' && block[i+1] == '\n' {
				le, next = i, i+2
				break
			}
		}
		colon := indexByte(block, ':')
		if colon <= 0 || colon > le {
			return nil, false
		}
		out = append(out, block[:colon], trim(block[colon+1:le]))
		block = block[next:]
	}
	return out, true
}

func isNotStored(name []byte) bool {
	for _, n := range notStored {
		if equalFold(name, n) {
			return true
		}
	}
	return false
}
