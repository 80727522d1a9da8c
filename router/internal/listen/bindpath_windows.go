//go:build windows

package listen

import (
	"errors"
	"net"

	"golang.org/x/sys/windows"
)

func listenPath(path string, private bool) (net.Listener, error) {
	if private {
		return Private(path)
	}
	if isPipe(path) {
		return appPipe(path)
	}
	return net.Listen("unix", path)
}

// pathInUse: CreateNamedPipe with FILE_FLAG_FIRST_PIPE_INSTANCE on a name that has
// instances fails with ERROR_ACCESS_DENIED, which libuv reports as EADDRINUSE
// (uv_pipe_bind); ERROR_PIPE_BUSY when every instance is taken.
func pathInUse(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_PIPE_BUSY)
}
