package main

import (
	"encoding/json"
	"log/slog"
	"net"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/conn"
	"httpsys/router/internal/hub"
	"httpsys/router/internal/listen"
	"httpsys/router/internal/nodeipc"
)

// listenMsg is a standalone app's listen() (src/preload/standalone-native.js): the
// socket node bound comes with it.
type listenMsg struct {
	Httpsys string   `json:"httpsys"`
	Seq     int      `json:"seq"`
	Queue   string   `json:"queue"`
	Token   string   `json:"token"`
	URLs    []string `json:"urls"`
	IP      string   `json:"ip"`
	Dual    bool     `json:"dual"`
	// a cluster worker's port, and its listen's kind (listenConns: no socket comes)
	Port int    `json:"port"`
	Kind string `json:"kind"`
	// the server's settings for the connections of its port
	Settings conn.Owned `json:"settings"`
	// an https server's (standalone_tls.go)
	TLS       json.RawMessage `json:"tls"`
	DefaultCA string          `json:"defaultCA"`
}

// serveParent reads the sockets a standalone app hands over on node's IPC channel
// (issue 25 "Standalone") and answers each with the queue made on it.
func serveParent(h *hub.Hub, log *slog.Logger) {
	f := nodeipc.FromEnv()
	if f == nil {
		return
	}
	ch, err := nodeipc.Open(f)
	if err != nil {
		log.Warn("cannot read the parent's IPC channel", "err", err)
		return
	}
	go func() {
		_ = ch.Serve(func(m nodeipc.Message) {
			var a listenMsg
			if json.Unmarshal(m.Msg, &a) == nil && a.Httpsys == "settings" && m.File == nil {
				h.WaitStarted()
				h.SetOwnSettings(a.Queue, a.Settings)
				return
			}
			if json.Unmarshal(m.Msg, &a) == nil && a.Httpsys == "tls" && m.File == nil {
				setOwnTLS(h, a)
				return
			}
			if json.Unmarshal(m.Msg, &a) == nil && servePaths(h, ch, a, m) {
				return
			}
			if json.Unmarshal(m.Msg, &a) == nil && a.Httpsys == "conn" && m.File != nil {
				adoptConn(h, a, m)
				return
			}
			if json.Unmarshal(m.Msg, &a) != nil || a.Httpsys != "listen" {
				if m.File != nil {
					_ = m.File.Close()
				}
				return
			}
			ch.Send(adopt(h, a, m))
		})
	}()
}

func adopt(h *hub.Hub, a listenMsg, m nodeipc.Message) map[string]any {
	ln, err := fileListener(a, m)
	if err != nil {
		return listened(a, hub.QueueInfo{}, err)
	}
	h.WaitStarted()
	info, err := adoptQueue(h, ln, a)
	return listened(a, info, err)
}

// fileListener is the listening socket that came with a's message.
func fileListener(a listenMsg, m nodeipc.Message) (net.Listener, error) {
	if m.File == nil {
		return nil, coded.New(coded.BadArgument, "no socket came with the "+a.Httpsys+" message", nil)
	}
	ln, err := net.FileListener(m.File)
	_ = m.File.Close()
	if err != nil {
		return nil, coded.New(coded.Failed, "the socket handed over is not a listener: "+err.Error(), nil)
	}
	return ln, nil
}

// adoptConn serves a connection node accepted on a socket still waiting its turn on
// the channel (src/preload/standalone-native.js forward).
func adoptConn(h *hub.Hub, a listenMsg, m nodeipc.Message) {
	c, err := listen.FileConn(m.File)
	_ = m.File.Close()
	if err != nil {
		return
	}
	h.WaitStarted()
	h.AdoptConn(c, a.Queue, a.Dual)
}
