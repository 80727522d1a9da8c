//go:build !unix

package hub

import "net"

// listenPrivate listens on the worker socket. On Windows an AF_UNIX socket file takes
// the directory's ACL: the runtime directory is the user's own (docs/supervisor.md).
func listenPrivate(path string) (net.Listener, error) {
	return net.Listen("unix", path)
}
