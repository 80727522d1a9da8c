package h2

import (
	"encoding/binary"

	"golang.org/x/net/http2"

	"httpsys/router/internal/cache"
	"httpsys/router/internal/conn"
)

// A stream's side of the output cache (internal/cache), as HTTP/1.1's (conn/cached.go):
// the same entries serve both protocols (the key has no protocol: scheme, port, Host,
// target).

// answerFromCache answers s from the cache when an entry of its queue's app holds it
// (route, before the queue: a hit never waits for a worker). Under the lock.
func (s *Stream) answerFromCache() bool {
	cc := s.c.h.srv.Cache
	if cc == nil || s.q.Cache == nil {
		return false
	}
	// the app's instances as they are now (Dispatched takes them again)
	s.cacheEpoch = s.q.Cache.Epoch()
	var q cache.Query
	if !s.cacheQuery(&q) || (q.Method != "GET" && q.Method != "HEAD") {
		return false
	}
	ans, ok := cc.Lookup(s.q.Cache, &q)
	if !ok {
		return false
	}
	s.headSent = true
	s.resDone = true
	if s.closed {
		return true
	}
	status := ans.Status()
	fields, ok := headersOf(ans.AppendFields(nil), status, string(s.c.h.srv.Clock.Date()))
	if !ok {
		// (node's respond() refuses it: the stream is reset, as the JS router did)
		s.c.resetStream(s, http2.ErrCodeInternal)
		return true
	}
	// a 304 and a 416 carry no body; an empty 200 still ends with a DATA frame, as
	// node's stream.end(body) sends it
	end := s.isHead || status == 304 || status == 416
	s.writeHeaders(fields, end)
	if !end {
		if body := ans.Body(false); len(body) > 0 {
			s.pend = append(s.pend, body)
			s.pendBytes += len(body)
		}
		s.endData()
	}
	return true
}

// beginCapture: s's RESPONSE frame p came with a time to live: its response is copied
// into the cache as it passes, when the rules allow (before its head is checked for
// h2, as the JS router began it).
func (s *Stream) beginCapture(p []byte, bodyStart int) {
	ttl := binary.LittleEndian.Uint32(p[4:])
	cc := s.c.h.srv.Cache
	if ttl == 0 || cc == nil || s.q == nil || s.q.Cache == nil {
		return
	}
	var q cache.Query
	if !s.cacheQuery(&q) {
		return
	}
	rlen := int(binary.LittleEndian.Uint16(p[8:]))
	status := int(binary.LittleEndian.Uint16(p))
	s.capture = cc.Begin(s.q.Cache, &q, s.cacheEpoch, ttl, status, p[10:10+rlen], p[14+rlen:bodyStart], p[bodyStart:])
}

// captureBody copies response body bytes into the capture, if any.
func (s *Stream) captureBody(body []byte) {
	if s.capture != nil && len(body) > 0 && !s.capture.Append(body) {
		s.capture = nil
	}
}

// commitCapture: the response is complete (finish).
func (s *Stream) commitCapture() {
	if cp := s.capture; cp != nil {
		s.capture = nil
		cp.Commit()
	}
}

// cacheQuery fills q from s and the header fields of its REQUEST payload. An h2
// connection is always a TLS one; its client certificate is the handshake's.
func (s *Stream) cacheQuery(q *cache.Query) bool {
	q.Secure = true
	q.Port = s.c.port
	q.ClientCert = s.c.clientCert
	q.Host = s.host
	q.Target = s.url
	q.HasBody = s.hasBody
	return conn.FillQuery(q, s.payload)
}
