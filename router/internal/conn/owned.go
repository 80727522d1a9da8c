package conn

import (
	"sync/atomic"

	"httpsys/router/internal/queue"
)

// A port a standalone server owns (`node -r register app.js` on the native router,
// issue 25 "Standalone"): its connections follow that server's settings, as node's own
// would (src/http/server.js routerSettings, its ownsPort),
// not the shared router's rules: the server's timeouts and header limit, any Host
// value taken (the port alone routes), the target as sent, KEEP_OPEN honoured
// (node's last response under maxRequestsPerSocket), and a client's FIN told to the
// worker at once (CONN_FIN) unless the server allows half-open connections.

// Owned are a standalone server's settings for the connections of its port, in ms
// and bytes; 0 turns a timeout off, as node's 0 does.
type Owned struct {
	KeepAliveTimeout int64 `json:"keepAliveTimeout"`
	HeadersTimeout   int64 `json:"headersTimeout"`
	MaxHeaderSize    int   `json:"maxHeaderSize"`
	FinGrace         int64 `json:"finGrace"`
	AllowHalfOpen    bool  `json:"allowHalfOpen"`
	// node's insecureHTTPParser: the parser's Lenient
	Lenient bool `json:"insecureHTTPParser"`
	// node's requireHostHeader (the worker checks it: CONN_OPEN tells it the
	// connection is its server's own)
	RequireHost bool `json:"requireHost"`
}

// SetOwned: port is a standalone server's own from now on, q its queue; connections
// accepted there follow o (those open keep what they started with) and are told to
// q's worker (owned_conn.go).
func (s *Server) SetOwned(port int, o Owned, q *queue.Queue) {
	op := s.newOwned(o, q)
	// httpAllowHalfOpen is read when the FIN comes, as node reads it: the connections
	// open hear a change too (an app sets it right after listen())
	if old, ok := s.owned.Load(port); ok {
		old.(*ownedPort).allowHalfOpen.Store(o.AllowHalfOpen)
	}
	s.owned.Store(port, op)
}

func (s *Server) newOwned(o Owned, q *queue.Queue) *ownedPort {
	l := s.Limits
	l.KeepAliveTimeout = o.KeepAliveTimeout
	l.HeadersTimeout = o.HeadersTimeout
	if o.MaxHeaderSize > 0 {
		l.MaxHeaderSize = o.MaxHeaderSize
	}
	l.FinGrace = o.FinGrace
	op := &ownedPort{limits: l, q: q, lenient: o.Lenient}
	op.allowHalfOpen.Store(o.AllowHalfOpen)
	return op
}

// ClearOwned: port is no longer a standalone server's (its close(), or a
// listen(prefix) of the same process joined it: the table routes it from then on).
func (s *Server) ClearOwned(port int) { s.owned.Delete(port) }

// OwnedBy: port is q's server's own (SetOwned, not cleared since).
func (s *Server) OwnedBy(port int, q *queue.Queue) bool {
	v, ok := s.owned.Load(port)
	return ok && v.(*ownedPort).q == q
}

type ownedPort struct {
	limits        Limits
	q             *queue.Queue
	lenient       bool
	allowHalfOpen atomic.Bool
}

// limitsFor are the rules of a connection accepted on port, and its owner's settings
// when a standalone server owns the port (else nil).
func (s *Server) limitsFor(port int) (*Limits, *ownedPort) {
	if v, ok := s.owned.Load(port); ok {
		o := v.(*ownedPort)
		return &o.limits, o
	}
	return &s.Limits, nil
}
