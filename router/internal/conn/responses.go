package conn

// The bytes the router writes to clients (ported from the JS router): the head of a
// worker's response (status line + the worker's header block + connection management)
// and the small pages the router answers itself, worded like HTTP.SYS's ("Bad Request -
// Invalid Hostname", ...).
// https://learn.microsoft.com/troubleshoot/developer/webapps/iis/iisadmin-service-inetinfo/httpsys-registry-windows

import (
	"encoding/binary"
	"strconv"
)

// Which Connection header the router adds. Normally the worker's own Connection
// header wins and the router adds none; when the router closes the connection anyway
// (the client asked, HTTP/1.0, the router is closing) its decision wins: addReplaceClose
// drops the worker's Connection and Keep-Alive lines, so no client reads "keep-alive"
// and then sees the connection close.
const (
	addNone = iota
	addClose
	addKeepAlive
	addReplaceClose
)

var connectionLines = [...]string{"", "Connection: close\r\n", "Connection: keep-alive\r\n", "Connection: close\r\n"}

var continueBytes = []byte("HTTP/1.1 100 Continue\r\n\r\n")

// appendFromFrame appends the head the client gets for a RESPONSE payload p (checked
// by wire.CheckResponse): status line, the worker's header block, the router's
// Connection header and the blank line (docs/wire-protocol.md "Types": RESPONSE).
// bodyStart is where the body begins in p.
func appendFromFrame(dst, p []byte, bodyStart int, add int) []byte {
	status := binary.LittleEndian.Uint16(p)
	rlen := int(binary.LittleEndian.Uint16(p[8:]))
	bs := 14 + rlen
	dst = append(dst, "HTTP/1.1 "...)
	dst = append(dst, byte('0'+status/100%10), byte('0'+status/10%10), byte('0'+status%10), ' ')
	dst = append(dst, p[10:10+rlen]...)
	dst = append(dst, '\r', '\n')
	if add == addReplaceClose {
		dst = appendWithoutConnection(dst, p[bs:bodyStart])
	} else {
		dst = append(dst, p[bs:bodyStart]...)
	}
	dst = append(dst, connectionLines[add]...)
	return append(dst, '\r', '\n')
}

// appendWithoutConnection appends the header lines of block (each ends in CRLF) but
// Connection and Keep-Alive.
func appendWithoutConnection(dst, block []byte) []byte {
	for len(block) > 0 {
		le := len(block)
		for i, c := range block {
			if c == '\n' {
				le = i + 1
				break
			}
		}
		line := block[:le]
		if !isNamed(line, "connection:") && !isNamed(line, "keep-alive:") {
			dst = append(dst, line...)
		}
		block = block[le:]
	}
	return dst
}

// isNamed: line starts with name (lower case, colon included), ignoring case.
func isNamed(line []byte, name string) bool {
	if len(line) < len(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := line[i]
		if c >= 'A' && c <= 'Z' {
			c |= 0x20
		}
		if c != name[i] {
			return false
		}
	}
	return true
}

// appendInterim appends an interim response (102, 103) from an INFO payload
// (wire.CheckInfo passed): status line, the worker's header block, the blank line.
func appendInterim(dst, p []byte) []byte {
	status := int(binary.LittleEndian.Uint16(p))
	rlen := int(binary.LittleEndian.Uint16(p[8:]))
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, ' ')
	if rlen > 0 {
		dst = append(dst, p[10:10+rlen]...)
	} else if r, ok := statusText[status]; ok {
		dst = append(dst, r...)
	} else {
		dst = append(dst, "Interim"...)
	}
	dst = append(dst, '\r', '\n')
	dst = append(dst, p[14+rlen:]...)
	return append(dst, '\r', '\n')
}

// node's http.STATUS_CODES for the statuses the router answers itself.
var statusText = map[int]string{
	102: "Processing", 103: "Early Hints",
	308: "Permanent Redirect", 400: "Bad Request", 404: "Not Found", 408: "Request Timeout",
	413: "Payload Too Large", 421: "Misdirected Request", 431: "Request Header Fields Too Large",
	501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable", 505: "HTTP Version Not Supported",
}

var pageText = map[int]string{
	400: "The request is badly formed.",
	404: "The requested resource is not found.",
	408: "The request timed out.",
	413: "The request body is too large.",
	421: "The request was sent on a connection made for another host: send it on a connection of its own.",
	431: "The request header fields are too large.",
	308: "The resource is served over https at the address in the Location header.",
	501: "The server does not support the feature the response needed.",
	502: "The application handling this request went away before it answered.",
	503: "The service is unavailable.",
	505: "The HTTP version is not supported.",
}

// A page's variant: a status with a title and text of its own.
type variant int

const (
	plain variant = iota
	invalidHostname
	invalidURL
	queueFull
	queueTimeout
	noQueue
	appDown
	opaque
)

var variants = [...]struct{ title, text string }{
	invalidHostname: {"Bad Request - Invalid Hostname", "The request hostname is invalid."},
	invalidURL:      {"Bad Request - Invalid URL", "The request URL is invalid."},
	queueFull:       {"Service Unavailable", "The request queue is full; try again shortly."},
	queueTimeout:    {"Service Unavailable", "No application instance took the request in time; try again shortly."},
	noQueue:         {"Service Unavailable", "The service is shutting down or was removed."},
	appDown:         {"Service Unavailable", "The application is not running: it failed to start, or ended, and nothing restarts it."},
	opaque:          {"Not Implemented", "A 101 (Switching Protocols) answers only an HTTP/1.1 request that asked to upgrade."},
}

func page(status int, v variant) (reason, body string) {
	reason, ok := statusText[status]
	if !ok {
		reason = "Unknown"
	}
	title, text := reason, pageText[status]
	if v != plain {
		title, text = variants[v].title, variants[v].text
	} else if text == "" {
		text = reason + "."
	}
	body = "<!DOCTYPE html>\r\n<html><head><title>" + title + "</title>\r\n" +
		"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=us-ascii\"></head>\r\n" +
		"<body><h2>" + title + "</h2>\r\n<hr><p>HTTP Error " + strconv.Itoa(status) + ". " + text + "</p>\r\n</body></html>\r\n"
	return reason, body
}

// appendLocal appends a response the router answers itself (README "The router's
// rules"): its page, and on a 503 a Retry-After (RFC 9110 10.2.3).
func appendLocal(dst []byte, status int, v variant, head bool, add int, date []byte, extra string) []byte {
	reason, body := page(status, v)
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(status), 10)
	dst = append(dst, ' ')
	dst = append(dst, reason...)
	dst = append(dst, "\r\nContent-Type: text/html; charset=us-ascii\r\nServer: httpsys\r\nDate: "...)
	dst = append(dst, date...)
	dst = append(dst, "\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, '\r', '\n')
	if status == 503 {
		dst = append(dst, "Retry-After: 1\r\n"...)
	}
	dst = append(dst, extra...)
	dst = append(dst, connectionLines[add]...)
	dst = append(dst, '\r', '\n')
	if !head {
		dst = append(dst, body...)
	}
	return dst
}
