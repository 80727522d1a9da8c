//go:build unix

package conn

import (
	"net"
	"syscall"
	"time"
)

// serveRaw reads a plain TCP connection inside one RawConn.Read for its whole life and
// reports whether it did (false: serve's net.Conn loop reads it instead).
//
// net.Conn.Read re-arms the poller before every read, so a read loop over it asks the
// socket once more after each request and is told EAGAIN before it parks: two reads
// per keep-alive request (bench/results/router-profile.md, round 4). Inside one
// RawConn.Read the poller is armed once; the callback reads until a read comes back
// shorter than its buffer (the socket's queue was emptied), then returns false to park
// until the next edge, which Go's edge-triggered poller records even when it comes
// while the callback is still parsing. One read per request.
//
// While the callback runs it holds the descriptor, and net.Conn.Close waits for it:
// destroyLocked, which may run on this goroutine (a parse error) or on another one
// that holds c.mu while the callback waits for it, must not close the socket. With
// c.rawRead set it only wakes the read and any blocked write (a deadline in the past),
// and the socket is closed here once the read has returned.
func (c *Conn) serveRaw(small *[]byte, bpp **[]byte) bool {
	tc, ok := c.nc.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	c.mu.Lock()
	if c.dead {
		c.mu.Unlock()
		return true
	}
	c.rawRead = true
	c.mu.Unlock()

	var rerr error
	eof := false
	err = rc.Read(func(fd uintptr) bool {
		for {
			buf := **bpp
			n, e := syscall.Read(int(fd), buf)
			switch {
			case e == syscall.EINTR:
				continue
			case e == syscall.EAGAIN:
				return false
			case e != nil:
				rerr = e
				return true
			case n == 0:
				eof = true
				return true
			}
			if !c.onData(buf[:n]) {
				return true
			}
			*bpp = c.srv.nextBuffer(small, *bpp, n)
			if n < len(buf) {
				return false
			}
		}
	})

	c.mu.Lock()
	c.rawRead = false
	if c.dead {
		_ = c.nc.Close()
		c.mu.Unlock()
		return true
	}
	c.mu.Unlock()
	if eof && err == nil {
		c.onEnd()
		return true
	}
	if rerr == nil && err == nil {
		// onData said the connection is over without destroying it
		return true
	}
	c.destroy()
	return true
}

// wakeRaw: the connection died while serveRaw's read holds the socket: wake that read
// (and a write blocked in the writer goroutine); serveRaw closes the socket.
func (c *Conn) wakeRaw() {
	_ = c.nc.SetDeadline(time.Unix(1, 0))
}
