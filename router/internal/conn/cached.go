package conn

import (
	"encoding/binary"

	"httpsys/router/internal/cache"
)

// The connection's side of the output cache (internal/cache): a GET or HEAD answered
// from it before it is queued, and a worker's cacheable response captured as it passes.

// answerFromCache answers r from the cache when an entry of its queue's app holds it
// (route, before the queue: a hit never waits for a worker). Under the lock.
func (c *Conn) answerFromCache(r *Request) bool {
	if c.srv.Cache == nil || r.q.Cache == nil {
		return false
	}
	// the app's instances as they are now; onDispatched takes them again when a worker
	// takes the request (a response that comes before it hears so is judged by these)
	r.cacheEpoch = r.q.Cache.Epoch()
	// (an upgrade request is the app's to answer 101: never a stored page)
	if r.asksUpgrade {
		return false
	}
	var q cache.Query
	if !r.cacheQuery(&q) || (q.Method != "GET" && q.Method != "HEAD") {
		return false
	}
	ans, ok := c.srv.Cache.Lookup(r.q.Cache, &q)
	if !ok {
		return false
	}
	r.headSent = true
	r.resDone = true
	r.close = r.mustClose(false)
	dst := c.dst(r)
	n := len(*dst)
	*dst = ans.Append(*dst, connectionLines[r.ownConnection()], r.isHead)
	c.wrote(r, len(*dst)-n, 0)
	c.done(r)
	return true
}

// beginCapture: r's RESPONSE frame p came with a time to live: its response is copied
// into the cache as it passes, when the rules allow.
func (r *Request) beginCapture(p []byte, bodyStart int, ttl uint32) {
	cc := r.conn.srv.Cache
	if cc == nil || r.q == nil || r.q.Cache == nil {
		return
	}
	var q cache.Query
	if !r.cacheQuery(&q) {
		return
	}
	rlen := int(binary.LittleEndian.Uint16(p[8:]))
	status := int(binary.LittleEndian.Uint16(p))
	r.capture = cc.Begin(r.q.Cache, &q, r.cacheEpoch, ttl, status, p[10:10+rlen], p[14+rlen:bodyStart], p[bodyStart:])
}

// cacheQuery fills q from r and the header fields of its REQUEST payload (built by
// newRequest: wire.AppendRequestHead, then the pairs). False if it cannot be read.
func (r *Request) cacheQuery(q *cache.Query) bool {
	c := r.conn
	q.Port = c.port
	q.Secure = c.sec != nil
	q.ClientCert = c.sec != nil && c.sec.ClientCert
	q.Host = r.host
	q.Target = r.url
	if c.own != nil {
		// a standalone server's own port: its app gets the target as sent, and the key
		// is the target the app sees (docs/output-cache.md "Keys, memory and
		// invalidation"), so a dotted target is an entry of its own, as the app may
		// answer it otherwise
		u, ok := payloadURL(r.payload)
		if !ok {
			return false
		}
		q.Target = string(u)
	}
	q.HasBody = r.hasBody
	return FillQuery(q, r.payload)
}

// payloadURL is the url of a REQUEST payload (wire.AppendRequestHead: the fixed
// fields, then the method and the url), the target its worker sees.
func payloadURL(p []byte) ([]byte, bool) {
	if len(p) < 16 {
		return nil, false
	}
	_, rest, ok := nextString(p[16:])
	if !ok {
		return nil, false
	}
	u, _, ok := nextString(rest)
	return u, ok
}

// FillQuery reads the method and the header fields of a REQUEST payload (as
// wire.AppendRequestHead and the pairs build it) into q: HTTP/1.1's and h2's requests
// alike. False if it cannot be read.
func FillQuery(q *cache.Query, p []byte) bool {
	if len(p) < 16 {
		return false
	}
	pairs := int(binary.LittleEndian.Uint32(p[12:]))
	p = p[16:]
	var s [4][]byte // method, url, remote and local address
	for i := range s {
		var ok bool
		if s[i], p, ok = nextString(p); !ok {
			return false
		}
	}
	switch string(s[0]) {
	case "GET":
		q.Method = "GET"
	case "HEAD":
		q.Method = "HEAD"
	}
	for i := 0; i < pairs; i++ {
		name, rest, ok := nextString(p)
		if !ok {
			return false
		}
		value, rest, ok := nextString(rest)
		if !ok {
			return false
		}
		q.Field(name, value)
		p = rest
	}
	return true
}

func nextString(p []byte) (s, rest []byte, ok bool) {
	if len(p) < 2 {
		return nil, nil, false
	}
	n := int(binary.LittleEndian.Uint16(p))
	if len(p) < 2+n {
		return nil, nil, false
	}
	return p[2 : 2+n], p[2+n:], true
}
