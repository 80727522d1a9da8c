// Package conn is the router's client connections (docs/architecture.md 11): one
// goroutine reads and parses a connection (internal/parse),
// routes each request (internal/route) to its queue, and hands it to a worker; what
// goes back is written in request order (pipelining) even when the requests went to
// different workers: a later response is held until every earlier one is complete. It
// is written from the goroutine that has it, a writer goroutine taking over only what
// the socket does not take at once (writer.go).
//
// A connection's lock guards it and its requests (but their queue-side Entry and
// worker-side Link, which their queue's and worker's locks guard). It is the outermost
// lock: a connection calls into queues and workers while holding it, and a worker
// delivering a frame takes it with no lock of its own held.
package conn

import (
	"crypto/tls"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/cache"
	"httpsys/router/internal/clock"
	"httpsys/router/internal/route"
	"httpsys/router/internal/wire"
)

// Limits are the connection rules, in bytes and ms: the router's options, the config's
// limits among them (src/supervisor/router-config.js configLimits names them).
type Limits struct {
	MaxHeaderSize    int   // request line + headers (431 beyond)
	MaxBodySize      int64 // request body (413 beyond); 0: no limit
	HeadersTimeout   int64 // HeaderWait
	KeepAliveTimeout int64 // IdleConnection
	BodyTimeout      int64 // EntityBody
	DrainTimeout     int64 // DrainEntityBody
	FinGrace         int64 // ms an app has to answer a client that half-closed
}

const shards = 64

// Server is one router's client connections.
type Server struct {
	Table  *route.Table
	Clock  *clock.Clock
	Log    *slog.Logger
	Limits Limits
	// ServeH2 takes a TLS connection whose client chose h2 by ALPN (RFC 9113 3.2;
	// internal/h2). nil: h2 is not offered.
	ServeH2 func(tc *tls.Conn, port int, dual bool, done func(), sec *Secure)
	Cache   *cache.Cache // the output cache; nil when it is off

	peers   peers          // connections served by other packages (h2)
	buffers sync.Pool      // *[]byte of readSize: the connections' read buffers (writer.go)
	blocks  wire.BlockPool // of bigRead bytes: for reads that fill readSize (bigread.go)
	closing atomic.Bool
	nextID  atomic.Uint32
	count   atomic.Int64
	gone    chan struct{} // signalled when the last connection closes during Shutdown
	waiting atomic.Bool
	owned   sync.Map // port -> *ownedPort: a standalone server's own (owned.go)
	// reader goroutines waiting for a connection, and their count (reuse.go); quit is
	// closed by Shutdown
	idle        chan *Conn
	idleReaders atomic.Int32
	quit        chan struct{}

	shard [shards]struct {
		mu sync.Mutex
		m  map[uint32]*Conn
	}
}

// NewServer returns a Server with no connection.
func NewServer(t *route.Table, c *clock.Clock, log *slog.Logger, l Limits) *Server {
	s := &Server{Table: t, Clock: c, Log: log, Limits: l, gone: make(chan struct{}, 1), idle: make(chan *Conn), quit: make(chan struct{})}
	for i := range s.shard {
		s.shard[i].m = map[uint32]*Conn{}
	}
	return s
}

// Serve runs a client connection accepted on port until it closes; done is called
// then. dual: it came to a listener on every address (dual-stack).
func (s *Server) Serve(nc net.Conn, port int, dual bool, done func()) {
	s.serve(nc, port, dual, done, nil)
}

func (s *Server) serve(nc net.Conn, port int, dual bool, done func(), sec *Secure) {
	s.serveAs(nc, port, dual, done, sec, nil)
}

// serveAs: fixed, when not nil, is the standalone server the connection is of
// whatever its port (fixed.go).
func (s *Server) serveAs(nc net.Conn, port int, dual bool, done func(), sec *Secure, fixed *ownedPort) {
	if s.closing.Load() {
		_ = nc.Close()
		done()
		return
	}
	c := newConn(s, nc, s.nextID.Add(1), port, dual, done, fixed)
	c.sec = sec
	sh := &s.shard[c.id%shards]
	sh.mu.Lock()
	sh.m[c.id] = c
	sh.mu.Unlock()
	s.count.Add(1)
	c.mu.Lock()
	c.announce()
	c.mu.Unlock()
	s.startReader(c)
}

func (s *Server) removed(c *Conn) {
	sh := &s.shard[c.id%shards]
	sh.mu.Lock()
	if sh.m[c.id] == c {
		delete(sh.m, c.id)
	}
	sh.mu.Unlock()
	if s.count.Add(-1) == 0 && s.waiting.Load() {
		select {
		case s.gone <- struct{}{}:
		default:
		}
	}
}

// Count is the client connections open.
func (s *Server) Count() int { return int(s.count.Load()) }

// each calls fn for every connection (outside the registry's locks).
func (s *Server) each(fn func(c *Conn)) {
	var list []*Conn
	for i := range s.shard {
		sh := &s.shard[i]
		sh.mu.Lock()
		for _, c := range sh.m {
			list = append(list, c)
		}
		sh.mu.Unlock()
	}
	for _, c := range list {
		fn(c)
	}
}

// Sweep is the clock's tick: connections whose deadline passed are timed out.
func (s *Server) Sweep(now int64) {
	s.each(func(c *Conn) {
		if d := c.deadline.Load(); d != 0 && d <= now {
			c.timeout()
		}
	})
	s.sweepPeers(now)
}

// EndConnection is a worker's CONN_END: a connection it had requests of ends after
// what is in flight (idle: now). A connection the worker never saw is not its to end.
func (s *Server) EndConnection(w *attach.Worker, id uint32) {
	sh := &s.shard[id%shards]
	sh.mu.Lock()
	c := sh.m[id]
	sh.mu.Unlock()
	if c != nil {
		c.endBy(w)
	}
	s.endPeer(w, id)
}

// PortClosed: the last listener of port closed; its idle connections close now, busy
// ones after their responses (node's server.close() closes idle connections too).
func (s *Server) PortClosed(port int) {
	s.each(func(c *Conn) {
		// (a standalone server's own busy ones go on until they end, as node's do;
		// the idle ones end, as its close() ends them: owned_conn.go endIfIdle)
		if c.port == port && c.own == nil {
			c.closeWhenIdle()
		} else if c.port == port {
			c.endIfIdle()
		}
	})
	s.peersPortClosed(port)
}

// Closing reports whether Shutdown began.
func (s *Server) Closing() bool { return s.closing.Load() }

// Shutdown: no new requests; in-flight ones are answered with Connection: close within
// timeout, then what is left is closed.
func (s *Server) Shutdown(timeout time.Duration) {
	if s.closing.CompareAndSwap(false, true) && s.quit != nil {
		close(s.quit)
	}
	s.waiting.Store(true)
	s.each(func(c *Conn) { c.shutdown() })
	s.eachPeer(Peer.Shutdown)
	if s.count.Load() > 0 {
		t := time.NewTimer(timeout)
		select {
		case <-s.gone:
		case <-t.C:
		}
		t.Stop()
	}
	s.each(func(c *Conn) { c.destroy() })
	s.eachPeer(Peer.Destroy)
}
