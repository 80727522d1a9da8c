// Package parse is the router's HTTP/1.1 request parser (RFC 9112), with the decisions
// of README "The router's rules (HTTP.SYS semantics)", and where the README says
// nothing, those of the JS router's parser it was ported from (each stated where it
// is made). Not Go's net/http: that canonicalises and reorders header names, and the
// app must see them as sent (node's rawHeaders).
//
// Shape: a line-oriented state machine, pull style. Parse(buf) reads until the next
// event and returns how many bytes it took and the event; the caller calls again
// with the rest. Stopping between calls is a pause: a caller that switches protocols
// stops after the head and takes the rest as opaque bytes. Lines
// are parsed in place from the caller's buffer; only a line cut by the end of a buffer
// is kept in the parser, and finished when the next buffer brings its LF. The head is
// copied into the parser's reused buffers, body bytes are handed out as slices of
// the input: an ordinary request costs no allocation.
//
// The fuzzer (test/fuzz, test/unit/router/parse-fuzz.test.js) holds it to its contract
// under every way of cutting the input, to the README's rules on every accepted head,
// and to llhttp's verdicts where the two may not differ (test/fuzz/categories.js).
package parse

import (
	"bytes"
	"math"
)

// Event is what Parse stopped at.
type Event uint8

const (
	// NeedMore: the whole buffer was taken and no event is pending; parse more input.
	NeedMore Event = iota
	// GotHead: Head() holds a request head.
	GotHead
	// GotBody: Body() holds the next piece of the request body (never empty).
	GotBody
	// Complete: the request ended (its trailers, if any, are in Head()).
	Complete
	// Failed: Err() says why; the router answers Err().Status and closes. Every later
	// call returns Failed and takes nothing.
	Failed
)

// Options are the parser's limits and checks.
type Options struct {
	// MaxHeaderSize bounds the request line, the header lines and the empty line,
	// CRLFs included (exactly this many pass; 431 beyond), and separately the
	// trailers (431) and each chunk's extensions (413).
	MaxHeaderSize int
	// MaxBodySize bounds the body (413); NoBodyLimit for none.
	MaxBodySize int64
	// RequireHost: HTTP/1.1 needs a Host (node's requireHostHeader).
	RequireHost bool
	// StrictHost: the Host, and an absolute-form target's authority, are made of URI
	// host and port characters with a port of digits only. Off for a server that owns
	// its port, which routes by port alone and takes any value, as node does.
	StrictHost bool
	// Connect serves CONNECT as node does (any target, no body, the bytes after its
	// head the tunnel's): a port a standalone server owns, whose app's tunnel it is.
	// Off: every CONNECT is refused (400).
	Connect bool
	// Lenient is node's insecureHTTPParser, on a port a standalone server owns: a
	// header value may hold any byte but CR and LF, as llhttp's lenient flags take it.
	Lenient bool
}

// NoBodyLimit is MaxBodySize for no limit (the JS parser's Infinity).
const NoBodyLimit = math.MaxInt64

// DefaultOptions are the JS parser's defaults.
func DefaultOptions() Options {
	return Options{MaxHeaderSize: 16384, MaxBodySize: NoBodyLimit, RequireHost: true, StrictHost: true}
}

// maxSafe is 2^53 - 1, the JS parser's Number.MAX_SAFE_INTEGER: a Content-Length or
// chunk size beyond it is 413 in both.
const maxSafe = 1<<53 - 1

const (
	sIdle      = iota // expecting a request line
	sIdleLF           // an empty line before the request line, LF pending
	sHeaders          // header lines
	sBody             // a Content-Length body
	sChunkSize        // a chunk-size line
	sChunkData        // chunk data
	sChunkCR          // the CRLF after chunk data
	sChunkLF
	sTrailers // trailer lines
	sDone     // the message is parsed to its end; Complete is the next event
	sError
)

// what the header section said, as bits of one integer
const (
	fHost = 1 << iota
	fCL
	fCLBig
	fTE
	fTEChunkedLast
	fTEBad
	fClose
	fKeepAlive
	fConnUpgrade
	fUpgrade
	fContinue
	fExpectOther
	fCLFirst // a Content-Length came before the first Transfer-Encoding
)

// results of a line step besides the offset after the line
const (
	needMore = -1
	failed   = -2
)

// Parser reads HTTP/1.1 requests off one connection. Its zero value is not usable:
// use New.
type Parser struct {
	opt       Options
	state     int
	line      []byte // a line cut by the end of a buffer
	headBytes int    // of the header (or trailer) section so far
	remaining int64  // of the Content-Length body or of the current chunk
	bodyTotal int64
	flags     int
	// Content-Length as the JS parser holds it: a float64, so that values past 2^53
	// compare (equal or different) as they do there
	cl   float64
	head Head
	body []byte
	ev   Event
	err  Error
}

// New returns a parser for a fresh connection.
func New(opt Options) *Parser {
	p := &Parser{opt: opt}
	// sized once for a common head: grown from nothing it took several allocations per
	// connection (a tenth of the router's CPU with a connection per request)
	p.head.store = make([]byte, 0, 512)
	p.head.fields = make([]span, 0, 32)
	p.head.reset()
	return p
}

// Head is the request being parsed: valid from GotHead until the next request starts.
func (p *Parser) Head() *Head { return &p.head }

// Body is the body piece of the last GotBody: a slice of the buffer given to Parse.
func (p *Parser) Body() []byte { return p.body }

// Err is why Parse failed, or nil.
func (p *Parser) Err() *Error {
	if p.state != sError {
		return nil
	}
	return &p.err
}

// Parse reads buf up to the next event. It returns how many bytes it took and the
// event; after any event but NeedMore and Failed, call it again with buf[n:] (even
// when that is empty: a request without a body has GotHead, then Complete). NeedMore
// always takes the whole buffer.
func (p *Parser) Parse(buf []byte) (int, Event) {
	switch p.state {
	case sError:
		return 0, Failed
	case sDone:
		p.complete()
		return 0, Complete
	}
	p.ev = NeedMore
	pos := 0
	if len(p.line) != 0 {
		pos = p.finishLine(buf)
		if p.ev != NeedMore {
			return pos, p.ev
		}
	}
	return p.run(buf, pos)
}

// Finish is the client closing its side: an error (400) when a request was in progress.
func (p *Parser) Finish() *Error {
	s := p.state
	if s == sError || s == sDone || s == sIdleLF || (s == sIdle && len(p.line) == 0) {
		return nil
	}
	p.state = sError
	p.line = p.line[:0]
	p.err = Error{Status: 400, Reason: "connection closed before the request was complete"}
	return &p.err
}

// InHead is whether part of a request head has been read (the head timeout runs).
func (p *Parser) InHead() bool {
	return p.state == sHeaders || p.state == sIdleLF || (p.state == sIdle && len(p.line) > 0)
}

// Reset is a fresh connection's state, buffers kept.
func (p *Parser) Reset() {
	p.state = sIdle
	p.line = p.line[:0]
	p.headBytes = 0
	p.remaining = 0
	p.body = nil
	p.ev = NeedMore
	p.head.reset()
}

func (p *Parser) run(buf []byte, pos int) (int, Event) {
	end := len(buf)
	for pos < end {
		switch p.state {
		case sBody:
			rem := p.remaining
			if int64(end-pos) < rem {
				p.remaining = rem - int64(end-pos)
				p.body = buf[pos:end:end]
				return end, GotBody
			}
			p.remaining = 0
			p.state = sDone
			e := pos + int(rem)
			p.body = buf[pos:e:e]
			return e, GotBody
		case sChunkData:
			n := min(int64(end-pos), p.remaining)
			p.remaining -= n
			if p.remaining == 0 {
				p.state = sChunkCR
			}
			e := pos + int(n)
			p.body = buf[pos:e:e]
			return e, GotBody
		case sChunkCR:
			if buf[pos] != '\r' {
				p.fail(400, "missing CRLF after chunk data")
				return pos, Failed
			}
			p.state = sChunkLF
			pos++
		case sChunkLF:
			if buf[pos] != '\n' {
				p.fail(400, "missing CRLF after chunk data")
				return pos, Failed
			}
			p.state = sChunkSize
			pos++
		case sIdleLF:
			if buf[pos] != '\n' {
				p.fail(400, "bare CR before the request line")
				return pos, Failed
			}
			p.state = sIdle
			pos++
		case sDone:
			p.complete()
			return pos, Complete
		default:
			if p.state == sIdle && buf[pos] == '\r' { // an empty line before the request line (RFC 9112 2.2)
				if pos+1 == end {
					p.state = sIdleLF
					return end, NeedMore
				}
				if buf[pos+1] != '\n' {
					p.fail(400, "bare CR before the request line")
					return pos, Failed
				}
				pos += 2
				continue
			}
			allowed := p.allowance()
			lim := end
			if end-pos > allowed {
				lim = pos + allowed
			}
			next := p.parseLine(buf, pos, lim)
			if next >= 0 {
				pos = next
				if p.ev != NeedMore {
					return pos, p.ev
				}
				continue
			}
			if next == failed {
				return pos, Failed
			}
			if lim < end {
				p.fail(p.limitStatus(), p.limitReason())
				return pos, Failed
			}
			p.line = append(p.line, buf[pos:end]...)
			return end, NeedMore
		}
	}
	return pos, NeedMore
}

// finishLine completes a line cut by the previous buffer's end with the head of buf.
func (p *Parser) finishLine(buf []byte) int {
	take := len(buf)
	lf := bytes.IndexByte(buf, '\n')
	if lf >= 0 {
		take = lf + 1
	}
	allowed := p.allowance()
	// no more is kept than the limit needs: the rest of an over-long line is refused anyway
	p.line = append(p.line, buf[:min(take, max(allowed+1-len(p.line), 0))]...)
	if len(p.line) > allowed {
		// the verdict one buffer gets: a bad byte within the allowance is that line's
		// 400, only a line that is fine up to the limit is the limit's status
		if p.parseLine(p.line, 0, allowed) != failed && p.state != sError {
			p.fail(p.limitStatus(), p.limitReason())
		}
		return 0
	}
	if lf < 0 {
		// Garbage (a TLS hello, a typo'd version) is answered without waiting for a
		// line end; only while the line is short, so byte-sized reads cannot make it
		// quadratic.
		if p.state == sIdle && len(p.line) <= 64 {
			p.requestLine(p.line, 0, len(p.line))
		}
		return take
	}
	line := p.line
	p.line = p.line[:0]
	if p.parseLine(line, 0, len(line)) == needMore {
		p.fail(400, "malformed line")
	}
	return take
}

// allowance is how long the next line may be before a limit is crossed.
func (p *Parser) allowance() int {
	if p.state == sChunkSize {
		return p.opt.MaxHeaderSize
	}
	return p.opt.MaxHeaderSize - p.headBytes
}

func (p *Parser) limitStatus() int {
	if p.state == sChunkSize {
		return 413
	}
	return 431
}

func (p *Parser) limitReason() string {
	switch p.state {
	case sChunkSize:
		return "chunk extensions too large"
	case sTrailers:
		return "trailer section too large"
	}
	return "request header section too large"
}

// parseLine parses one line starting at a; it returns the offset after its LF,
// needMore when end cuts it, or failed (after reporting the error).
func (p *Parser) parseLine(buf []byte, a, end int) int {
	if a == end {
		return needMore
	}
	switch p.state {
	case sIdle:
		return p.requestLine(buf, a, end)
	case sHeaders:
		if buf[a] == '\r' {
			if a+1 == end {
				return needMore
			}
			if buf[a+1] != '\n' {
				return p.fail(400, "bare CR in the header section")
			}
			p.headBytes += 2
			p.endHead()
			return a + 2
		}
		next := p.fieldLine(buf, a, end, false)
		if next >= 0 {
			p.headBytes += next - a
		}
		return next
	case sChunkSize:
		return p.chunkSizeLine(buf, a, end)
	case sTrailers:
		if buf[a] == '\r' {
			if a+1 == end {
				return needMore
			}
			if buf[a+1] != '\n' {
				return p.fail(400, "bare CR in the trailer section")
			}
			p.complete()
			return a + 2
		}
		next := p.fieldLine(buf, a, end, true)
		if next >= 0 {
			p.headBytes += next - a
		}
		return next
	}
	return p.fail(400, "unexpected state")
}

func (p *Parser) requestLine(buf []byte, a, end int) int {
	i := a
	for i < end && is(buf[i], cTchar) {
		i++
	}
	if i == end {
		if i-a > 16 || !isMethodPrefix(buf[a:i]) {
			return p.fail(400, "unknown method")
		}
		return needMore
	}
	methodEnd := i
	if buf[i] != ' ' || i == a {
		return p.fail(400, "invalid method")
	}
	// checked as soon as the token is complete: node refuses it at that byte too
	method, ok := methodOf(buf[a:methodEnd])
	if !ok {
		return p.fail(400, "unknown method")
	}
	// A shared router opens no tunnels (README "CONNECT"): every CONNECT is refused,
	// whatever its target. A 2xx to one would tell a proxy in front that a tunnel is up.
	if method == "CONNECT" && !p.opt.Connect {
		return p.fail(400, "CONNECT request-target: the router opens no tunnels")
	}
	i++
	ts := i
	for i < end && is(buf[i], cTarget) {
		i++
	}
	if i == end {
		return needMore
	}
	te := i
	if buf[i] != ' ' {
		if buf[i] == '\r' {
			return p.fail(400, "missing HTTP version")
		}
		return p.fail(400, "invalid character in request-target")
	}
	if te == ts {
		return p.fail(400, "empty request-target")
	}
	i++
	if end-i < 10 { // a bad version is reported before the line is complete
		for k := 0; i+k < end; k++ {
			if !versionByteOK(k, buf[i+k]) {
				return p.fail(400, "invalid HTTP version")
			}
		}
		return needMore
	}
	for k := range 10 {
		if !versionByteOK(k, buf[i+k]) {
			return p.fail(400, "invalid HTTP version")
		}
	}
	major := buf[i+5] - '0'
	minor := buf[i+7] - '0'
	if major != 1 || minor > 1 {
		return p.fail(505, "HTTP version not supported")
	}
	target := buf[ts:te]
	if target[0] != '/' && method != "CONNECT" { // not origin-form (llhttp takes any CONNECT target)
		if target[0] == '*' && len(target) == 1 {
			if method != "OPTIONS" {
				return p.fail(400, "asterisk-form request-target outside OPTIONS")
			}
		} else if !isAbsoluteForm(target) {
			return p.fail(400, "request-target is neither origin-form nor absolute-form")
		}
		// an absolute-form target's authority becomes the Host the app sees
		// (src/urlprefix.js), so its port follows the Host rule
		if target[0] != '*' && p.opt.StrictHost && !validHostPort(authorityOf(target)) {
			return p.fail(400, "invalid port in the request-target")
		}
	}
	p.head.reset()
	p.head.Method = method
	p.head.VersionMajor = 1
	p.head.VersionMinor = int(minor)
	p.head.url = p.head.add(target)
	p.flags = 0
	p.cl = -1
	p.headBytes = i + 10 - a
	p.state = sHeaders
	return i + 10
}

func (p *Parser) fieldLine(buf []byte, a, end int, trailer bool) int {
	i := a
	for i < end && is(buf[i], cTchar) {
		i++
	}
	if i == end {
		return needMore
	}
	nameEnd := i
	if buf[i] != ':' {
		if c := buf[i]; c != ' ' && c != '\t' {
			return p.fail(400, "invalid character in header name")
		}
		if i == a {
			return p.fail(400, "obsolete line folding")
		}
		return p.fail(400, "whitespace before the colon of a header")
	}
	if i == a {
		return p.fail(400, "empty header name")
	}
	i++
	for i < end && (buf[i] == ' ' || buf[i] == '\t') {
		i++
	}
	vs := i
	for i < end && (is(buf[i], cFvalue) || (p.opt.Lenient && buf[i] != '\r' && buf[i] != '\n')) {
		i++
	}
	if i == end {
		return needMore
	}
	if buf[i] != '\r' {
		return p.fail(400, "invalid character in header value")
	}
	if i+1 == end {
		return needMore
	}
	if buf[i+1] != '\n' {
		return p.fail(400, "bare CR in header value")
	}
	ve := i
	for ve > vs && (buf[ve-1] == ' ' || buf[ve-1] == '\t') {
		ve--
	}
	h := &p.head
	name := h.add(buf[a:nameEnd])
	value := h.add(buf[vs:ve])
	if trailer {
		h.trailers = append(h.trailers, name, value)
		return i + 2
	}
	h.fields = append(h.fields, name, value)
	if n := nameEnd - a; n >= 4 && n <= 17 && !p.known(buf, a, n, vs, ve, value) {
		return failed
	}
	return i + 2
}

// known reads the header fields the router acts on; false after reporting an error.
func (p *Parser) known(buf []byte, a, n, vs, ve int, value span) bool {
	switch n {
	case 4:
		if !nameIs(buf, a, "host") {
			return true
		}
		if p.flags&fHost != 0 {
			if !bytes.Equal(buf[vs:ve], p.head.Host()) {
				return p.failed(400, "several different Host headers")
			}
			return true
		}
		if p.opt.StrictHost {
			for _, c := range buf[vs:ve] {
				if !is(c, cHost) {
					return p.failed(400, "invalid Host header")
				}
			}
			// RFC 3986 3.2.3: HTTP.SYS refuses a port that is not digits, and the app
			// and the output cache see the port (route.IsValidHostPort, issue 23)
			if !validHostPort(buf[vs:ve]) {
				return p.failed(400, "invalid port in Host header")
			}
		}
		p.flags |= fHost
		p.head.host = value
	case 6:
		if nameIs(buf, a, "expect") {
			if ve-vs == 12 && nameIs(buf, vs, "100-continue") {
				p.flags |= fContinue
			} else {
				p.flags |= fExpectOther
			}
		}
	case 7:
		if nameIs(buf, a, "upgrade") && ve > vs {
			p.flags |= fUpgrade
		}
	case 10:
		if nameIs(buf, a, "connection") {
			p.connection(buf, vs, ve)
		}
	case 14:
		if nameIs(buf, a, "content-length") {
			return p.contentLength(buf, vs, ve)
		}
	case 17:
		if nameIs(buf, a, "transfer-encoding") {
			p.transferEncoding(buf, vs, ve)
		}
	}
	return true
}

func (p *Parser) connection(buf []byte, i, end int) {
	for {
		var s, e int
		if s, e, i = nextListElement(buf, i, end); i < 0 {
			return
		}
		switch {
		case e-s == 5 && nameIs(buf, s, "close"):
			p.flags |= fClose
		case e-s == 10 && nameIs(buf, s, "keep-alive"):
			p.flags |= fKeepAlive
		case e-s == 7 && nameIs(buf, s, "upgrade"):
			p.flags |= fConnUpgrade
		}
	}
}

// transferEncoding: chunked must be the final coding and applied once (RFC 9112 6.1);
// codings before it pass through undecoded, as node passes them.
func (p *Parser) transferEncoding(buf []byte, i, end int) {
	f := p.flags | fTE
	if p.flags&(fCL|fTE) == fCL {
		f |= fCLFirst
	}
	for {
		var s, e int
		if s, e, i = nextListElement(buf, i, end); i < 0 {
			break
		}
		if e-s == 7 && nameIs(buf, s, "chunked") {
			if f&fTEChunkedLast != 0 {
				f |= fTEBad // chunked twice
			}
			f |= fTEChunkedLast
		} else {
			if f&fTEChunkedLast != 0 {
				f |= fTEBad // a coding after chunked
			}
			f &^= fTEChunkedLast
		}
	}
	p.flags = f
}

// contentLength: digits only; repeats and list members must be identical (RFC 9110 8.6).
func (p *Parser) contentLength(buf []byte, i, end int) bool {
	seen := false
	for i < end {
		if c := buf[i]; c == ',' || c == ' ' || c == '\t' {
			i++
			continue
		}
		v := 0.0
		s := i
		for i < end && buf[i] >= '0' && buf[i] <= '9' {
			// float64(...) rounds the product on its own, as JS does: no fused multiply-add
			v = float64(v*10) + float64(buf[i]-'0')
			i++
		}
		e := i
		for i < end && (buf[i] == ' ' || buf[i] == '\t') {
			i++
		}
		if e == s || (i < end && buf[i] != ',') {
			return p.failed(400, "invalid Content-Length")
		}
		if v > maxSafe {
			p.flags |= fCLBig
		}
		if p.flags&fCL != 0 && v != p.cl {
			return p.failed(400, "several different Content-Length values")
		}
		p.flags |= fCL
		p.cl = v
		seen = true
	}
	return seen || p.failed(400, "empty Content-Length")
}

func (p *Parser) endHead() {
	f := p.flags
	h := &p.head
	minor := h.VersionMinor
	chunked := false
	cl := int64(-1)
	if minor == 1 && f&fHost == 0 && p.opt.RequireHost {
		p.fail(400, "missing Host header")
		return
	}
	if f&fTE != 0 {
		if minor == 0 {
			p.fail(400, "Transfer-Encoding in an HTTP/1.0 request")
			return
		}
		if f&fCL != 0 {
			// which came last is what node's 'clientError' names (llhttp refuses the
			// second of the two: HPE_INVALID_TRANSFER_ENCODING or
			// HPE_INVALID_CONTENT_LENGTH, src/http/client-error.js)
			if f&fCLFirst != 0 {
				p.fail(400, "both Content-Length and Transfer-Encoding, Transfer-Encoding last")
			} else {
				p.fail(400, "both Content-Length and Transfer-Encoding, Content-Length last")
			}
			return
		}
		if f&fTEBad != 0 || f&fTEChunkedLast == 0 {
			p.fail(400, "Transfer-Encoding whose final coding is not chunked")
			return
		}
		chunked = true
	} else if f&fCL != 0 {
		if f&fCLBig != 0 || int64(p.cl) > p.opt.MaxBodySize {
			p.fail(413, "Content-Length above the body size limit")
			return
		}
		cl = int64(p.cl)
	}
	// CONNECT has no body: what follows its head is the tunnel's (llhttp upgrades at once)
	connect := h.Method == "CONNECT"
	if connect {
		chunked = false
		cl = -1
	}
	h.ContentLength = cl
	h.Chunked = chunked
	h.KeepAlive = f&fClose == 0 && (minor == 1 || f&fKeepAlive != 0)
	h.ExpectContinue = minor == 1 && f&fContinue != 0
	h.ExpectOther = minor == 1 && f&(fContinue|fExpectOther) == fExpectOther
	h.Upgrade = connect || f&(fConnUpgrade|fUpgrade) == fConnUpgrade|fUpgrade
	h.HasBody = chunked || cl > 0
	switch {
	case chunked:
		p.state = sChunkSize
		p.bodyTotal = 0
	case cl > 0:
		p.state = sBody
		p.remaining = cl
	default:
		p.state = sDone
	}
	p.ev = GotHead
}

// chunkSizeLine: hex [ext] CRLF, ext per RFC 9112 7.1.1, no stray whitespace. The
// extensions are parsed and dropped; more than MaxHeaderSize of them on one chunk's
// line is 413: node's limit against CVE-2024-22019 counts each chunk's extensions
// afresh (its parser resets the count at every chunk header:
// test-http-chunk-extensions-limit.js, "reset after a chunk").
func (p *Parser) chunkSizeLine(buf []byte, a, end int) int {
	i := a
	size := int64(0)
	for ; i < end; i++ {
		d := unhex(buf[i])
		if d < 0 {
			break
		}
		if size = size*16 + int64(d); size > maxSafe {
			return p.fail(413, "chunk size too large")
		}
	}
	if i == end {
		return needMore
	}
	if i == a {
		return p.fail(400, "invalid chunk size")
	}
	extStart := i
	// chunk-ext = *( BWS ";" BWS name [ BWS "=" BWS ( token / quoted-string ) ] )
	for buf[i] != '\r' {
		i = skipBWS(buf, i, end)
		if i == end {
			return needMore
		}
		if buf[i] != ';' {
			return p.fail(400, "invalid chunk extension")
		}
		i = skipBWS(buf, i+1, end)
		ns := i
		for i < end && is(buf[i], cTchar) {
			i++
		}
		if i == end {
			return needMore
		}
		if i == ns {
			return p.fail(400, "invalid chunk extension")
		}
		afterName := i
		i = skipBWS(buf, i, end)
		if i == end {
			return needMore
		}
		if buf[i] != '=' {
			i = afterName // BWS before CR is not allowed, before ";" it is
			continue
		}
		i = skipBWS(buf, i+1, end)
		if i == end {
			return needMore
		}
		if buf[i] == '"' {
			i++
			for {
				if i >= end {
					return needMore
				}
				c := buf[i]
				if c == '"' {
					break
				}
				if c == '\\' {
					if i+1 == end {
						return needMore
					}
					if !is(buf[i+1], cFvalue) {
						return p.fail(400, "invalid chunk extension")
					}
					i += 2
				} else if is(c, cQdtext) {
					i++
				} else {
					return p.fail(400, "invalid chunk extension")
				}
			}
			i++
		} else {
			vs := i
			for i < end && is(buf[i], cTchar) {
				i++
			}
			if i == end {
				return needMore
			}
			if i == vs {
				return p.fail(400, "invalid chunk extension")
			}
		}
		if i == end {
			return needMore
		}
	}
	if i+1 == end {
		return needMore
	}
	if buf[i+1] != '\n' {
		return p.fail(400, "bare CR in chunk size line")
	}
	if i-extStart > p.opt.MaxHeaderSize {
		return p.fail(413, "chunk extensions too large")
	}
	if size == 0 {
		p.state = sTrailers
		p.headBytes = 0
		p.head.trailers = p.head.trailers[:0]
	} else {
		p.bodyTotal += size
		if p.bodyTotal > p.opt.MaxBodySize {
			return p.fail(413, "chunked body above the body size limit")
		}
		p.remaining = size
		p.state = sChunkData
	}
	return i + 2
}

func (p *Parser) complete() {
	p.state = sIdle
	p.headBytes = 0
	p.ev = Complete
}

// fail reports bad input once and stays failed; it returns failed so line steps can
// return it.
func (p *Parser) fail(status int, reason string) int {
	p.state = sError
	p.line = p.line[:0]
	p.err = Error{Status: status, Reason: reason}
	p.ev = Failed
	return failed
}

func (p *Parser) failed(status int, reason string) bool {
	p.fail(status, reason)
	return false
}

// versionByteOK: byte k of "HTTP/d.d\r\n".
func versionByteOK(k int, c byte) bool {
	switch {
	case k < 5:
		return c == "HTTP/"[k]
	case k == 5 || k == 7:
		return c >= '0' && c <= '9'
	case k == 6:
		return c == '.'
	case k == 8:
		return c == '\r'
	}
	return c == '\n'
}

// nameIs compares buf[a:] case-insensitively with a lower-case literal. Only letters
// can match a letter after | 0x20, and the literals' other bytes ('-', digits) are
// never met by a non-token byte here (the input was checked as token or value).
func nameIs(buf []byte, a int, lit string) bool {
	for k := range len(lit) {
		if buf[a+k]|0x20 != lit[k] {
			return false
		}
	}
	return true
}

// nextListElement finds the next non-empty element of a comma-separated list (RFC
// 9110 5.6.1) at or after i: its trimmed bounds, and where the scan goes on (-1: none).
func nextListElement(buf []byte, i, end int) (s, e, next int) {
	for i < end && (buf[i] == ',' || buf[i] == ' ' || buf[i] == '\t') {
		i++
	}
	if i >= end {
		return 0, 0, -1
	}
	s = i
	for i < end && buf[i] != ',' {
		i++
	}
	e = i
	for buf[e-1] == ' ' || buf[e-1] == '\t' {
		e--
	}
	return s, e, i
}

func skipBWS(buf []byte, i, end int) int {
	for i < end && (buf[i] == ' ' || buf[i] == '\t') {
		i++
	}
	return i
}

// isAbsoluteForm: RFC 9112 3.2.2 absolute-form, narrowed to "scheme://" (what http
// and https use), so that an authority-form host:port is not taken for a scheme.
func isAbsoluteForm(t []byte) bool {
	if c := t[0] | 0x20; c < 'a' || c > 'z' {
		return false
	}
	for i := 1; i < len(t); i++ {
		if t[i] == ':' {
			return i+2 < len(t) && t[i+1] == '/' && t[i+2] == '/'
		}
		if !is(t[i], cScheme) {
			return false
		}
	}
	return false
}

// authorityOf is an absolute-form target's authority: from "//" to the path, query or
// fragment.
func authorityOf(t []byte) []byte {
	a := bytes.Index(t, []byte("//")) + 2
	e := a
	for e < len(t) && t[e] != '/' && t[e] != '?' && t[e] != '#' {
		e++
	}
	return t[a:e]
}

// validHostPort is route.IsValidHostPort on bytes (RFC 3986 3.2.3, port = *DIGIT): no
// port, or a port of digits; an IP literal's port follows its "]".
func validHostPort(h []byte) bool {
	var i int
	if len(h) > 0 && h[0] == '[' {
		j := bytes.IndexByte(h, ']')
		if j < 0 {
			return false
		}
		if i = j + 1; i == len(h) {
			return true
		}
		if h[i] != ':' {
			return false
		}
	} else if i = bytes.IndexByte(h, ':'); i < 0 {
		return true
	}
	for _, c := range h[i+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
