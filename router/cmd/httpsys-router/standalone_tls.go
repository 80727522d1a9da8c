package main

import (
	"net"
	"strings"

	"httpsys/router/internal/hub"
)

// adoptQueue makes a standalone server's queue on the socket it handed over, the
// port its own: an https server's (its prefix's scheme) on a TLS port with the key
// material it was given (src/preload/standalone-tls.js), any other on a plain one.
func adoptQueue(h *hub.Hub, ln net.Listener, a listenMsg) (hub.QueueInfo, error) {
	return h.AdoptQueue(a.Queue, hub.QueueOptions{URLs: a.URLs, Token: a.Token}, adoption(a, ln, true))
}

// adoption: how the queue of a's listen takes its port: ln, the socket node bound (nil:
// a port the router listens on for the app already), the server's own when owned.
func adoption(a listenMsg, ln net.Listener, owned bool) hub.Adoption {
	ad := hub.Adoption{Listener: ln, IP: a.IP, HTTPS: isHTTPS(a), Material: a.TLS, DefaultCA: a.DefaultCA}
	if owned {
		ad.Own = &a.Settings
	}
	return ad
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
