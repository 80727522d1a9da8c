//go:build !windows && !unix

package listen

import "net"

// Private listens on a Unix socket file (Unix: listenPrivate in
// internal/hub/private_unix.go, which makes it 0600; Windows: pipe_windows.go).
func Private(path string) (net.Listener, error) {
	return net.Listen("unix", path)
}
