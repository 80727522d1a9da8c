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
