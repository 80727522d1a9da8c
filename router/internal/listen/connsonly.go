package listen

import (
	"net"
	"sync"
)

// ConnsOnly is a listener for port on ip ("" for every address) that never accepts:
// the port of a standalone app's cluster worker (issue 25 "Standalone";
// src/preload/standalone-cluster.js), which node's cluster primary binds and accepts
// on, handing each connection to a worker that forwards it to its own router (the
// "conn" message). Adopt takes it as the port's listener so that the worker's queue
// owns the port in this router as a listen() does, its connections served with the
// server's settings and its local port the real one.
func ConnsOnly(ip string, port int) net.Listener {
	a := &net.TCPAddr{IP: net.IPv6unspecified, Port: port}
	if ip != "" {
		a.IP = net.ParseIP(ip)
	}
	return &connsOnly{addr: a, closed: make(chan struct{})}
}

type connsOnly struct {
	addr   *net.TCPAddr
	once   sync.Once
	closed chan struct{}
}

func (l *connsOnly) Accept() (net.Conn, error) {
	<-l.closed
	return nil, net.ErrClosed
}

func (l *connsOnly) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *connsOnly) Addr() net.Addr { return l.addr }
