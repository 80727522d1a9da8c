//go:build !windows

package listen

import (
	"net"
	"os"
)

func listenPath(path string, private bool) (net.Listener, error) {
	ln, err := net.Listen("unix", path)
	if err == nil && private {
		if err = os.Chmod(path, 0o600); err != nil {
			_ = ln.Close()
			return nil, err
		}
	}
	return ln, err
}

func pathInUse(error) bool { return false }
