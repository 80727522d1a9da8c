//go:build windows

package listen

import "syscall"

// Winsock's codes for a bind that failed: Go's syscall.EADDRINUSE and friends are
// other numbers on Windows, and a *net.OpError holds the WSA one.
const (
	errAddrInUse    = syscall.Errno(10048) // WSAEADDRINUSE
	errAddrNotAvail = syscall.Errno(10049) // WSAEADDRNOTAVAIL
	errAccess       = syscall.Errno(10013) // WSAEACCES: a port another socket holds exclusively, or one reserved (netsh excludedportrange)
	errConnReset    = syscall.Errno(10054) // WSAECONNRESET
)
