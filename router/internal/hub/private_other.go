//go:build !unix

package hub

import (
	"net"

	"httpsys/router/internal/listen"
)

// listenPrivate listens on the worker socket: on Windows the supervisor's named pipe,
// owned by and open to this user only (internal/listen pipe_windows.go).
func listenPrivate(path string) (net.Listener, error) {
	return listen.Private(path)
}
