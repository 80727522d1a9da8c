package wire

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
)

// Writer batches frames: small ones are appended to one buffer, bodies of
// RefThreshold bytes or more are queued by reference, and WriteTo writes the lot as
// one net.Buffers (writev on a socket). The router appends everything a batch of client
// reads produced and writes once (docs/wire-protocol.md "Frames": a read of 50 client
// requests becomes one write to the worker).
//
// A body queued by reference must not change until WriteTo returns.
type Writer struct {
	slab     []byte
	parts    []part // what WriteTo writes before slab[cut:]
	cut      int    // slab bytes before cut are in parts
	refBytes int
	out      net.Buffers // WriteTo's list, kept for its capacity

	// the frame BeginRequest or BeginBodyEnd opened
	open     int // its offset in slab; -1: none
	openType Type
	pairsAt  int
	pairs    uint32
	tooLong  bool
	tls      []byte // a copy of the open REQUEST's TLS section and head bytes (a reference
	// would make every byte slice of a Request escape to the heap)

	// Copies: BodyCopy's pooled buffers (copy.go); copied: those of this batch
	Copies *CopyPool
	copied []*[]byte
	blocks []*Block // referenced by this batch's BODY frames (BodyBlock)
}

type part struct {
	ref        []byte // nil: slab[start:end]
	start, end int
}

// NewWriter returns a Writer whose buffer starts at size bytes (it grows as needed
// and keeps its size across batches).
func NewWriter(size int) *Writer {
	return &Writer{slab: make([]byte, 0, size), open: -1}
}

// Len is how many bytes are queued.
func (w *Writer) Len() int { return len(w.slab) + w.refBytes }

// WriteTo writes every queued frame to dst (one writev when dst is a socket) and
// empties the Writer, whether or not the write succeeded: a failed write ends the
// connection.
func (w *Writer) WriteTo(dst io.Writer) (int64, error) {
	if w.open >= 0 {
		panic("wire: WriteTo inside a frame opened by Begin")
	}
	out := w.out[:0]
	for _, p := range w.parts {
		if p.ref != nil {
			out = append(out, p.ref)
		} else {
			out = append(out, w.slab[p.start:p.end])
		}
	}
	if len(w.slab) > w.cut {
		out = append(out, w.slab[w.cut:])
	}
	var n int64
	var err error
	if len(out) > 0 {
		w.out = out
		n, err = w.out.WriteTo(dst)
	}
	w.out = out[:0]
	w.reset()
	return n, err
}

// reset empties the batch, written or given up on (Discard): the pooled buffers and the
// blocks it references are let go, and the bodies are the caller's again.
func (w *Writer) reset() {
	if len(w.copied) > 0 {
		w.release()
	}
	if len(w.blocks) > 0 {
		w.releaseBlocks()
	}
	clear(w.parts)
	w.parts = w.parts[:0]
	w.slab = w.slab[:0]
	w.cut = 0
	w.refBytes = 0
}

func (w *Writer) header(t Type, id uint32, payload int) {
	if w.open >= 0 {
		panic("wire: a frame appended inside a frame opened by Begin")
	}
	w.slab = binary.LittleEndian.AppendUint32(w.slab, uint32(5+payload))
	w.slab = append(w.slab, byte(t))
	w.slab = binary.LittleEndian.AppendUint32(w.slab, id)
}

func (w *Writer) ref(b []byte) {
	if len(w.slab) > w.cut {
		w.parts = append(w.parts, part{start: w.cut, end: len(w.slab)})
		w.cut = len(w.slab)
	}
	w.parts = append(w.parts, part{ref: b})
	w.refBytes += len(b)
}

func (w *Writer) payload(b []byte) {
	if len(b) >= RefThreshold {
		w.ref(b)
	} else {
		w.slab = append(w.slab, b...)
	}
}

func tooLarge(t Type, payload int) error {
	return protocolError(t.String() + " payload of " + strconv.Itoa(payload) + " bytes does not fit in a frame")
}

// Empty appends a frame without payload: BODY_END without trailers, ABORT, CONTINUE,
// CANCEL, DETACH, DETACH_OK, CONN_CLOSED, CONN_END.
func (w *Writer) Empty(t Type, id uint32) { w.header(t, id, 0) }

// U32 appends a frame whose payload is one u32: ACK, READ, WINDOW.
func (w *Writer) U32(t Type, id uint32, v uint32) {
	w.header(t, id, 4)
	w.slab = binary.LittleEndian.AppendUint32(w.slab, v)
}

// JSON appends a control frame: HELLO and HELLO_OK carry Version before the JSON,
// HELLO_ERR and CLOSE do not. js is copied.
func (w *Writer) JSON(t Type, id uint32, js []byte) error {
	extra := 0
	if hasVersion(t) {
		extra = 1
	}
	if extra+len(js) > MaxFrame-5 {
		return tooLarge(t, extra+len(js))
	}
	w.header(t, id, extra+len(js))
	if extra == 1 {
		w.slab = append(w.slab, Version)
	}
	w.slab = append(w.slab, js...)
	return nil
}

func hasVersion(t Type) bool { return t == TypeHello || t == TypeHelloOK }

// Body appends a BODY frame (a piece of a request body).
func (w *Writer) Body(id uint32, b []byte) error {
	if len(b) > MaxFrame-5 {
		return tooLarge(TypeBody, len(b))
	}
	w.header(TypeBody, id, len(b))
	w.payload(b)
	return nil
}

// ResBody appends a RES_BODY frame: flags, then body bytes.
func (w *Writer) ResBody(id uint32, flags uint8, b []byte) error {
	if 1+len(b) > MaxFrame-5 {
		return tooLarge(TypeResBody, 1+len(b))
	}
	w.header(TypeResBody, id, 1+len(b))
	w.slab = append(w.slab, flags)
	w.payload(b)
	return nil
}

// Response appends a RESPONSE frame (a body of RefThreshold bytes or more by
// reference). The header block goes as it is: the worker serialises it.
func (w *Writer) Response(id uint32, r *Response) error {
	return w.response(TypeResponse, id, r, r.Body)
}

// Info appends an INFO frame: RESPONSE's layout without a body (r.Body is ignored).
func (w *Writer) Info(id uint32, r *Response) error {
	return w.response(TypeInfo, id, r, nil)
}

func (w *Writer) response(t Type, id uint32, r *Response, body []byte) error {
	if len(r.Reason) > MaxString {
		return protocolError(t.String() + " reason of " + strconv.Itoa(len(r.Reason)) + " bytes is longer than 65535")
	}
	size := 14 + len(r.Reason) + len(r.HeaderBlock) + len(body)
	if size > MaxFrame-5 {
		return tooLarge(t, size)
	}
	w.header(t, id, size)
	w.slab = binary.LittleEndian.AppendUint16(w.slab, r.Status)
	w.slab = append(w.slab, r.Flags, 0)
	w.slab = binary.LittleEndian.AppendUint32(w.slab, r.CacheTTL)
	w.slab = binary.LittleEndian.AppendUint16(w.slab, uint16(len(r.Reason)))
	w.slab = append(w.slab, r.Reason...)
	w.slab = binary.LittleEndian.AppendUint32(w.slab, uint32(len(r.HeaderBlock)))
	w.slab = append(w.slab, r.HeaderBlock...)
	w.payload(body)
	return nil
}

// BeginRequest opens a REQUEST frame; Field appends its header pairs in order and End
// closes it. r.Fields is not read. With ReqTLS in r.Flags, End appends r.TLS (the
// connection's section, AppendTLSInfo: encoded once per connection), then with ReqHead
// r.Head as u32 length + bytes.
func (w *Writer) BeginRequest(id uint32, r *Request) {
	w.header(TypeRequest, id, 0)
	w.open = len(w.slab) - HeaderSize
	w.openType = TypeRequest
	w.tooLong = false
	w.pairs = 0
	w.slab = append(w.slab, r.Flags, r.VersionMajor, r.VersionMinor, r.Family)
	w.slab = binary.LittleEndian.AppendUint16(w.slab, r.RemotePort)
	w.slab = binary.LittleEndian.AppendUint16(w.slab, r.LocalPort)
	w.slab = binary.LittleEndian.AppendUint32(w.slab, r.ConnectionID)
	w.pairsAt = len(w.slab)
	w.slab = append(w.slab, 0, 0, 0, 0)
	putStr(w, r.Method)
	putStr(w, r.URL)
	putStr(w, r.RemoteAddress)
	putStr(w, r.LocalAddress)
	w.tls = w.tls[:0]
	if r.Flags&ReqTLS != 0 {
		w.tls = append(w.tls, r.TLS...)
	}
	if r.Flags&ReqHead != 0 {
		w.tls = binary.LittleEndian.AppendUint32(w.tls, uint32(len(r.Head)))
		w.tls = append(w.tls, r.Head...)
	}
}

// BeginBodyEnd opens a BODY_END frame; Field appends the trailers and End closes it.
// Without a Field it is the empty BODY_END (a body without trailers).
func (w *Writer) BeginBodyEnd(id uint32) {
	w.header(TypeBodyEnd, id, 0)
	w.open = len(w.slab) - HeaderSize
	w.openType = TypeBodyEnd
	w.tooLong = false
	w.pairs = 0
	w.pairsAt = len(w.slab)
	w.slab = append(w.slab, 0, 0, 0, 0)
	w.tls = w.tls[:0]
}

// Field appends a name and value pair to the frame Begin opened.
func (w *Writer) Field(name, value []byte) {
	if w.open < 0 {
		panic("wire: Field outside a frame opened by Begin")
	}
	putStr(w, name)
	putStr(w, value)
	w.pairs++
}

// End closes the frame Begin opened. A string longer than MaxString or a frame past
// MaxFrame takes the whole frame back out and is an error.
func (w *Writer) End() error {
	if w.open < 0 {
		panic("wire: End without Begin")
	}
	start := w.open
	t := w.openType
	w.open = -1
	if t == TypeBodyEnd && w.pairs == 0 {
		w.slab = w.slab[:w.pairsAt]
	} else {
		binary.LittleEndian.PutUint32(w.slab[w.pairsAt:], w.pairs)
	}
	w.slab = append(w.slab, w.tls...)
	size := len(w.slab) - start - HeaderSize
	if w.tooLong || size > MaxFrame-5 {
		w.slab = w.slab[:start]
		if w.tooLong {
			return protocolError(t.String() + " holds a string longer than 65535 bytes")
		}
		return tooLarge(t, size)
	}
	binary.LittleEndian.PutUint32(w.slab[start:], uint32(5+size))
	return nil
}

// putStr appends u16 length + bytes: REQUEST's and BODY_END's strings.
func putStr[S string | []byte](w *Writer, s S) {
	n := len(s)
	if n > MaxString {
		w.tooLong = true
		n = 0
	}
	w.slab = binary.LittleEndian.AppendUint16(w.slab, uint16(n))
	w.slab = append(w.slab, s[:n]...)
}
