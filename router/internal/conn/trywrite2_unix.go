//go:build unix

package conn

import (
	"errors"
	"net"
	"syscall"
	"unsafe"
)

// tryWrite2 writes a and then b in one writev(2), as far as the socket takes them now,
// without waiting (tryWrite). n counts a's bytes first.
func tryWrite2(nc net.Conn, a, b []byte) (n int, err error) {
	if len(a) == 0 {
		return tryWrite(nc, b)
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0, nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, nil
	}
	iov := [2]syscall.Iovec{{Base: &a[0]}, {Base: &b[0]}}
	iov[0].SetLen(len(a))
	iov[1].SetLen(len(b))
	var werr error
	if err := rc.Write(func(fd uintptr) bool {
		r, _, e := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), 2)
		n = int(r)
		if e != 0 {
			n, werr = 0, e
		}
		return true
	}); err != nil {
		return 0, err
	}
	if werr != nil && !errors.Is(werr, syscall.EAGAIN) && !errors.Is(werr, syscall.EINTR) {
		return 0, werr
	}
	return n, nil
}
