package hub

import (
	"encoding/json"
	"net"
)

// A standalone https server's listen(prefix) (issue 25 "Standalone";
// src/preload/standalone-prefixes.js): as the hub's reserveQueue does for an https
// prefix, the port is a TLS one, and the key material the app gave
// https.createServer() serves the prefix's host on it (by SNI, beside the other
// servers' of the port) from the moment the router has the prefix. Material that
// cannot serve is not an error here (AdoptTLSQueue says why).

// AdoptSharedTLSQueue is AdoptSharedQueue for an https prefix: ln's port is made a
// TLS one before it accepts.
func (h *Hub) AdoptSharedTLSQueue(ln net.Listener, ip, name string, o QueueOptions, material json.RawMessage, defaultCA string) (QueueInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		_ = ln.Close()
		return QueueInfo{}, err
	}
	h.setDefaultCALocked(name, defaultCA)
	_, serve, abandon, err := h.listeners.AdoptTLS(ln, ip)
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
	serve()
	return e.info(), nil
}

// ReserveTLSQueue is ReserveQueue for an https prefix on a port the router listens on
// for the app already: its material serves the prefix's host from now on.
func (h *Hub) ReserveTLSQueue(name string, o QueueOptions, material json.RawMessage, defaultCA string) (QueueInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return QueueInfo{}, err
	}
	h.setDefaultCALocked(name, defaultCA)
	e, err := h.makeQueue(name, o, nil)
	if err != nil {
		return QueueInfo{}, err
	}
	e.reserved = true
	if err := h.applyAppTLS(e, material); err != nil {
		h.log.Debug("a standalone https server's key material cannot serve", "queue", name, "err", err)
	}
	return e.info(), nil
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
