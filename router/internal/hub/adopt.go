package hub

import (
	"encoding/json"
	"net"

	"httpsys/router/internal/conn"
)

// A standalone app (`node --require httpsys-cli/register app.js`, no supervisor) runs
// this router as its own child (issue 25 "Standalone"; src/preload/standalone-native.js).
// Its listen() binds in node, before listen() returns, as node's does (address() right
// after listen(0), node's own EADDRINUSE), and hands the listening socket over
// (internal/nodeipc); AdoptQueue makes the server's queue on it. A listen(prefix)
// (src/preload/standalone-prefixes.js) shares a port with the process's other servers
// by URL prefix, as several prefixes share a port under the supervisor: the first
// server on a port hands over the socket node bound, the next ones find it listening.
// Every such queue is reserved: the first worker presenting its token owns it, and it
// goes when that worker's connection does.

// Adoption is how a standalone server's queue takes its port.
type Adoption struct {
	// Listener is the socket node bound and handed over, IP its prefix's address (""
	// for every address). nil: a listen(prefix) on a port this router listens on for
	// the app already (or binds, as createQueue).
	Listener net.Listener
	IP       string
	// Own is a listen(port)'s settings: the port is the server's, and its connections
	// follow them (conn/owned.go). nil: a listen(prefix)'s port, not one server's: its
	// connections follow the router's own rules and its table routes them (400, 404 as
	// HTTP.SYS answers).
	Own *conn.Owned
	// HTTPS: an https server's (src/preload/standalone-tls.js). Listener's port is a
	// TLS one, and Material, the key material the app gave https.createServer()
	// (HELLO's `tls` form), serves the prefix's host on it (by SNI, beside the port's
	// other servers') before anything is accepted, as node's server serves its own
	// from listen() on. Material that cannot serve is not an error here: the worker's
	// HELLO brings it again and is refused with its reason, which the server emits as
	// 'error'. None at all (https.createServer({})) listens, and every handshake
	// fails, as node's. DefaultCA, when not empty, is node's default CAs
	// (tlsstore/defaultca.go).
	HTTPS     bool
	Material  json.RawMessage
	DefaultCA string
}

// AdoptQueue creates the reserved queue name with prefixes o.URLs, one of them on
// a.Listener's port when it is given. The listener accepts once the queue routes; on
// an error it is closed.
func (h *Hub) AdoptQueue(name string, o QueueOptions, a Adoption) (QueueInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	closeListener := func() {
		if a.Listener != nil {
			_ = a.Listener.Close()
		}
	}
	if err := h.usable(); err != nil {
		closeListener()
		return QueueInfo{}, err
	}
	if a.HTTPS {
		h.setDefaultCALocked(name, a.DefaultCA)
	}
	port, serve := 0, func() {}
	if a.Listener != nil {
		adopt := h.listeners.Adopt
		if a.HTTPS {
			adopt = h.listeners.AdoptTLS
		}
		var abandon func()
		var err error
		port, serve, abandon, err = adopt(a.Listener, a.IP)
		if err != nil {
			closeListener()
			return QueueInfo{}, err
		}
		// (abandon closes the listener unless a prefix of the queue uses it)
		defer abandon()
	}
	e, err := h.makeQueue(name, o, nil)
	if err != nil {
		return QueueInfo{}, err
	}
	e.reserved = true
	if a.HTTPS {
		if err := h.applyAppTLS(e, a.Material); err != nil {
			h.log.Debug("a standalone https server's key material cannot serve", "queue", name, "err", err)
		}
	}
	if a.Own != nil && a.Listener != nil {
		h.conns.SetOwned(port, *a.Own, e.q)
	}
	if a.Listener == nil {
		// a server of the app on a port a listen(port) of it owns: the port is shared
		// by URL from now on, as the removed JS hub shared it (the prefix's server gets
		// its path, the port's the rest); its connections follow the router's rules
		for _, p := range e.ports {
			h.conns.ClearOwned(p)
		}
	}
	serve()
	h.log.Debug("standalone queue created", "queue", name, "urls", e.urls, "handedOver", a.Listener != nil, "https", a.HTTPS)
	return e.info(), nil
}

// SetOwnTLS is a standalone https server's setSecureContext(): material serves its new
// handshakes from now on (connections up keep theirs), as node's server does. The
// JS side checked it with node's own context first; what still cannot serve keeps
// the certificate it had.
func (h *Hub) SetOwnTLS(name string, material json.RawMessage, defaultCA string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.queues[name]
	if !ok || !e.reserved || e.unbind {
		return
	}
	h.setDefaultCALocked(name, defaultCA)
	if err := h.applyAppTLS(e, material); err != nil {
		h.log.Debug("a standalone https server's new key material cannot serve", "queue", name, "err", err)
	}
}

// setDefaultCALocked: node's default CAs, sent with a server that asks for client
// certificates without a ca of its own (src/preload/standalone-tls.js).
func (h *Hub) setDefaultCALocked(name, defaultCA string) {
	if defaultCA == "" {
		return
	}
	if err := h.tls.store.SetDefaultCA(defaultCA); err != nil {
		h.log.Debug("the default CA sent with a listen holds no certificate", "queue", name)
	}
}
