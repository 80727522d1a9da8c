package main

import (
	"net"
	"strings"

	"httpsys/router/internal/hub"
)

// adoptQueue makes a standalone server's queue on the socket it handed over: an https
// server's (its prefix's scheme) on a TLS port with the key material it was given
// (src/preload/standalone-tls.js), any other on a plain one.
func adoptQueue(h *hub.Hub, ln net.Listener, a listenMsg) (hub.QueueInfo, error) {
	o := hub.QueueOptions{URLs: a.URLs, Token: a.Token}
	if isHTTPS(a) {
		return h.AdoptTLSQueue(ln, a.IP, a.Queue, o, a.Settings, a.TLS, a.DefaultCA)
	}
	return h.AdoptQueue(ln, a.IP, a.Queue, o, a.Settings)
}

// setOwnTLS is a standalone https server's setSecureContext() (a `tls` message).
func setOwnTLS(h *hub.Hub, a listenMsg) {
	h.WaitStarted()
	h.SetOwnTLS(a.Queue, a.TLS, a.DefaultCA)
}

// isHTTPS: an https server's listen (its one prefix's scheme), whose key material
// comes with it.
func isHTTPS(a listenMsg) bool {
	return len(a.URLs) == 1 && strings.HasPrefix(strings.ToLower(a.URLs[0]), "https:")
}
