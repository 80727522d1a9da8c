package main

import (
	"errors"
	"net"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/hub"
	"httpsys/router/internal/nodeipc"
)

// servePaths takes a standalone app's servers that do not own a port (issue 25
// "Standalone"; src/preload/standalone-paths.js): a listen(path) or the streams handed
// to a server, whose Unix socket comes with {"httpsys": "listenPath"} (the handed
// streams with a descriptor follow as "conn" messages), and a listen(prefix): the first
// of a port with the socket node bound ({"httpsys": "listenShared"}), the next without
// ({"httpsys": "reservePrefix"}). Each is answered as a listen is, with "listened".
// false: not one of these messages.
func servePaths(h *hub.Hub, ch *nodeipc.Channel, a listenMsg, m nodeipc.Message) bool {
	switch a.Httpsys {
	case "listenPath":
		ch.Send(adoptPath(h, a, m))
	case "listenShared":
		ch.Send(adoptShared(h, a, m))
	case "listenConns":
		ch.Send(adoptClusterPort(h, a, m))
	case "reservePrefix":
		if m.File != nil {
			_ = m.File.Close()
		}
		h.WaitStarted()
		info, err := h.AdoptQueue(a.Queue, hub.QueueOptions{URLs: a.URLs, Token: a.Token}, adoption(a, nil, false))
		ch.Send(listened(a, info, err))
	default:
		return false
	}
	return true
}

// adoptShared: the first listen(prefix) of a port, with the socket node bound.
func adoptShared(h *hub.Hub, a listenMsg, m nodeipc.Message) map[string]any {
	ln, err := fileListener(a, m)
	if err != nil {
		return listened(a, hub.QueueInfo{}, err)
	}
	h.WaitStarted()
	return sharedQueue(h, ln, a)
}

// sharedQueue makes a listen(prefix)'s queue on ln, its port's listener.
func sharedQueue(h *hub.Hub, ln net.Listener, a listenMsg) map[string]any {
	info, err := h.AdoptQueue(a.Queue, hub.QueueOptions{URLs: a.URLs, Token: a.Token}, adoption(a, ln, false))
	return listened(a, info, err)
}

func adoptPath(h *hub.Hub, a listenMsg, m nodeipc.Message) map[string]any {
	ln, err := fileListener(a, m)
	if err != nil {
		return listened(a, hub.QueueInfo{}, err)
	}
	// node's close() unlinks the file (the app's side does it then), never the router
	if ul, ok := ln.(*net.UnixListener); ok {
		ul.SetUnlinkOnClose(false)
	}
	h.WaitStarted()
	info, err := h.AdoptPathQueue(ln, a.Queue, a.Token, a.Settings)
	return listened(a, info, err)
}

func listened(a listenMsg, info hub.QueueInfo, err error) map[string]any {
	out := map[string]any{"httpsys": "listened", "seq": a.Seq}
	if err != nil {
		var ce *coded.Error
		if !errors.As(err, &ce) {
			ce = coded.New(coded.Failed, err.Error(), nil)
		}
		out["error"] = ce
		return out
	}
	out["urls"] = info.URLs
	out["ports"] = info.Ports
	return out
}
