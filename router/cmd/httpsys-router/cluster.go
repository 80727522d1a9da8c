package main

import (
	"httpsys/router/internal/hub"
	"httpsys/router/internal/listen"
	"httpsys/router/internal/nodeipc"
)

// adoptClusterPort: a standalone app's cluster worker's listen() (issue 25
// "Standalone"; src/preload/standalone-cluster.js), {"httpsys": "listenConns"}. node's
// cluster primary listens on the port and hands each connection to a worker, which
// forwards it here ("conn"), so no socket comes: the queue is made on a listener that
// never accepts (listen.ConnsOnly), the port's own as a listen()'s would be (its
// settings, TLS with the server's key material, the local port the real one).
func adoptClusterPort(h *hub.Hub, a listenMsg, m nodeipc.Message) map[string]any {
	if m.File != nil {
		_ = m.File.Close()
	}
	h.WaitStarted()
	info, err := adoptQueue(h, listen.ConnsOnly(a.IP, a.Port), a)
	return listened(a, info, err)
}
