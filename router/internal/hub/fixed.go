package hub

import (
	"errors"
	"net"
	"sync"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/conn"
)

// A standalone server whose connections no port of the router names (issue 25
// "Standalone"; conn/fixed.go): a listen(path), whose Unix socket node bound and
// handed over (src/preload/standalone-paths.js), and the queue of the streams an app
// hands a server (server.emit('connection', socket)), made on a Unix socket of its own
// the same way: the streams with a descriptor come one by one (AdoptConn), the others
// through that socket. Its queue is reserved as AdoptQueue's: the first worker with the
// token owns it, and it goes with that worker.

type fixed struct {
	f    *conn.Fixed
	ln   net.Listener // a listen(path)'s socket; nil for handed streams
	once sync.Once
}

// AdoptPathQueue creates queue name on ln, the Unix socket of a standalone server's
// listen(path) (on Windows the router's own named pipe: bind.go bindPath). ln accepts
// once the queue exists; on an error it is closed.
func (h *Hub) AdoptPathQueue(ln net.Listener, name, token string, own conn.Owned) (QueueInfo, error) {
	if _, tcp := ln.(*net.TCPListener); tcp {
		_ = ln.Close()
		return QueueInfo{}, coded.New(coded.BadArgument, "the socket handed over is not a Unix socket listener", map[string]any{"name": "fd", "value": ln.Addr().String(), "reason": "must be a listening Unix socket"})
	}
	e, err := h.fixedQueue(name, token, own, ln)
	if err != nil {
		_ = ln.Close()
		return QueueInfo{}, err
	}
	go h.acceptFixed(e.fixed)
	return e.info(), nil
}

func (h *Hub) fixedQueue(name, token string, own conn.Owned, ln net.Listener) (*entry, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	e, err := h.makeQueue(name, QueueOptions{Token: token}, nil)
	if err != nil {
		return nil, err
	}
	e.reserved = true
	e.fixed = &fixed{f: h.conns.NewFixed(own, e.q), ln: ln}
	return e, nil
}

func (h *Hub) acceptFixed(fx *fixed) {
	for {
		c, err := fx.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// closed (unfix), or the socket is unusable: either way no more connections
			return
		}
		h.conns.ServeFixed(c, fx.f, false, func() {})
	}
}

// unfix: e's server closed; a listen(path)'s socket stops accepting (node's close()
// unlinks the file: the app's side does, as node does it in close()) and its idle
// connections end. Under the lock.
func (h *Hub) unfix(e *entry) {
	fx := e.fixed
	if fx == nil {
		return
	}
	fx.once.Do(func() {
		if fx.ln != nil {
			_ = fx.ln.Close()
			h.conns.FixedClosed(fx.f)
		}
	})
}

// fixedOf is e's fixed server while it takes connections, else nil. Under the lock.
func fixedOf(e *entry, ok bool) *conn.Fixed {
	if !ok || e.unbind || e.fixed == nil {
		return nil
	}
	return e.fixed.f
}

// AdoptConnsPathQueue is AdoptPathQueue for a cluster worker's listen(path) (issue 25;
// src/preload/standalone-cluster.js): node's cluster primary listens on the path and
// gives the worker its connections, which come one by one (AdoptConn), so no socket is
// handed over; the queue's idle connections end with its close() as a listen(path)'s.
func (h *Hub) AdoptConnsPathQueue(name, token string, own conn.Owned) (QueueInfo, error) {
	e, err := h.fixedQueue(name, token, own, connsOnly{})
	if err != nil {
		return QueueInfo{}, err
	}
	return e.info(), nil
}

// connsOnly is the socket of a fixed queue whose connections all come one by one: it
// accepts none, and closing it ends the queue's idle connections (unfix).
type connsOnly struct{}

func (connsOnly) Accept() (net.Conn, error) { return nil, net.ErrClosed }
func (connsOnly) Close() error              { return nil }
func (connsOnly) Addr() net.Addr            { return &net.UnixAddr{Net: "unix"} }
