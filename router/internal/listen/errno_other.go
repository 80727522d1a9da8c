//go:build !windows

package listen

import "syscall"

// A bind's failures (errno_windows.go: Winsock's numbers).
const (
	errAddrInUse    = syscall.EADDRINUSE
	errAddrNotAvail = syscall.EADDRNOTAVAIL
	errAccess       = syscall.EACCES
	errConnReset    = syscall.ECONNRESET
)
