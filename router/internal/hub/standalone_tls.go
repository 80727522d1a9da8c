package hub

import (
	"encoding/json"
	"net"

	"httpsys/router/internal/conn"
)

// AdoptTLSQueue is AdoptQueue for a standalone https server (issue 25;
// src/preload/standalone-tls.js): ln's port is a TLS one, and material, the key
// material the app gave https.createServer() (HELLO's `tls` form), serves it before
// anything is accepted, as node's server serves its own from listen() on (hub.js
// reserveQueue). Material that cannot serve is not an error here: the worker's HELLO
// brings it again and is refused with its reason, which the server emits as 'error'.
// None at all (https.createServer({})) listens, and every handshake fails, as node's.
// defaultCA, when not empty, is node's default CAs (tlsstore/defaultca.go).
func (h *Hub) AdoptTLSQueue(ln net.Listener, ip, name string, o QueueOptions, own conn.Owned, material json.RawMessage, defaultCA string) (QueueInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		_ = ln.Close()
		return QueueInfo{}, err
	}
	if defaultCA != "" {
		if err := h.tls.store.SetDefaultCA(defaultCA); err != nil {
			h.log.Debug("the default CA sent with a listen holds no certificate", "queue", name)
		}
	}
	port, serve, abandon, err := h.listeners.AdoptTLS(ln, ip)
	if err != nil {
		_ = ln.Close()
		return QueueInfo{}, err
	}
	defer abandon()
	e, err := h.makeQueue(name, o, nil)
	if err != nil {
		return QueueInfo{}, err
	}
	e.reserved = true
	if err := h.applyAppTLS(e, material); err != nil {
		h.log.Debug("a standalone https server's key material cannot serve", "queue", name, "err", err)
	}
	h.conns.SetOwned(port, own, e.q)
	serve()
	h.log.Debug("queue created on a handed-over TLS socket", "queue", name, "urls", e.urls)
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
	if defaultCA != "" {
		_ = h.tls.store.SetDefaultCA(defaultCA)
	}
	if err := h.applyAppTLS(e, material); err != nil {
		h.log.Debug("a standalone https server's new key material cannot serve", "queue", name, "err", err)
	}
}
