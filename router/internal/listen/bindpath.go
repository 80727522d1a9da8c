package listen

import (
	"errors"
	"net"

	"httpsys/router/internal/coded"
)

// BindPath listens on path for a standalone app's listen(path) whose parent cannot
// hand its own socket over (Windows; issue 25 "Standalone";
// src/preload/standalone-native-win.js): a Unix socket file, or on Windows a named
// pipe `\\.\pipe\...` made as libuv's uv_pipe_bind makes it (pipe_windows.go
// appPipe). A name in use is PortInUse as node's EADDRINUSE is; the app's close()
// removes a socket file, as node's does, never the router. private: a name of the
// router's own for the streams an app hands a server, open to this user only
// (Private's pipe; the socket file 0600).
func BindPath(path string, private bool) (net.Listener, error) {
	ln, err := listenPath(path, private)
	if err != nil {
		details := map[string]any{"port": path}
		switch {
		case errors.Is(err, errAddrInUse), pathInUse(err):
			return nil, coded.New(coded.PortInUse, err.Error(), details)
		case errors.Is(err, errAccess):
			return nil, coded.New(coded.AccessDenied, err.Error(), details)
		}
		return nil, coded.New(coded.Failed, err.Error(), details)
	}
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false)
	}
	return ln, nil
}
