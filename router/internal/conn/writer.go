package conn

import "net"

// A connection's goroutines. The reader's buffer comes from a pool the server keeps,
// and goes back when the connection ends: with a connection per request (Connection:
// close) a 32 KiB buffer each was most of the router's allocation. The writer goroutine
// starts only when the socket first leaves bytes unwritten, or a TLS connection's FIN
// is due: responses are written from the goroutine that has them (tryWrite), and a
// plain connection's FIN with nothing queued is sent at once (wakeWriter), so a
// connection per request costs one goroutine, not two (issue 25: router CPU per
// connection).

// readBuffer is a read buffer of readSize bytes.
func (s *Server) readBuffer() *[]byte {
	if bp, ok := s.buffers.Get().(*[]byte); ok {
		return bp
	}
	b := make([]byte, readSize)
	return &b
}

// wakeWriter: the writer has work (bytes the socket did not take, or the FIN once what
// is queued is out). Under the lock.
func (c *Conn) wakeWriter() {
	if c.dead {
		return
	}
	if c.ending && !c.finSent && len(c.out) == 0 && c.writing == 0 {
		if tc, ok := c.nc.(*net.TCPConn); ok {
			// as the writer would (writeLoop): the FIN, then the end if the client's
			// came already or the router closes
			c.finSent = true
			if c.closeNow() {
				c.destroyLocked()
				return
			}
			if err := tc.CloseWrite(); err != nil || c.readEnded || c.srv.closing.Load() {
				c.destroyLocked()
			}
			return
		}
	}
	if !c.writerUp {
		c.writerUp = true
		go c.writeLoop()
		return
	}
	c.wcond.Signal()
}

// closeNow: the FIN is due and the client will send nothing the router must read, so
// the socket is closed at once instead of half-closed and read until the client's FIN
// (RFC 9112 9.6's lingering close, which is for a client that may still send): close(2)
// sends the FIN itself when nothing unread is left, and saves the shutdown, the read of
// the client's FIN and its wake-up (issue 25: router CPU per connection). Either the
// client's FIN was read already, or its last request said Connection: close (or was
// HTTP/1.0 without keep-alive) and was read whole: RFC 9112 9.6, a client that sends
// "close" must not send further requests on the connection (node's server, too, closes
// right after its FIN, lingering for nothing). Plain TCP only: TLS sends close_notify
// first. Under the lock.
func (c *Conn) closeNow() bool {
	if c.tunnel != nil || c.sec != nil {
		return false
	}
	if _, ok := c.nc.(*net.TCPConn); !ok {
		return false
	}
	return c.readEnded || (c.clientDone && c.current == nil)
}
