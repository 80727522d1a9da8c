package hub

import (
	"net"
)

// A standalone server's listen(prefix) (issue 25 "Standalone";
// src/preload/standalone-prefixes.js): servers of one process share a port by URL
// prefix, as the hub's reserveQueue does with several prefixes on a port. Unlike a
// listen(port), the port is not one server's: its connections follow the router's own
// rules and its table routes them (400, 404 as HTTP.SYS answers). The first server on
// a port hands over the socket node bound (AdoptSharedQueue); the next ones find it
// listening (ReserveQueue). Either queue is reserved: its first worker with the token
// owns it, and it goes with that worker.

// AdoptSharedQueue creates queue name with prefixes o.URLs, one of them on the port ln
// listens on (ip: that prefix's address, "" for every address), routed by the table.
// ln accepts once the queue routes; on an error it is closed.
func (h *Hub) AdoptSharedQueue(ln net.Listener, ip, name string, o QueueOptions) (QueueInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		_ = ln.Close()
		return QueueInfo{}, err
	}
	_, serve, abandon, err := h.listeners.Adopt(ln, ip)
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
	serve()
	return e.info(), nil
}

// ReserveQueue creates queue name with prefixes o.URLs on ports this router listens
// on already (or binds, as createQueue), reserved for the worker with the token.
func (h *Hub) ReserveQueue(name string, o QueueOptions) (QueueInfo, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return QueueInfo{}, err
	}
	e, err := h.makeQueue(name, o, nil)
	if err != nil {
		return QueueInfo{}, err
	}
	e.reserved = true
	return e.info(), nil
}
