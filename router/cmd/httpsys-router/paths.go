package main

import (
	"errors"
	"net"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/hub"
	"httpsys/router/internal/nodeipc"
)

// servePaths takes a standalone app's servers that no port names (issue 25
// "Standalone"; src/preload/standalone-paths.js): a listen(path), whose Unix socket
// comes with {"httpsys": "listenPath"}, and the queue of the streams handed to a
// server, {"httpsys": "adopt"} (the streams follow as "conn" messages). Each is
// answered as a listen is, with "listened". false: not one of these messages.
func servePaths(h *hub.Hub, ch *nodeipc.Channel, a listenMsg, m nodeipc.Message) bool {
	switch a.Httpsys {
	case "listenPath":
		ch.Send(adoptPath(h, a, m))
	case "adopt":
		if m.File != nil {
			_ = m.File.Close()
		}
		h.WaitStarted()
		info, err := h.AdoptStreamQueue(a.Queue, a.Token, a.Settings)
		ch.Send(listened(a, info, err))
	default:
		return false
	}
	return true
}

func adoptPath(h *hub.Hub, a listenMsg, m nodeipc.Message) map[string]any {
	if m.File == nil {
		return listened(a, hub.QueueInfo{}, coded.New(coded.BadArgument, "no socket came with the listenPath message", nil))
	}
	ln, err := net.FileListener(m.File)
	_ = m.File.Close()
	if err != nil {
		return listened(a, hub.QueueInfo{}, coded.New(coded.Failed, "the socket handed over is not a listener: "+err.Error(), nil))
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
