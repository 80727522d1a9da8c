package conn

// A connection's reader goroutine, once its connection ends, waits for the next one
// instead of exiting. A new goroutine starts on a small stack, and the reader's path
// (parse, route, the REQUEST's encoding, the dispatch) grows it by copying on every
// connection: with a connection per request (Connection: close) that copy and the
// goroutine's creation were 5-6% of the router's CPU (issue 25: router CPU per
// connection). A waiting goroutine keeps its grown stack (until a GC shrinks an idle
// one). At most maxIdleReaders wait, so a burst of connections leaves no crowd behind.
const maxIdleReaders = 128

// startReader serves c on a waiting reader goroutine, or a new one.
func (s *Server) startReader(c *Conn) {
	if s.idle != nil {
		select {
		case s.idle <- c:
			return
		default:
		}
	}
	go s.reader(c)
}

func (s *Server) reader(c *Conn) {
	for {
		c.serve()
		c = nil // (not kept alive while this goroutine waits)
		if s.idle == nil || s.idleReaders.Add(1) > maxIdleReaders {
			s.idleReaders.Add(-1)
			return
		}
		select {
		case c = <-s.idle:
			s.idleReaders.Add(-1)
		case <-s.quit:
			s.idleReaders.Add(-1)
			return
		}
	}
}
