// Package h2 is the router's HTTP/2 (RFC 9113) on TLS connections whose ALPN chose
// "h2": framing on x/net's http2.Framer and hpack, everything else here. Each stream is an ordinary queue request, routed
// and queued as on HTTP/1.1 (internal/conn's Server, route table and queues), sent to
// its worker in the same REQUEST/BODY frames (version 2.0, :authority as Host, no
// pseudo-headers); the worker's RESPONSE and RES_BODY become HEADERS and DATA.
//
// Memory one client can make the router hold is bounded: request bodies by each
// stream's receive window (a WINDOW_UPDATE only once the worker took the bytes), the
// responses of all of a connection's streams by the held-bytes budget (1 MiB, issue 23
// item 7: the router grants each stream's response window itself, REQUEST flag 64,
// docs/wire-protocol.md "Flow control"), control frames by a cap on those queued
// unwritten (SETTINGS and PING floods), resets by a rate (rapid reset, CVE-2023-44487)
// and header blocks by a cap on CONTINUATION frames (CVE-2024-27316) and on the
// header list, as node's nghttp2 bounds them.
//
// Prior-knowledge h2c is not served (README "HTTPS and HTTP/2": HTTP.SYS serves h2
// over TLS only); the TLS listener hands this package connections after the handshake.
//
// A connection's lock guards it and its streams (but their queue-side Entry and
// worker-side Link): the outermost lock, as internal/conn's.
package h2

import (
	"crypto/tls"
	"net"

	"httpsys/router/internal/conn"
	"httpsys/router/internal/parse"
	"httpsys/router/internal/tlsstore"
	"httpsys/router/internal/wire"
)

const (
	// maxStreams: RFC 9113 6.5.2 recommends at least 100; HTTP.SYS's default is 100
	maxStreams = 100
	// maxHeaderList is the SETTINGS_MAX_HEADER_LIST_SIZE offered: above the router's
	// own limit (maxHeaderSize, at most 64 KiB), so that the router answers 431 itself
	// as on HTTP/1.1 (the JS router's choice, kept)
	maxHeaderList = 65536 + 32*1024
	// maxContinuations: CONTINUATION frames after one HEADERS (node's nghttp2's
	// default): a header block spread over more is a flood (CVE-2024-27316)
	maxContinuations = 8
	// maxQueuedControl: control frames the router answers (SETTINGS and PING ACKs,
	// RST_STREAMs) queued and not yet written; beyond, the client sends faster than it
	// reads: a flood (nghttp2's max_outbound_ack; CVE-2019-9512, 9515)
	maxQueuedControl = 1000
	// resetBurst and resetRate: RST_STREAMs from the client, as a token bucket (nghttp2's
	// stream reset rate limit: rapid reset, CVE-2023-44487)
	resetBurst = 1000
	resetRate  = 33 // per second
	// maxSettings: entries in one SETTINGS frame (nghttp2's default)
	maxSettings = 32
	// heldBudget: the response bytes one connection's streams together make the router
	// hold (HTTP/1.1's per connection: internal/conn heldBudget)
	heldBudget = 4 * wire.ResponseWindow
	// startWindow: a stream's first grant while the budget has room; most responses go
	// out whole at once
	startWindow = 64 << 10
	// ackStep: response credit goes back in steps of at least this, or half a small
	// window
	ackStep = wire.ResponseWindow / 8
	// recvWindow: a stream's receive window (RFC 9113's default, node's): what a
	// request body may have in the router beyond its worker's credit
	recvWindow = 65535
	// windowStep: receive window returned once this much was consumed
	windowStep = 16 << 10
	// lingerMs: grace for streams in flight after the router's GOAWAY at close
	lingerMs = 5000
	// livenessMs: how often a connection with streams in flight is pinged when
	// body_timeout is off
	livenessMs = 120000
	// keepBuffer: a write buffer larger than this is not kept for the next write
	keepBuffer = 256 << 10
	maxFrame   = 16384 // SETTINGS_MAX_FRAME_SIZE's default: the router reads no larger
)

// Server serves h2 connections for a conn.Server (its routes, queues, clock, limits
// and registry).
type Server struct {
	srv     *conn.Server
	methods map[string]bool
	// Misdirected reports whether hostname (a stream's :authority or Host, its port
	// dropped) has another certificate entry than the one nc's handshake used on port:
	// the stream is answered 421 and the connection serves on (RFC 9110 15.5.20, issue
	// 23 item 2). nil: no check (the TLS side sets it).
	Misdirected func(nc net.Conn, port int, hostname string) bool
}

// New returns the h2 side of srv; set srv.ServeH2 = New(srv).Serve.
func New(srv *conn.Server) *Server {
	m := map[string]bool{}
	for _, x := range parse.Methods() {
		m[x] = true
	}
	return &Server{srv: srv, methods: m}
}

// Serve runs an h2 connection (the TLS handshake done, ALPN "h2") accepted on port
// until it closes; done is called then. dual: it came to a listener on every address.
func (h *Server) Serve(nc net.Conn, port int, dual bool, done func()) {
	h.serve(nc, port, dual, done, nil)
}

// ServeSecure is Serve for the TLS listener (conn.Server.ServeH2): sec is the router's
// verdict on the handshake, its REQUEST TLS section and its 421 check.
func (h *Server) ServeSecure(tc *tls.Conn, port int, dual bool, done func(), sec *conn.Secure) {
	h.serve(tc, port, dual, done, sec)
}

func (h *Server) serve(nc net.Conn, port int, dual bool, done func(), sec *conn.Secure) {
	c := newConn(h, nc, port, dual, done)
	if sec != nil {
		// the router's verdict, encoded once by the TLS listener (tlsstore.Info)
		c.tls = sec.Info
		c.clientCert = sec.ClientCert
		c.misdirected = sec.Misdirected
	} else {
		// Serve without the listener's verdict (its own tests): built from the handshake
		c.tls = h.tlsSection(nc)
		if tc, ok := nc.(*tls.Conn); ok {
			c.clientCert = len(tc.ConnectionState().PeerCertificates) > 0
		}
	}
	id, ok := h.srv.AddPeer(c)
	if !ok {
		_ = nc.Close()
		done()
		return
	}
	c.id = id
	c.start()
}

// tlsSection is the TLS section of a connection's REQUEST frames, from its handshake:
// the client's certificate is authorized when Go verified it.
func (h *Server) tlsSection(nc net.Conn) []byte {
	tc, ok := nc.(*tls.Conn)
	if !ok {
		return nil
	}
	cs := tc.ConnectionState()
	v := tlsstore.Verdict{Authorized: len(cs.VerifiedChains) > 0}
	if len(cs.PeerCertificates) > 0 {
		v.Peer = cs.PeerCertificates[0]
	}
	info := tlsstore.Info(&cs, v)
	return wire.AppendTLSInfo(nil, &info)
}
