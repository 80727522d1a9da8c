package main

import (
	"httpsys/router/internal/hub"
	"httpsys/router/internal/listen"
	"httpsys/router/internal/nodeipc"
)

// adoptClusterPort: a standalone app's cluster worker's listen() (issue 25
// "Standalone"; src/preload/standalone-cluster.js), {"httpsys": "listenConns"}. node's
// cluster primary listens and hands each connection to a worker, which forwards it here
// ("conn"), so no socket comes: the queue is made on a listener that never accepts
// (listen.ConnsOnly), the port's own as a listen()'s would be (its settings, TLS with
// the server's key material, the local port the real one); with "kind": "shared" a
// listen(prefix)'s (listenShared), with "kind": "path" a listen(path)'s (listenPath).
func adoptClusterPort(h *hub.Hub, a listenMsg, m nodeipc.Message) map[string]any {
	if m.File != nil {
		_ = m.File.Close()
	}
	h.WaitStarted()
	switch a.Kind {
	case "path":
		info, err := h.AdoptConnsPathQueue(a.Queue, a.Token, a.Settings)
		return listened(a, info, err)
	case "shared":
		return sharedQueue(h, listen.ConnsOnly(a.IP, a.Port), a)
	}
	info, err := adoptQueue(h, listen.ConnsOnly(a.IP, a.Port), a)
	return listened(a, info, err)
}
