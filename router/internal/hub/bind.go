package hub

import (
	"encoding/json"
	"net"
	"strings"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/conn"
	"httpsys/router/internal/control"
	"httpsys/router/internal/listen"
)

// A standalone app on Windows (issue 25 "Standalone"; src/preload/standalone-native-win.js)
// cannot hand the router a socket node bound: the router binds it. listen() stays
// synchronous there because the app waits for bindPort (a worker thread of the app
// makes the call while listen() waits on Atomics.wait): the port and its errors are
// known when listen() returns. Nothing is accepted on the port until bindQueue makes
// the server's queue on it, a tick later, with the settings the app set meanwhile;
// what connects before waits in the kernel's backlog, as node's own port would hold it.

type bindPortCmd struct {
	control.Command
	Name string `json:"name"`
	IP   string `json:"ip"`
	Port int    `json:"port"`
}

type bindQueueCmd struct {
	control.Command
	Name     string     `json:"name"`
	Token    string     `json:"token"`
	URLs     []string   `json:"urls"`
	IP       string     `json:"ip"`
	Settings conn.Owned `json:"settings"`
	// an https server's key material and node's default CAs (adopt.go)
	TLS       json.RawMessage `json:"tls"`
	DefaultCA string          `json:"defaultCA"`
	// a listen(prefix): the port is shared by URL, not the server's own (adopt.go)
	Shared bool `json:"shared"`
}

type bindPathCmd struct {
	control.Command
	Name string `json:"name"`
	Path string `json:"path"`
	// the router's own name for the streams handed to a server: this user's only
	Private bool `json:"private"`
}

type reservePrefixCmd struct {
	control.Command
	Name  string   `json:"name"`
	Token string   `json:"token"`
	URLs  []string `json:"urls"`
}

type ownTLSCmd struct {
	control.Command
	Name      string          `json:"name"`
	TLS       json.RawMessage `json:"tls"`
	DefaultCA string          `json:"defaultCA"`
}

type ownSettingsCmd struct {
	control.Command
	Name     string     `json:"name"`
	Settings conn.Owned `json:"settings"`
}

func (h *Hub) registerBind(ch *control.Channel) {
	ch.Handle("bindPort", func(line []byte) (any, error) {
		var a bindPortCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		port, err := h.BindPort(a.Name, a.IP, a.Port)
		if err != nil {
			return nil, err
		}
		return map[string]any{"port": port}, nil
	})
	ch.Handle("bindQueue", func(line []byte) (any, error) {
		var a bindQueueCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return h.BindQueue(a)
	})
	ch.Handle("bindPath", func(line []byte) (any, error) {
		var a bindPathCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return nil, h.BindPath(a.Name, a.Path, a.Private)
	})
	ch.Handle("reservePrefix", func(line []byte) (any, error) {
		var a reservePrefixCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return h.AdoptQueue(a.Name, QueueOptions{URLs: a.URLs, Token: a.Token}, Adoption{})
	})
	ch.Handle("setOwnTLS", func(line []byte) (any, error) {
		var a ownTLSCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		h.SetOwnTLS(a.Name, a.TLS, a.DefaultCA)
		return nil, nil
	})
	ch.Handle("setOwnSettings", func(line []byte) (any, error) {
		var a ownSettingsCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		h.SetOwnSettings(a.Name, a.Settings)
		return nil, nil
	})
}

// BindPort listens on port at ip for the server whose queue will be name, and
// answers the port bound (port 0: the one the system chose).
func (h *Hub) BindPort(name, ip string, port int) (int, error) {
	if port < 0 || port > 65535 {
		return 0, coded.New(coded.BadArgument, "port out of range", map[string]any{"name": "port", "value": port, "reason": "must be 0 to 65535"})
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return 0, err
	}
	if _, ok := h.bound[name]; ok {
		return 0, coded.New(coded.QueueExists, "a port is bound for "+name+" already", map[string]any{"queue": name})
	}
	if _, ok := h.queues[name]; ok {
		return 0, coded.New(coded.QueueExists, "a queue named "+name+" exists", map[string]any{"queue": name})
	}
	ln, err := listen.Bind(ip, port)
	if err != nil {
		return 0, err
	}
	h.keepBound(name, ln)
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// BindPath listens on path (a Unix socket file; on Windows a named pipe) for the
// listen(path) whose queue will be name (listen.BindPath).
func (h *Hub) BindPath(name, path string, private bool) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return err
	}
	if _, ok := h.bound[name]; ok {
		return coded.New(coded.QueueExists, "a socket is bound for "+name+" already", map[string]any{"queue": name})
	}
	if _, ok := h.queues[name]; ok {
		return coded.New(coded.QueueExists, "a queue named "+name+" exists", map[string]any{"queue": name})
	}
	ln, err := listen.BindPath(path, private)
	if err != nil {
		return err
	}
	h.keepBound(name, ln)
	return nil
}

// keepBound holds ln for the queue name until bindQueue. Under the lock.
func (h *Hub) keepBound(name string, ln net.Listener) {
	if h.bound == nil {
		h.bound = map[string]net.Listener{}
	}
	h.bound[name] = ln
}

// BindQueue makes queue name on the socket BindPort or BindPath bound for it, and
// accepts there from now on: a listen(path)'s (AdoptPathQueue), or a listen(prefix)'s,
// an https server's or a plain one's (AdoptQueue), as the socket node hands over is
// made on Unix (cmd/httpsys-router standalone.go).
func (h *Hub) BindQueue(a bindQueueCmd) (QueueInfo, error) {
	h.mu.Lock()
	ln, ok := h.bound[a.Name]
	delete(h.bound, a.Name)
	h.mu.Unlock()
	if !ok {
		return QueueInfo{}, coded.New(coded.BadArgument, "no port is bound for "+a.Name, map[string]any{"name": "name", "value": a.Name, "reason": "must name a bindPort made before"})
	}
	o := QueueOptions{URLs: a.URLs, Token: a.Token}
	if _, tcp := ln.(*net.TCPListener); !tcp {
		return h.AdoptPathQueue(ln, a.Name, a.Token, a.Settings)
	}
	if a.Shared {
		return h.AdoptQueue(a.Name, o, Adoption{Listener: ln, IP: a.IP})
	}
	https := len(a.URLs) == 1 && strings.HasPrefix(strings.ToLower(a.URLs[0]), "https:")
	return h.AdoptQueue(a.Name, o, Adoption{Listener: ln, IP: a.IP, Own: &a.Settings, HTTPS: https, Material: a.TLS, DefaultCA: a.DefaultCA})
}

// dropBound closes the port bound for name if its queue was not made (the server
// closed in the tick of its listen()). Under the lock.
func (h *Hub) dropBound(name string) bool {
	ln, ok := h.bound[name]
	if !ok {
		return false
	}
	delete(h.bound, name)
	_ = ln.Close()
	return true
}

// closeBound closes the ports bound for queues never made (the router closing). Under
// the lock.
func (h *Hub) closeBound() {
	for name := range h.bound {
		h.dropBound(name)
	}
}
