// Package listen is the router's TCP listeners. A port is
// bound where its prefixes ask: every address (dual-stack where IPv6 is there, node's
// own choice) while any prefix of the port is not IP-bound (`+`, `*`, a host name),
// else only the addresses of its IP-bound prefixes (`http://127.0.0.1:8080/` listens
// on loopback only, as node's listen(8080, '127.0.0.1') does). When the set changes
// the listeners follow: a wildcard prefix arriving replaces the address-bound
// listeners, and the last one leaving brings them back. Client connections already
// open are not touched. Uses are counted per prefix: the last to leave closes the port.
//
// A port is plain or TLS, never both: what a connection speaks is decided before its
// first byte is read (HTTP.SYS too serves a port with a certificate binding as TLS
// only). A TLS port's connections are handed over once their handshake is done; one
// that fails never reaches an app.
package listen

import (
	"context"
	"crypto/tls"
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

	tls *TLS

	mu     sync.Mutex
	byPort map[int]*entry
}

// TLS is how a TLS port's connections are made.
type TLS struct {
	// Config is port's configuration (its certificates by SNI, its session keys).
	Config func(port int) *tls.Config
	// HandshakeTimeout bounds a handshake (the router gives it its headersTimeout).
	HandshakeTimeout time.Duration
	// OnSecure takes a connection whose handshake is done, as OnConn a plain one.
	OnSecure func(c *tls.Conn, port int, dual bool, done func())
	// OnFailure hears of a handshake that failed (the connection is closed).
	OnFailure func(port int, err error)
}

type entry struct {
	port   int
	secure bool
	uses   map[string]int // address (or anyAddr) -> prefixes using it
	slots  map[string]*slot
}

type slot struct {
	ln     net.Listener
	dual   bool
	tls    *tls.Config // a TLS port's; nil: plain
	closed atomic.Bool
	open   atomic.Int64 // connections open
}

// New returns an empty set of listeners. maxConns is HTTP.SYS's MaxConnections per
// listener (0: no limit): beyond it new connections are closed at once.
func New(log *slog.Logger, maxConns int, onConn OnConn, onPortClosed func(int)) *Listeners {
	return &Listeners{log: log, onConn: onConn, onPortClosed: onPortClosed, maxConns: int64(maxConns), byPort: map[int]*entry{}}
}

// SetTLS says how TLS ports make their connections; before any is acquired.
func (l *Listeners) SetTLS(t *TLS) { l.tls = t }

// Acquire counts one more prefix on port, on ip ("" for every address), and listens
// there if nothing does yet; secure: a TLS port (https prefixes). The error is coded
// (PORT_IN_USE, ACCESS_DENIED, ADDRESS_UNAVAILABLE, URL_CONFLICT when the port speaks
// the other scheme); the use is then not counted.
func (l *Listeners) Acquire(port int, ip string, secure bool, prefix string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.byPort[port]
	if e != nil && e.secure != secure {
		scheme := "http"
		if e.secure {
			scheme = "https"
		}
		return coded.New(coded.URLConflict, "port "+strconv.Itoa(port)+" serves "+scheme+" prefixes", map[string]any{
			"prefix": prefix, "owner": "the " + scheme + " prefixes of port " + strconv.Itoa(port) + " (a port serves http or https, not both)",
		})
	}
	if e == nil {
		e = &entry{port: port, secure: secure, uses: map[string]int{}, slots: map[string]*slot{}}
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
func (l *Listeners) AcquireFree(ip string, secure bool) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.bind(0, keyOf(ip), secure)
	if err != nil {
		return 0, err
	}
	port := s.ln.Addr().(*net.TCPAddr).Port
	if secure {
		s.tls = l.tls.Config(port)
	}
	e := &entry{port: port, secure: secure, uses: map[string]int{keyOf(ip): 1}, slots: map[string]*slot{keyOf(ip): s}}
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
		s, err := l.bind(e.port, k, e.secure)
		if err != nil {
			return err
		}
		e.slots[k] = s
		go l.accept(e.port, s)
	}
	return nil
}

func (l *Listeners) bind(port int, key string, secure bool) (*slot, error) {
	host := ""
	if key != anyAddr {
		host = key
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	var ln net.Listener
	var err error
	// a port we closed a moment ago may still be held by a listener racing for it
	// (no TCP keep-alive on accepted connections, as node's server: the router's own
	// timeouts end idle ones, and Go's default costs four setsockopt calls per
	// connection, a tenth of the router's CPU with a connection per request)
	lc := net.ListenConfig{KeepAlive: -1}
	for try := 0; try < 5; try++ {
		ln, err = lc.Listen(context.Background(), "tcp", addr)
		if err == nil || !errors.Is(err, errAddrInUse) {
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
	s := &slot{ln: ln, dual: a.IP.To4() == nil && a.IP.IsUnspecified()}
	if secure && port != 0 {
		s.tls = l.tls.Config(port)
	}
	return s, nil
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
		done := func() { once.Do(func() { s.open.Add(-1) }) }
		if s.tls != nil {
			go l.handshake(c, port, s, done)
			continue
		}
		l.onConn(c, port, s.dual, done)
	}
}

// handshake runs a TLS connection's handshake on a goroutine of its own, bounded by
// the handshake timeout. A client's FIN before the end fails it at once: a client that
// connects and leaves must not hold a socket until the timeout (node's https server
// does the same).
func (l *Listeners) handshake(c net.Conn, port int, s *slot, done func()) {
	t := l.tls
	tc := tls.Server(c, s.tls)
	ctx := context.Background()
	if t.HandshakeTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.HandshakeTimeout)
		defer cancel()
	}
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		done()
		if t.OnFailure != nil {
			t.OnFailure(port, err)
		}
		return
	}
	t.OnSecure(tc, port, s.dual, done)
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
	case errors.Is(err, errAddrInUse):
		return coded.New(coded.PortInUse, err.Error(), details)
	case errors.Is(err, errAccess), errors.Is(err, syscall.EPERM):
		return coded.New(coded.AccessDenied, err.Error(), details)
	case errors.Is(err, errAddrNotAvail):
		return coded.New(coded.AddressUnavailable, err.Error(), details)
	}
	return coded.New(coded.Failed, err.Error(), details)
}

// IsConnReset says whether err is the peer's reset (RST): ECONNRESET, on Windows
// Winsock's WSAECONNRESET, which Go's syscall.ECONNRESET does not match there.
func IsConnReset(err error) bool {
	return errors.Is(err, errConnReset)
}
