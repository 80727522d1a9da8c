package hub

import (
	"net"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/coded"
	"httpsys/router/internal/conn"
	"httpsys/router/internal/wire"
)

// WaitStarted blocks until Start has run: the parent may hand a socket over before
// its start command is read (they travel on different channels).
func (h *Hub) WaitStarted() { <-h.startedCh }

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
		// (a port another server of the app joined is shared, adopt.go: it stays so)
		if h.conns.OwnedBy(port, e.q) {
			h.conns.SetOwned(port, own, e.q)
		}
	}
}

// ConnectionFrame: a worker's verdict on a connection of a port its server owns
// (attach.ConnHub; conn/owned_conn.go).
func (h *Hub) ConnectionFrame(w *attach.Worker, t wire.Type, id uint32, p []byte) {
	h.conns.ConnectionFrame(w, t, id, p)
}
