//go:build unix

package listen

import (
	"os"
	"syscall"
)

// keepAliveOf reads SO_KEEPALIVE of f's socket; known is false when it cannot be read.
func keepAliveOf(f *os.File) (on bool, known bool) {
	rc, err := f.SyscallConn()
	if err != nil {
		return false, false
	}
	v, gerr := 0, error(nil)
	if err := rc.Control(func(fd uintptr) {
		v, gerr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE)
	}); err != nil || gerr != nil {
		return false, false
	}
	return v != 0, true
}
