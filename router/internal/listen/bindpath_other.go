//go:build !windows

package listen

import "net"

func listenPath(path string) (net.Listener, error) { return net.Listen("unix", path) }

func pathInUse(error) bool { return false }
