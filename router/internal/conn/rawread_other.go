//go:build !unix

package conn

// serveRaw: only unix reads through a RawConn (rawread_unix.go).
func (c *Conn) serveRaw(small *[]byte, bpp **[]byte) bool { return false }

func (c *Conn) wakeRaw() {}
