package listen

import (
	"net"
	"os"
)

// FileConn is net.FileConn for a connection a standalone app hands over (a socket node
// accepted before its listener reached the router, or one the app gave a server with
// server.emit('connection'), issue 25 "Standalone"): the socket keeps the keep-alive
// it had, where net.FileConn turns Go's default on (probes after 15 s). node sets none
// on what its server accepts unless server.keepAlive asks, and a socket the app set up
// itself is the app's.
func FileConn(f *os.File) (net.Conn, error) {
	was, known := keepAliveOf(f)
	c, err := net.FileConn(f)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok && known && !was {
		_ = tc.SetKeepAlive(false)
	}
	return c, nil
}
