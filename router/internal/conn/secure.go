package conn

import (
	"crypto/tls"
	"strconv"
	"strings"

	"httpsys/router/internal/route"
)

// Secure is what a TLS connection carries besides its bytes (docs/architecture.md 10):
// the session as the worker sees it, and which certificate entry its handshake used.
type Secure struct {
	// Info is the REQUEST's TLS section (wire.AppendTLSInfo), encoded once: the session
	// does not change (no renegotiation).
	Info []byte
	// Misdirected reports whether a request for hostname (lower case, no port) belongs
	// to another certificate entry than the handshake's (RFC 9110 15.5.20): it would
	// pass the client-certificate policy of another app. nil: never.
	Misdirected func(hostname string) bool
	// ClientCert: the client sent a certificate in the handshake; the output cache
	// treats its requests as it treats Authorization (issue 23).
	ClientCert bool
}

// ServeTLS runs an HTTP/1.1 connection whose TLS handshake is done, as Serve a plain one.
func (s *Server) ServeTLS(tc *tls.Conn, port int, dual bool, done func(), sec *Secure) {
	s.serve(tc, port, dual, done, sec)
}

// Redirect is an app's redirect_http as a routing target (README "HTTPS and HTTP/2"): plain
// http requests for its hosts and paths get a 308 to the same URL over https. 308, not
// 301: a 301 lets clients turn a POST into a GET (RFC 9110 15.4.2); 308 keeps the method
// and body (RFC 9110 15.4.9).
type Redirect struct {
	App       string
	HTTPSPort int
}

// location is the Location header line: the request's host (its address for a request
// without one, HTTP/1.0), the https port, the canonical target.
func (rd *Redirect) location(host, url, localAddr string) string {
	h := hostOnly(host)
	if h == "" {
		h = localAddr
		if strings.Contains(localAddr, ":") {
			h = "[" + localAddr + "]"
		}
	}
	port := ""
	if rd.HTTPSPort != 443 {
		port = ":" + strconv.Itoa(rd.HTTPSPort)
	}
	if url == "" || url[0] != '/' {
		url = "/"
	}
	return "Location: https://" + h + port + url + "\r\n"
}

// hostOnly is a Host without its port ("[::1]:80" is "[::1]"), as the client wrote it.
func hostOnly(host string) string {
	if host == "" {
		return ""
	}
	if host[0] == '[' {
		for i := 0; i < len(host); i++ {
			if host[i] == ']' {
				return host[:i+1]
			}
		}
		return host
	}
	for i := 0; i < len(host); i++ {
		if host[i] == ':' {
			return host[:i]
		}
	}
	return host
}

// secureChecks is route's TLS and redirect part; true when r was answered. A Host whose
// certificate entry is not the handshake's is 421 and the connection closes (the client
// reconnects for it); a redirect_http target is a 308.
func (c *Conn) secureChecks(r *Request, target any) bool {
	if c.sec != nil && c.sec.Misdirected != nil && r.host != c.tlsHost {
		if c.sec.Misdirected(route.HostnameOf(r.host)) {
			r.respondLocal(421, plain, true, "")
			return true
		}
		c.tlsHost = r.host
	}
	if rd, ok := target.(*Redirect); ok {
		r.respondLocal(308, plain, false, rd.location(r.host, r.url, c.localAddr))
		return true
	}
	return false
}

func closeWriteTLS(tc *tls.Conn) error {
	// close_notify, then the FIN, as node's TLSSocket.end() sends them
	err := tc.CloseWrite()
	if cw, ok := tc.NetConn().(interface{ CloseWrite() error }); ok {
		if e := cw.CloseWrite(); err == nil {
			err = e
		}
	}
	return err
}
