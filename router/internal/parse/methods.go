package parse

import "strings"

// methods is node's http.METHODS (llhttp's list) for the node this project runs on:
// the parser accepts exactly those and answers any other token 400, as node does
// (README "The router's rules"). Methods are case-sensitive (RFC 9110 9.1). The
// fuzzer's checks (test/fuzz/rules.js) read node's list, so they fail when node's
// list and this one part.
const methods = "ACL BIND CHECKOUT CONNECT COPY DELETE GET HEAD LINK LOCK M-SEARCH MERGE MKACTIVITY " +
	"MKCALENDAR MKCOL MOVE NOTIFY OPTIONS PATCH POST PROPFIND PROPPATCH PURGE PUT QUERY REBIND REPORT " +
	"SEARCH SOURCE SUBSCRIBE TRACE UNBIND UNLINK UNLOCK UNSUBSCRIBE"

// Methods lists the methods the parser accepts (CONNECT among them, refused later).
func Methods() []string { return strings.Fields(methods) }

// methodOf returns the known method b spells, as a constant (no allocation).
func methodOf(b []byte) (string, bool) {
	switch string(b) {
	case "GET":
		return "GET", true
	case "POST":
		return "POST", true
	case "HEAD":
		return "HEAD", true
	case "PUT":
		return "PUT", true
	}
	for rest := methods; rest != ""; {
		var m string
		m, rest, _ = strings.Cut(rest, " ")
		if string(b) == m {
			return m, true
		}
	}
	return "", false
}

// isMethodPrefix: b begins some known method, so a request line cut inside its method
// is refused only once no method can match (as node refuses it at that byte).
func isMethodPrefix(b []byte) bool {
	for rest := methods; rest != ""; {
		var m string
		m, rest, _ = strings.Cut(rest, " ")
		if len(m) >= len(b) && m[:len(b)] == string(b) {
			return true
		}
	}
	return false
}
