//go:build unix

package hub

import (
	"net"
	"os"
	"syscall"
)

// listenPrivate listens on a Unix socket that only this user may connect to (0600):
// another user must not attach to a queue and receive its requests. The umask covers
// the moment between bind and chmod.
func listenPrivate(path string) (net.Listener, error) {
	old := syscall.Umask(0o177)
	l, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o600); err != nil {
		_ = l.Close()
		return nil, err
	}
	return l, nil
}
