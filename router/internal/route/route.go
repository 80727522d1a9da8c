// Package route is the router's URL space: the HTTP.SYS UrlPrefix grammar (Parse), the
// routing decision (Table), and the request target an app sees (CanonicalizeTarget).
// Held to src/urlprefix.js, which stays the reference (prefixes are validated for
// HTTP.SYS too): test/unit/router/route-differential.test.js runs both on the same
// generated prefixes, hosts, addresses and targets and fails on any difference in
// verdict, reason, normal form, route or canonical target.
//
// Grammar and routing: https://learn.microsoft.com/windows/win32/http/urlprefix-strings
// URL canonicalisation (backslash -> slash, dot segments): Microsoft KB 896287.
// README "The router's rules (HTTP.SYS semantics)" says what users see.
//
// Strings are bytes here: a request target and a Host value are the bytes the client
// sent (the JS side reads them as latin1, one char per byte); a prefix is UTF-8 text.
package route

// Code is the stable code of a Parse error (src/errors.js, README "Errors").
const Code = "ERR_HTTPSYS_BAD_PREFIX"

// ConflictCode is the stable code of an Add conflict (src/errors.js, README "Errors").
const ConflictCode = "ERR_HTTPSYS_URL_CONFLICT"

// HostKind is the category of a prefix's host, in HTTP.SYS's routing order: Strong
// (+), Explicit (a host name), IP (an IP-bound prefix, matched on the local address),
// Weak (*).
type HostKind string

// The host categories, named as the JS names them.
const (
	Strong   HostKind = "strong"
	Explicit HostKind = "explicit"
	IP       HostKind = "ip"
	Weak     HostKind = "weak"
)

// Prefix is a parsed, normalised UrlPrefix: Prefix is scheme://Host:Port Path, the
// normal form (scheme and host name in lower case, an IP literal in RFC 5952 text,
// unreserved escapes decoded, other escapes in upper case, a trailing /).
type Prefix struct {
	Prefix   string
	Scheme   string // "http" or "https"
	Host     string // "+", "*", a host name, an IPv4 address or [IPv6]
	HostKind HostKind
	Port     int    // 1-65535; 0 only with allowPortZero
	Path     string // starts and ends with /
	IP       string // the address of an IP-bound prefix (IPv6 without brackets), else ""
}

// Error is a prefix Parse refused: Reason says which rule it broke, in the JS's words
// (src/urlprefix.js parse: the same input gets the same reason from either).
type Error struct {
	Prefix string // the input
	Reason string
}

// Error is the JS error's message (src/errors.js ERR_HTTPSYS_BAD_PREFIX).
func (e *Error) Error() string {
	return "Invalid URL prefix " + jsonString(e.Prefix) + ": " + e.Reason + ". " +
		"A prefix reads scheme://host:port/path/ (scheme http or https, a port, a path ending in /), " +
		"for example http://+:8080/api/."
}

// ConflictError is an Add refused because an equivalent prefix (the same scheme, host
// category, host, port and case-insensitive path) is registered: Owner is its target.
type ConflictError struct {
	Prefix string // the normal form of the prefix being added
	Owner  any    // the target the registered prefix routes to
}

// Error is the JS error's message (src/errors.js ERR_HTTPSYS_URL_CONFLICT); the owner
// is named by its Name() method, as a string, or as fmt prints it.
func (e *ConflictError) Error() string {
	by := ""
	if name := ownerName(e.Owner); name != "" {
		by = " by " + name
	}
	return "The URL prefix " + e.Prefix + " is already registered" + by + ". " +
		"Stop the other owner or choose another prefix (another path, or another port)."
}

// Args is one request to route.
type Args struct {
	Scheme       string // "http" or "https"; "" is "http"
	Port         int    // the local port the connection arrived on
	Host         string // the raw Host header value; "" when there is none
	LocalAddress string // the local address the connection arrived on; "" when unknown
	Path         string // the raw request target (path and query, undecoded)
}

// Result is a routing decision: Target and Prefix (the normal form of the prefix that
// matched) on a match, with Status 0; else Status 400 (no prefix for that port,
// scheme or host, or a malformed target: HTTP.SYS's "Bad Request") or 404 (a host
// that is served, but not under this path).
type Result struct {
	Target any
	Prefix string
	Status int
}
