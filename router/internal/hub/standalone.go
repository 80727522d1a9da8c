package hub

import (
	"net"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/wire"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/conn"
)

// A standalone app (`node --require httpsys-cli/register app.js`, no supervisor) runs
// this router as its own child (issue 25 "Standalone"; src/preload/standalone-native.js).
// Its listen() binds in node, before listen() returns, as node's does (address() right
// after listen(0), node's own EADDRINUSE), and hands the listening socket over
// (internal/nodeipc); AdoptQueue makes the server's queue on it. The queue is reserved
// as the JS hub's reserveQueue makes it: the first worker presenting its token owns
// it, and it goes when that worker's connection does.

// WaitStarted blocks until Start has run: the parent may hand a socket over before
// its start command is read (they travel on different channels).
func (h *Hub) WaitStarted() { <-h.startedCh }

// AdoptQueue creates queue name with prefixes o.URLs, one of them on the port ln
// listens on (ip: that prefix's address, "" for every address). ln accepts once the
// queue routes; on an error it is closed.
// Its port's connections follow own, the server's settings (conn/owned.go).
func (h *Hub) AdoptQueue(ln net.Listener, ip, name string, o QueueOptions, own conn.Owned) (QueueInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		_ = ln.Close()
		return QueueInfo{}, err
	}
	port, serve, abandon, err := h.listeners.Adopt(ln, ip)
	if err != nil {
		_ = ln.Close()
		return QueueInfo{}, err
	}
	// (abandon closes ln unless a prefix of the queue uses it)
	defer abandon()
	e, err := h.makeQueue(name, o, nil)
	if err != nil {
		return QueueInfo{}, err
	}
	e.reserved = true
	h.conns.SetOwned(port, own, e.q)
	serve()
	h.log.Debug("queue created on a handed-over socket", "queue", name, "urls", e.urls)
	return e.info(), nil
}

// UnbindQueue is a standalone server's close(): its prefixes stop routing and its
// ports close now, as node's close() frees the port at once; the queue stays for the
// requests in flight until its worker leaves (a queue no worker took goes now).
func (h *Hub) UnbindQueue(name string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.dropBound(name) {
		return nil
	}
	e, ok := h.queues[name]
	if !ok {
		return notFound(name)
	}
	if !e.reserved {
		return coded.New(coded.BadArgument, "only a standalone server's queue is unbound", map[string]any{"name": "name", "value": name, "reason": "must name a queue made by a handed-over socket"})
	}
	if !e.unbind {
		for _, port := range e.ports {
			h.conns.ClearOwned(port)
		}
	}
	if e.owner == nil {
		h.removeQueue(e)
		return nil
	}
	h.unroute(e)
	return nil
}

// AdoptConn serves c, a connection accepted on the port of queue name before its
// socket reached the router, as if the router had accepted it there.
func (h *Hub) AdoptConn(c net.Conn, name string, dual bool) {
	h.mu.Lock()
	e, ok := h.queues[name]
	if fx := fixedOf(e, ok); fx != nil {
		h.mu.Unlock()
		h.conns.ServeFixed(c, fx, dual, func() {})
		return
	}
	ok = ok && !e.unbind && len(e.ports) > 0
	var port int
	if ok {
		port = e.ports[0]
	}
	h.mu.Unlock()
	if !ok {
		_ = c.Close()
		return
	}
	// (an https server's: its handshake first)
	if !h.listeners.HandshakeAdopted(c, port, func() {}) {
		h.conns.Serve(c, port, dual, func() {})
	}
}

// SetOwnSettings: the server of queue name changed its settings (an app sets them
// right after listen()); connections accepted from now on follow them.
func (h *Hub) SetOwnSettings(name string, own conn.Owned) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.queues[name]
	if !ok || !e.reserved || e.unbind {
		return
	}
	if e.fixed != nil {
		h.conns.SetFixed(e.fixed.f, own)
	}
	for _, port := range e.ports {
		h.conns.SetOwned(port, own, e.q)
	}
}

// ConnectionFrame: a worker's verdict on a connection of a port its server owns
// (attach.ConnHub; conn/owned_conn.go).
func (h *Hub) ConnectionFrame(w *attach.Worker, t wire.Type, id uint32, p []byte) {
	h.conns.ConnectionFrame(w, t, id, p)
}
