package conn

import (
	"net"
	"sync/atomic"

	"httpsys/router/internal/queue"
)

// A standalone server's connections that no port of the router names (issue 25
// "Standalone"): those of its listen(path), a Unix socket, and the sockets its app
// handed it (server.emit('connection', socket)). As in the JS router, each is a
// connection of a port the server owns: its settings, its one queue, nothing routed;
// its local port is 0, as the JS router reported it.

// Fixed is one such server's: the settings its next connections follow, and its queue.
type Fixed struct {
	op atomic.Pointer[ownedPort]
}

// NewFixed: connections served by f follow o and go to q.
func (s *Server) NewFixed(o Owned, q *queue.Queue) *Fixed {
	f := &Fixed{}
	f.op.Store(s.newOwned(o, q))
	return f
}

// SetFixed: the server's settings changed; its connections from now on follow o
// (allowHalfOpen the open ones too, as SetOwned).
func (s *Server) SetFixed(f *Fixed, o Owned) {
	old := f.op.Load()
	old.allowHalfOpen.Store(o.AllowHalfOpen)
	f.op.Store(s.newOwned(o, old.q))
}

// ServeFixed runs nc as a connection of f's server until it closes; done is called then.
// dual: an IPv4 peer is named ::ffff:a.b.c.d (a socket of a dual-stack listener).
func (s *Server) ServeFixed(nc net.Conn, f *Fixed, dual bool, done func()) {
	s.serveAs(nc, 0, dual, done, nil, f.op.Load())
}

// FixedClosed: f's server closed (its listen(path)'s close()): its idle connections
// end, as node's close() ends them; busy ones go on until they end.
func (s *Server) FixedClosed(f *Fixed) {
	q := f.op.Load().q
	s.each(func(c *Conn) {
		if c.own != nil && c.own.q == q && c.port == 0 {
			c.endIfIdle()
		}
	})
}
