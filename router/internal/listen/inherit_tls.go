package listen

import "net"

// AdoptTLS is Adopt for a standalone https server's socket (issue 25): the port is a
// TLS one from the start, its handshakes made with the certificates of the store
// (SetTLS) as the first client connects, so a handshake right after the app's
// 'listening' finds the server's own certificate, as on node.
func (l *Listeners) AdoptTLS(ln net.Listener, ip string) (port int, serve func(), abandon func(), err error) {
	port, serve, abandon, err = l.Adopt(ln, ip)
	if err != nil {
		return 0, nil, nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byPort[port]
	// a port whose other address serves plain prefixes stays plain: the queue's https
	// prefix then conflicts with them (Acquire), as two such servers do under the
	// supervisor
	if len(e.uses) == 0 && l.tls != nil {
		e.secure = true
		e.slots[keyOf(ip)].tls = l.tls.Config(port)
	}
	return port, serve, abandon, nil
}

// HandshakeAdopted takes c, a connection the parent accepted on port before its
// socket reached the router (src/preload/standalone-native.js forward), through the
// handshake of port's TLS listener, as if accepted there; false: port is not a TLS
// port (the caller serves c as plain HTTP).
func (l *Listeners) HandshakeAdopted(c net.Conn, port int, done func()) bool {
	l.mu.Lock()
	var s *slot
	if e := l.byPort[port]; e != nil && e.secure {
		for _, x := range e.slots {
			if x.tls != nil {
				s = x
				break
			}
		}
	}
	l.mu.Unlock()
	if s == nil {
		return false
	}
	go l.handshake(c, port, s, done)
	return true
}
