package listen

import (
	"net"
	"strconv"

	"httpsys/router/internal/coded"
)

// Adopt takes ln, a listening socket the router's parent bound (a standalone app's
// listen(): node binds before listen() returns and hands the socket over, issue 25
// "Standalone"), as port's listener on ip ("" for every address). It carries no use
// of its own: the prefix the app's queue registers counts one (Acquire finds the port
// listening and binds nothing), and the last Release closes it, as node's close()
// frees its port. Nothing is accepted until serve is called, so no connection
// arrives before its queue routes; abandon closes ln if no prefix took it.
func (l *Listeners) Adopt(ln net.Listener, ip string) (port int, serve func(), abandon func(), err error) {
	a, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return 0, nil, nil, coded.New(coded.BadArgument, "the socket handed over is not a TCP listener", map[string]any{"name": "fd", "value": ln.Addr().String(), "reason": "must be a listening TCP socket"})
	}
	port = a.Port
	if tl, ok := ln.(*net.TCPListener); ok {
		ln = noKeepAlive{tl}
	}
	key := keyOf(ip)
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.byPort[port]; e != nil && e.slots[key] != nil {
		// the kernel let the parent bind it, so nothing of ours listens there
		return 0, nil, nil, coded.New(coded.PortInUse, "port "+strconv.Itoa(port)+" is listening already", map[string]any{"port": port})
	}
	e := l.byPort[port]
	if e == nil {
		e = &entry{port: port, uses: map[string]int{}, slots: map[string]*slot{}}
		l.byPort[port] = e
	}
	s := &slot{ln: ln, dual: a.IP.To4() == nil && a.IP.IsUnspecified()}
	e.slots[key] = s
	serve = func() { go l.accept(port, s) }
	abandon = func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if e.uses[key] > 0 {
			return
		}
		s.close()
		if e.slots[key] == s {
			delete(e.slots, key)
		}
		if len(e.uses) == 0 && len(e.slots) == 0 && l.byPort[port] == e {
			delete(l.byPort, port)
		}
	}
	return port, serve, abandon, nil
}

// noKeepAlive accepts without TCP keep-alive, as node's server accepts (it sets none
// unless server.keepAlive asks) and as bind's listeners do (ListenConfig KeepAlive -1).
// A listener made from a descriptor has Go's default, keep-alive probes after 15 s, and
// no ListenConfig to say otherwise: it is turned off after the accept, one setsockopt
// more per connection.
type noKeepAlive struct{ *net.TCPListener }

func (l noKeepAlive) Accept() (net.Conn, error) {
	c, err := l.AcceptTCP()
	if err != nil {
		return nil, err
	}
	_ = c.SetKeepAlive(false)
	return c, nil
}
