package h2

import (
	"strings"

	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2/hpack"

	"httpsys/router/internal/attach"
	"httpsys/router/internal/wire"
)

// The held-bytes budget (issue 23 item 7): a connection's
// streams together may make the router hold about heldBudget, not a 256 KiB response
// window each (25 MB for a client that opens 100 streams and reads none). The router
// grants each stream's response window itself (wire.ReqGrantedWindow): the worker
// starts with wire.GrantedWindowStart and sends nothing beyond its grants. A stream's
// window (win: what its worker may send plus what the router holds of it) starts at
// startWindow while the budget has room and grows by what the client took, up to
// wire.ResponseWindow, as far as the budget goes. The connection's charge is the sum
// of its streams' windows (while at a worker) or of what they hold. Every stream keeps
// GrantedWindowStart whatever the others hold, so none waits for another (RFC 9113
// 5.2: windows are per stream).

// windowStarted: dispatched to w: the worker has GrantedWindowStart, and more while
// the budget has room (the WINDOW follows the REQUEST).
func (s *Stream) windowStarted(w *attach.Worker) {
	s.resCredit = wire.GrantedWindowStart
	s.win = wire.GrantedWindowStart
	s.recharge()
	more := min(startWindow-wire.GrantedWindowStart, heldBudget-s.c.charged)
	if more > 0 {
		s.win += more
		s.resCredit += more
		s.recharge()
		w.SendCredit(s, more)
	}
}

// held is what the router holds of the stream's response: not framed yet, or framed
// and not written to the socket.
func (s *Stream) held() int { return s.pendBytes + s.inOut }

// sentOut: n of its DATA bytes were written to the client's socket.
func (s *Stream) sentOut(n int) {
	s.inOut -= n
	if s.closed {
		return
	}
	s.track(n)
}

// track: its held bytes changed; sent of them went to the client. What was sent grows
// the window as far as the budget goes, and the worker gets its credit back.
func (s *Stream) track(sent int) {
	w := s.link.Worker()
	if sent > 0 && w != nil && s.win < wire.ResponseWindow {
		g := min(sent, wire.ResponseWindow-s.win, heldBudget-s.c.charged)
		if g > 0 {
			s.win += g
		}
	}
	s.recharge()
	if sent > 0 && w != nil {
		// in steps of at least ackStep (or half a small window): a stream of small
		// messages (SSE) costs no WINDOW frame each
		want := s.win - s.held() - s.resCredit
		if want > 0 && want >= min(ackStep, s.win>>1) {
			s.resCredit += want
			w.SendCredit(s, want)
		}
	}
}

// recharge: its charge against the budget: its window while at a worker, else what
// it holds.
func (s *Stream) recharge() {
	if s.closed {
		return
	}
	h := s.held()
	ch := h
	if s.link.Worker() != nil && s.win > h {
		ch = s.win
	}
	s.c.charged += ch - s.charge
	s.charge = ch
}

// connectionSpecific: RFC 9113 8.2.2 fields a worker's head must not carry on h2.
func connectionSpecific(name string) bool {
	switch name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "http2-settings":
		return true
	}
	return false
}

// singleValue: the fields node's http2 refuses twice in a head
// (ERR_HTTP2_HEADER_SINGLE_VALUE): the JS router reset such a stream, and so does this.
func singleValue(name string) bool {
	switch name {
	case "access-control-allow-credentials", "access-control-max-age", "access-control-request-method",
		"age", "authorization", "content-encoding", "content-language", "content-length", "content-location",
		"content-md5", "content-range", "content-type", "date", "dnt", "etag", "expires", "from", "host",
		"if-match", "if-modified-since", "if-none-match", "if-range", "if-unmodified-since", "last-modified",
		"location", "max-forwards", "proxy-authorization", "range", "referer", "retry-after", "tk",
		"upgrade-insecure-requests", "user-agent", "x-content-type-options":
		return true
	}
	return false
}

// headersOf turns a worker's header block ("Name: value\r\n" lines) into an h2 head
// as node's http2 sends a headers object: :status first, names in lower case,
// repeats next to their first (an object's arrays), connection-specific fields
// dropped, and date (a final head's) when the block has none (node's respond()
// adds it). ok is false
// for a head node refuses (a repeated single-value field, a value it cannot send).
func headersOf(blk []byte, status int, date string) (out []field, ok bool) {
	out = []field{{":status", itoa3(status)}}
	var order []string
	groups := map[string][]string{}
	text := string(blk)
	for text != "" {
		line := text
		if i := strings.Index(text, "\r\n"); i >= 0 {
			line, text = text[:i], text[i+2:]
		} else {
			text = ""
		}
		colon := strings.IndexByte(line, ':')
		if colon <= 0 {
			continue
		}
		name := strings.ToLower(line[:colon])
		value := strings.Trim(line[colon+1:], " \t")
		if connectionSpecific(name) || name[0] == ':' {
			continue
		}
		// (node's mapToHeaders: a name that is no token, a value it cannot send, a TE
		// other than "trailers")
		if !httpguts.ValidHeaderFieldName(name) || (!validValue(value) && value != "") || (name == "te" && value != "trailers") {
			return nil, false
		}
		if _, seen := groups[name]; !seen {
			order = append(order, name)
		} else if singleValue(name) {
			return nil, false
		}
		groups[name] = append(groups[name], value)
	}
	for _, name := range order {
		for _, v := range groups[name] {
			out = append(out, field{name, v})
		}
	}
	if _, has := groups["date"]; !has && date != "" {
		out = append(out, field{"date", date})
	}
	return out, true
}

func itoa3(n int) string {
	return string([]byte{byte('0' + n/100%10), byte('0' + n/10%10), byte('0' + n%10)})
}

func hpackField(f field) hpack.HeaderField {
	return hpack.HeaderField{Name: f.name, Value: f.value}
}
