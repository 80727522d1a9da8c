//go:build unix

package conn

import (
	"errors"
	"net"
	"syscall"
)

// tryWrite writes what the socket takes now, without waiting: a response goes out on
// the goroutine that has it (the worker's), and only what the socket does not take at
// once waits for the connection's writer goroutine. n is what was written.
func tryWrite(nc net.Conn, b []byte) (n int, err error) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, nil
	}
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		n, werr = syscall.Write(int(fd), b)
		return true
	}); err != nil {
		return 0, err
	}
	if n < 0 {
		n = 0
	}
	if werr != nil && !errors.Is(werr, syscall.EAGAIN) && !errors.Is(werr, syscall.EINTR) {
		return n, werr
	}
	return n, nil
}

// rawWriter is tryWrite for one connection's socket, made once: the RawConn and the
// write callback are its own, so a response's write allocates nothing (tryWrite's
// were three allocations per write: issue 25, router CPU per request).
type rawWriter struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) bool
	b   []byte
	n   int
	err error
}

func (w *rawWriter) write(fd uintptr) bool {
	w.n, w.err = syscall.Write(int(fd), w.b)
	return true
}

// tryWriteOut is tryWrite(c.nc, b) through the connection's rawWriter. Under the lock.
func (c *Conn) tryWriteOut(b []byte) (int, error) {
	w := c.raw
	if w == nil {
		sc, ok := c.nc.(syscall.Conn)
		if !ok {
			return tryWrite(c.nc, b)
		}
		rc, err := sc.SyscallConn()
		if err != nil {
			return 0, nil
		}
		w = &rawWriter{rc: rc}
		w.fn = w.write
		c.raw = w
	}
	w.b = b
	err := w.rc.Write(w.fn)
	n, werr := w.n, w.err
	w.b, w.err = nil, nil
	if err != nil {
		return 0, err
	}
	if n < 0 {
		n = 0
	}
	if werr != nil && !errors.Is(werr, syscall.EAGAIN) && !errors.Is(werr, syscall.EINTR) {
		return n, werr
	}
	return n, nil
}
