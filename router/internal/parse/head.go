package parse

// Head is a request head as the parser read it. Names and values are kept as sent
// (case, order, repeats: node's
// rawHeaders), with their leading and trailing whitespace trimmed. Its byte slices
// point into the parser's own buffer: they stay valid until the parser starts the
// next request (the next Parse after Complete); copy what must live longer.
type Head struct {
	// Method is one of Methods(), as a constant string
	Method       string
	VersionMajor int // always 1
	VersionMinor int // 0 or 1
	// ContentLength is -1 without a Content-Length (and for chunked)
	ContentLength int64
	Chunked       bool
	// KeepAlive per HTTP/1.0 and 1.1 rules and the Connection tokens (RFC 9112 9.3)
	KeepAlive bool
	// ExpectContinue: Expect: 100-continue, HTTP/1.1 only (RFC 9110 10.1.1: a 1.0
	// client cannot wait for it)
	ExpectContinue bool
	// ExpectOther: an Expect header with another expectation (HTTP/1.1)
	ExpectOther bool
	// Upgrade: Connection: upgrade and an Upgrade header
	Upgrade bool
	// HasBody: body events follow (chunked, or Content-Length > 0)
	HasBody bool

	store    []byte // url, then the fields' names and values, then the trailers'
	url      span
	host     span
	fields   []span // name, value, name, value, ...
	trailers []span
}

type span struct{ a, b int }

func (h *Head) get(s span) []byte { return h.store[s.a:s.b:s.b] }

func (h *Head) add(b []byte) span {
	a := len(h.store)
	h.store = append(h.store, b...)
	return span{a, len(h.store)}
}

func (h *Head) reset() {
	*h = Head{store: h.store[:0], fields: h.fields[:0], trailers: h.trailers[:0], ContentLength: -1}
}

// URL is the request-target as sent, undecoded.
func (h *Head) URL() []byte { return h.get(h.url) }

// Host is the first Host header's value, or empty.
func (h *Head) Host() []byte { return h.get(h.host) }

// NumFields is how many header fields the request had.
func (h *Head) NumFields() int { return len(h.fields) / 2 }

// Field is header field i (0 <= i < NumFields()) as sent.
func (h *Head) Field(i int) (name, value []byte) {
	return h.get(h.fields[2*i]), h.get(h.fields[2*i+1])
}

// NumTrailers is how many trailer fields a chunked body ended with; known at Complete.
func (h *Head) NumTrailers() int { return len(h.trailers) / 2 }

// Trailer is trailer field i as sent.
func (h *Head) Trailer(i int) (name, value []byte) {
	return h.get(h.trailers[2*i]), h.get(h.trailers[2*i+1])
}
