// Package listen is the router's TCP listeners (src/hub/listeners.js). A port is
// bound where its prefixes ask: every address (dual-stack where IPv6 is there, node's
// own choice) while any prefix of the port is not IP-bound (`+`, `*`, a host name),
// else only the addresses of its IP-bound prefixes (`http://127.0.0.1:8080/` listens
// on loopback only, as node's listen(8080, '127.0.0.1') does). When the set changes
// the listeners follow: a wildcard prefix arriving replaces the address-bound
// listeners, and the last one leaving brings them back. Client connections already
// open are not touched. Uses are counted per prefix: the last to leave closes the port.
package listen

import (
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"httpsys/router/internal/coded"
)

// any is the key of a listener on every address.
const anyAddr = "*"

// OnConn takes an accepted connection of port; done must be called once it closes
// (max_connections counts open connections per listener). dual: the listener is on
// every address (dual-stack), where node names an IPv4 peer ::ffff:a.b.c.d.
type OnConn func(c net.Conn, port int, dual bool, done func())

// Listeners is one router's listening ports.
type Listeners struct {
	log          *slog.Logger
	onConn       OnConn
	onPortClosed func(port int)
	maxConns     int64

	mu     sync.Mutex
	byPort map[int]*entry
}

type entry struct {
	port  int
	uses  map[string]int // address (or anyAddr) -> prefixes using it
	slots map[string]*slot
}

type slot struct {
	ln     net.Listener
	dual   bool
	closed atomic.Bool
	open   atomic.Int64 // connections open
}

// New returns an empty set of listeners. maxConns is HTTP.SYS's MaxConnections per
// listener (0: no limit): beyond it new connections are closed at once.
func New(log *slog.Logger, maxConns int, onConn OnConn, onPortClosed func(int)) *Listeners {
	return &Listeners{log: log, onConn: onConn, onPortClosed: onPortClosed, maxConns: int64(maxConns), byPort: map[int]*entry{}}
}

// Acquire counts one more prefix on port, on ip ("" for every address), and listens
// there if nothing does yet. The error is coded (PORT_IN_USE, ACCESS_DENIED,
// ADDRESS_UNAVAILABLE); the use is then not counted.
func (l *Listeners) Acquire(port int, ip string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byPort[port]
	if e == nil {
		e = &entry{port: port, uses: map[string]int{}, slots: map[string]*slot{}}
		l.byPort[port] = e
	}
	key := keyOf(ip)
	e.uses[key]++
	if err := l.reconcile(e); err != nil {
		l.drop(e, key)
		return err
	}
	return nil
}

// AcquireFree binds a free port (a prefix with port 0) on ip or every address.
func (l *Listeners) AcquireFree(ip string) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.bind(0, keyOf(ip))
	if err != nil {
		return 0, err
	}
	port := s.ln.Addr().(*net.TCPAddr).Port
	e := &entry{port: port, uses: map[string]int{keyOf(ip): 1}, slots: map[string]*slot{keyOf(ip): s}}
	l.byPort[port] = e
	go l.accept(e.port, s)
	return port, nil
}

// Release: one prefix on port (and ip) is gone; the last one closes the port.
func (l *Listeners) Release(port int, ip string) {
	l.mu.Lock()
	e := l.byPort[port]
	if e == nil {
		l.mu.Unlock()
		return
	}
	closed := l.drop(e, keyOf(ip))
	l.mu.Unlock()
	if closed && l.onPortClosed != nil {
		l.onPortClosed(port)
	}
}

// drop removes one use; it reports whether the port closed. Under the lock.
func (l *Listeners) drop(e *entry, key string) bool {
	n, ok := e.uses[key]
	if !ok {
		return false
	}
	if n > 1 {
		e.uses[key] = n - 1
	} else {
		delete(e.uses, key)
	}
	if len(e.uses) == 0 {
		delete(l.byPort, e.port)
		for k, s := range e.slots {
			s.close()
			delete(e.slots, k)
		}
		return true
	}
	_ = l.reconcile(e)
	return false
}

// CloseAll stops listening everywhere.
func (l *Listeners) CloseAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for port, e := range l.byPort {
		for _, s := range e.slots {
			s.close()
		}
		delete(l.byPort, port)
	}
}

// Ports are the ports listening.
func (l *Listeners) Ports() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]int, 0, len(l.byPort))
	for p := range l.byPort {
		out = append(out, p)
	}
	return out
}

// reconcile listens exactly where the port's uses ask: every address if any use is
// not IP-bound, else each IP. Under the lock.
func (l *Listeners) reconcile(e *entry) error {
	var want []string
	if e.uses[anyAddr] > 0 {
		want = []string{anyAddr}
	} else {
		for k := range e.uses {
			want = append(want, k)
		}
	}
	// address-bound listeners go first: the wildcard cannot bind while they listen
	for k, s := range e.slots {
		if !contains(want, k) {
			s.close()
			delete(e.slots, k)
		}
	}
	for _, k := range want {
		if e.slots[k] != nil {
			continue
		}
		s, err := l.bind(e.port, k)
		if err != nil {
			return err
		}
		e.slots[k] = s
		go l.accept(e.port, s)
	}
	return nil
}

func (l *Listeners) bind(port int, key string) (*slot, error) {
	host := ""
	if key != anyAddr {
		host = key
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	var ln net.Listener
	var err error
	// a port we closed a moment ago may still be held by a listener racing for it
	for try := 0; try < 5; try++ {
		ln, err = net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		return nil, mapError(err, port, host)
	}
	if port != 0 {
		l.log.Debug("listening", "port", port, "address", host)
	}
	a := ln.Addr().(*net.TCPAddr)
	return &slot{ln: ln, dual: a.IP.To4() == nil && a.IP.IsUnspecified()}, nil
}

func (l *Listeners) accept(port int, s *slot) {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if s.closed.Load() || errors.Is(err, net.ErrClosed) {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// EMFILE and the like: back off a little, as net/http's server does
			l.log.Error("listener error", "port", port, "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if l.maxConns > 0 && s.open.Load() >= l.maxConns {
			_ = c.Close()
			continue
		}
		s.open.Add(1)
		var once sync.Once
		l.onConn(c, port, s.dual, func() { once.Do(func() { s.open.Add(-1) }) })
	}
}

func (s *slot) close() {
	if s.closed.CompareAndSwap(false, true) {
		_ = s.ln.Close()
	}
}

func keyOf(ip string) string {
	if ip == "" {
		return anyAddr
	}
	return ip
}

func contains(list []string, k string) bool {
	for _, x := range list {
		if x == k {
			return true
		}
	}
	return false
}

func mapError(err error, port int, host string) error {
	details := map[string]any{"port": port}
	if host != "" {
		details["host"] = host
	}
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return coded.New(coded.PortInUse, err.Error(), details)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return coded.New(coded.AccessDenied, err.Error(), details)
	case errors.Is(err, syscall.EADDRNOTAVAIL):
		return coded.New(coded.AddressUnavailable, err.Error(), details)
	}
	return coded.New(coded.Failed, err.Error(), details)
}
