package hub

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"httpsys/router/internal/coded"
	"httpsys/router/internal/conn"
	"httpsys/router/internal/control"
	"httpsys/router/internal/listen"
	"httpsys/router/internal/route"
	"httpsys/router/internal/tlsstore"
	"httpsys/router/internal/wire"
)

// The router's TLS (README "HTTPS and HTTP/2"): the
// certificates (internal/tlsstore), the handshakes and their counts, the verdict on a
// client's certificate, the hand-over to HTTP/1.1 or h2 by ALPN, and redirect_http.

// tlsState is the Hub's TLS part.
type tlsState struct {
	store      *tlsstore.Store
	handshakes atomic.Uint64

	mu       sync.Mutex // the failure counts
	failures uint64
	byReason map[string]uint64
	last     *TLSFailure

	redirects map[string][]redirect // app -> its redirect_http prefixes (the Hub's lock)
}

type redirect struct {
	prefix route.Prefix
	port   int
}

// startTLS wires TLS ports to the store; in Start, under the lock. h2 is offered while
// the connection server has an h2 side (conn.Server.ServeH2).
func (h *Hub) startTLS() {
	t := &h.tls
	t.store = tlsstore.New(func() bool { return h.conns.ServeH2 != nil }, nil)
	t.byReason = map[string]uint64{}
	t.redirects = map[string][]redirect{}
	timeout := time.Duration(h.limits.HeadersTimeout) * time.Millisecond
	if timeout <= 0 {
		timeout = 120 * time.Second // node's default handshake timeout
	}
	h.listeners.SetTLS(&listen.TLS{
		Config:           t.store.ServerConfig,
		HandshakeTimeout: timeout,
		OnSecure:         h.onSecure,
		OnFailure:        func(port int, err error) { h.tlsFailed(port, failureReason(err)) },
	})
}

// onSecure: a TLS connection's handshake is done. The verdict is the router's, never
// the session's (tlsstore.Judge); a refused client certificate is a failed handshake
// no app hears of.
func (h *Hub) onSecure(tc *tls.Conn, port int, dual bool, done func()) {
	store := h.tls.store
	cs := tc.ConnectionState()
	v := store.Judge(port, &cs)
	if v.Refuse {
		_ = tc.NetConn().Close()
		done()
		h.tlsFailed(port, v.AuthorizationError)
		return
	}
	h.tls.handshakes.Add(1)
	info := tlsstore.Info(&cs, v)
	sec := &conn.Secure{Info: wire.AppendTLSInfo(nil, &info), ClientCert: len(cs.PeerCertificates) > 0}
	if slot := v.Slot; slot != nil {
		sec.Misdirected = func(hostname string) bool { return store.Misdirected(port, slot, hostname) }
	}
	if cs.NegotiatedProtocol == "h2" && h.conns.ServeH2 != nil {
		h.conns.ServeH2(tc, port, dual, done, sec)
		return
	}
	h.conns.ServeTLS(tc, port, dual, done, sec)
}

// tlsFailed counts a failed handshake by reason; a debug record only: clients control
// this, and a record per failure would be a lever (the supervisor logs the counts).
func (h *Hub) tlsFailed(port int, reason string) {
	t := &h.tls
	t.mu.Lock()
	t.failures++
	t.byReason[reason]++
	t.last = &TLSFailure{Port: port, Reason: reason}
	t.mu.Unlock()
	h.log.Debug("TLS handshake failed", "port", port, "reason", reason)
}

// TLSStats is tlsStats's answer (docs/router-control.md), and the last failure (the
// tlsError event: the supervisor's record names it).
type TLSStats struct {
	Handshakes uint64            `json:"handshakes"`
	Failures   uint64            `json:"failures"`
	ByReason   map[string]uint64 `json:"byReason"`
	Last       *TLSFailure       `json:"last,omitempty"`
}

// TLSFailure is a failed handshake's port and reason.
type TLSFailure struct {
	Port   int    `json:"port"`
	Reason string `json:"reason"`
}

// TLSStats reads the handshake counts since start.
func (h *Hub) TLSStats() TLSStats {
	t := &h.tls
	t.mu.Lock()
	defer t.mu.Unlock()
	out := TLSStats{Handshakes: t.handshakes.Load(), Failures: t.failures, ByReason: make(map[string]uint64, len(t.byReason)), Last: t.last}
	for k, n := range t.byReason {
		out.ByReason[k] = n
	}
	return out
}

// SetTLS replaces the config's certificates: new handshakes use them, connections up
// keep theirs (a reload is this with the files read again).
func (h *Hub) SetTLS(entries []tlsstore.Entry) error {
	h.mu.Lock()
	err := h.usable()
	h.mu.Unlock()
	if err != nil {
		return err
	}
	if err := h.tls.store.SetConfig(entries); err != nil {
		var ee *tlsstore.EntryError
		d := map[string]any{"reason": err.Error()}
		if errors.As(err, &ee) {
			d = map[string]any{"file": ee.Entry.Label, "reason": ee.Err.Error(), "port": ee.Entry.Port}
			if ee.Entry.Host != "" {
				d["host"] = ee.Entry.Host
			}
		}
		return coded.New(coded.TLSCert, err.Error(), d)
	}
	return nil
}

// SetDefaultCA: node's default CAs (tlsstore/defaultca.go), for the certificates that
// ask for a client's without a CA: set before them (the entries and apps made earlier
// keep what they verify against).
func (h *Hub) SetDefaultCA(pemText string) error {
	h.mu.Lock()
	err := h.usable()
	h.mu.Unlock()
	if err != nil {
		return err
	}
	if err := h.tls.store.SetDefaultCA(pemText); err != nil {
		return coded.New(coded.BadArgument, err.Error(), map[string]any{"name": "ca", "value": "(PEM text)", "reason": "must hold PEM certificates"})
	}
	return nil
}

// applyAppTLS: each https prefix of e needs a certificate, from the config, else from
// the key material the attaching worker's https server was given (HELLO `tls`, never
// logged), which then serves e's hosts where the config does not.
// Under the lock.
func (h *Hub) applyAppTLS(e *entry, material []byte) error {
	type place struct {
		where  tlsstore.Where
		prefix string
	}
	var where []place
	for _, u := range e.urls {
		p, err := route.Parse(u, false)
		if err != nil || p.Scheme != "https" {
			continue
		}
		w := tlsstore.Where{Port: p.Port}
		if p.HostKind == route.Explicit {
			w.Host = p.Host
		}
		where = append(where, place{w, p.Prefix})
	}
	if len(where) == 0 {
		return nil
	}
	store := h.tls.store
	// where the config's certificate serves every handshake, the app's is never used,
	// so it is not checked either: the operator's wins (README)
	var own []tlsstore.Where
	for _, w := range where {
		if !store.ConfigServes(w.where.Port, w.where.Host) {
			own = append(own, w.where)
		}
	}
	if len(own) > 0 {
		m, ok, err := tlsstore.AppMaterial(material, time.Now())
		if err != nil {
			d := map[string]any{"file": tlsstore.AppLabel, "reason": err.Error(), "port": own[0].Port, "fromApp": true}
			if own[0].Host != "" {
				d["host"] = own[0].Host
			}
			return coded.New(coded.TLSCert, err.Error(), d)
		}
		if ok {
			if err := store.SetApp(e.q.Name, own, m); err != nil {
				return coded.New(coded.TLSCert, err.Error(), map[string]any{"file": tlsstore.AppLabel, "reason": err.Error(), "fromApp": true})
			}
		}
	}
	for _, w := range where {
		if store.Has(w.where.Port, w.where.Host) {
			continue
		}
		d := map[string]any{"prefix": w.prefix, "port": w.where.Port}
		if w.where.Host != "" {
			d["host"] = w.where.Host
		}
		// a standalone server's own port listens as node's does without a certificate
		// (every handshake then fails): its process says so once
		// (src/preload/standalone-tls.js), where node says nothing
		if e.reserved {
			h.log.Debug("a standalone https server has no certificate", "queue", e.q.Name, "port", w.where.Port)
			continue
		}
		return coded.New(coded.TLSNoCert, "the https prefix "+w.prefix+" has no certificate", d)
	}
	return nil
}

// AddRedirect is an app's redirect_http: plain http requests on port for the hosts and
// paths of its https prefixes get a 308 to the same URL over https (RFC 9110 15.4.9).
// It returns the http prefixes that redirect.
func (h *Hub) AddRedirect(name string, port int, urls []string) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	return h.addRedirect(name, port, urls)
}

// addRedirect, under the lock.
func (h *Hub) addRedirect(name string, port int, urls []string) ([]string, error) {
	var added []redirect
	undo := func() {
		for _, a := range added {
			h.table.Remove(a.prefix)
			h.listeners.Release(a.port, a.prefix.IP)
		}
	}
	for _, u := range urls {
		p, err := route.Parse(u, false)
		if err != nil || p.Scheme != "https" {
			continue
		}
		q, err := route.Parse("http://"+p.Host+":"+strconv.Itoa(port)+p.Path, false)
		if err != nil {
			undo()
			return nil, badPrefix(u, err)
		}
		if err := h.table.Add(q, &conn.Redirect{App: name, HTTPSPort: p.Port}); err != nil {
			undo()
			return nil, conflict(err)
		}
		if err := h.listeners.Acquire(port, q.IP, false, q.Prefix); err != nil {
			h.table.Remove(q)
			undo()
			return nil, err
		}
		added = append(added, redirect{prefix: q, port: port})
	}
	h.tls.redirects[name] = append(h.tls.redirects[name], added...)
	out := make([]string, len(added))
	for i, a := range added {
		out[i] = a.prefix.Prefix
	}
	return out, nil
}

// RemoveRedirects takes back what AddRedirect gave an app.
func (h *Hub) RemoveRedirects(name string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeRedirects(name)
}

func (h *Hub) removeRedirects(name string) {
	for _, a := range h.tls.redirects[name] {
		h.table.Remove(a.prefix)
		h.listeners.Release(a.port, a.prefix.IP)
	}
	delete(h.tls.redirects, name)
}

// forgetTLS: a queue went; its certificates and redirects go with it. Under the lock.
func (h *Hub) forgetTLS(name string) {
	if h.tls.store == nil {
		return
	}
	h.tls.store.RemoveApp(name)
	h.removeRedirects(name)
}

// failureReason names a failed handshake as node's tlsClientError codes do, roughly:
// what the count's byReason says.
func failureReason(err error) string {
	var rh tls.RecordHeaderError
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "ERR_TLS_HANDSHAKE_TIMEOUT"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || listen.IsConnReset(err):
		return "ECONNRESET"
	case errors.As(err, &rh):
		return "ERR_SSL_WRONG_VERSION_NUMBER"
	}
	msg := err.Error()
	if i := strings.Index(msg, "remote error: tls: "); i >= 0 {
		return "ERR_SSL_TLSV1_ALERT_" + strings.ToUpper(strings.ReplaceAll(msg[i+len("remote error: tls: "):], " ", "_"))
	}
	return "ERR_SSL_HANDSHAKE_FAILURE"
}

// ---- commands (docs/router-control.md) ----------------------------------------------

type setTLSCmd struct {
	control.Command
	Entries []tlsstore.Entry `json:"entries"`
}

type defaultCACmd struct {
	control.Command
	CA string `json:"ca"`
}

type redirectCmd struct {
	control.Command
	Name string   `json:"name"`
	Port int      `json:"port"`
	URLs []string `json:"urls"`
}

func (h *Hub) registerTLS(ch *control.Channel) {
	ch.Handle("setTls", func(line []byte) (any, error) {
		var a setTLSCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return nil, h.SetTLS(a.Entries)
	})
	ch.Handle("setDefaultCa", func(line []byte) (any, error) {
		var a defaultCACmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return nil, h.SetDefaultCA(a.CA)
	})
	ch.Handle("tlsStats", func(line []byte) (any, error) {
		var a control.Command
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		return h.TLSStats(), nil
	})
	ch.Handle("addRedirect", func(line []byte) (any, error) {
		var a redirectCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		added, err := h.AddRedirect(a.Name, a.Port, a.URLs)
		if err != nil {
			return nil, err
		}
		return map[string]any{"prefixes": added}, nil
	})
	ch.Handle("removeRedirects", func(line []byte) (any, error) {
		var a nameCmd
		if err := control.Decode(line, &a); err != nil {
			return nil, err
		}
		h.RemoveRedirects(a.Name)
		return nil, nil
	})
}
