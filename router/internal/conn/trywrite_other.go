//go:build !unix

package conn

import "net"

// tryWrite: every write goes through the connection's writer goroutine here.
func tryWrite(net.Conn, []byte) (int, error) { return 0, nil }

// tryWrite2: as tryWrite, for a and then b.
func tryWrite2(net.Conn, []byte, []byte) (int, error) { return 0, nil }

type rawWriter struct{}

func (c *Conn) tryWriteOut(b []byte) (int, error) { return tryWrite(c.nc, b) }
