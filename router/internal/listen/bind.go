package listen

import (
	"context"
	"net"
	"strconv"
)

// Bind listens on port (0: one the system picks) at ip ("" for every address, dual
// stack as node's listen(port)) for a standalone app whose parent cannot hand its own
// socket over (Windows: node duplicates a handle into the child in libuv's frame
// format, and Go cannot adopt a raw SOCKET; docs/architecture.md 11). No retry: node's
// listen() fails at once on a port in use, and so does this. The caller hands the
// listener to Adopt.
func Bind(ip string, port int) (net.Listener, error) {
	// no TCP keep-alive on accepted connections, as bind's (listen.go)
	lc := net.ListenConfig{KeepAlive: -1}
	ln, err := lc.Listen(context.Background(), "tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return nil, mapError(err, port, ip)
	}
	return ln, nil
}
