package wire

import (
	"encoding/binary"
	"encoding/json"
	"iter"
	"strconv"
)

// String is the type's name in docs/wire-protocol.md, or its number.
func (t Type) String() string {
	switch t {
	case TypeHello:
		return "HELLO"
	case TypeHelloOK:
		return "HELLO_OK"
	case TypeHelloErr:
		return "HELLO_ERR"
	case TypeRequest:
		return "REQUEST"
	case TypeBody:
		return "BODY"
	case TypeBodyEnd:
		return "BODY_END"
	case TypeAbort:
		return "ABORT"
	case TypeAck:
		return "ACK"
	case TypeRead:
		return "READ"
	case TypeResponse:
		return "RESPONSE"
	case TypeResBody:
		return "RES_BODY"
	case TypeWindow:
		return "WINDOW"
	case TypeContinue:
		return "CONTINUE"
	case TypeCancel:
		return "CANCEL"
	case TypeDetach:
		return "DETACH"
	case TypeDetachOK:
		return "DETACH_OK"
	case TypeClose:
		return "CLOSE"
	case TypeInfo:
		return "INFO"
	case TypeConnClosed:
		return "CONN_CLOSED"
	case TypeConnEnd:
		return "CONN_END"
	case TypeConnFin:
		return "CONN_FIN"
	case TypeConnOpen:
		return "CONN_OPEN"
	case TypeConnError:
		return "CONN_ERROR"
	case TypeConnTimeout:
		return "CONN_TIMEOUT"
	case TypeConnWrite:
		return "CONN_WRITE"
	case TypeConnDestroy:
		return "CONN_DESTROY"
	case TypeConnIdle:
		return "CONN_IDLE"
	case TypeConnHeld:
		return "CONN_HELD"
	case TypeConnKept:
		return "CONN_KEPT"
	}
	return "type " + strconv.Itoa(int(t))
}

// Request is a REQUEST frame: BeginRequest encodes it, Frame.Request decodes it (as
// views of the frame). docs/wire-protocol.md "REQUEST payload".
type Request struct {
	Flags        uint8 // Req*
	VersionMajor uint8
	VersionMinor uint8
	Family       uint8 // 4 or 6
	RemotePort   uint16
	LocalPort    uint16
	ConnectionID uint32
	Method       string
	URL          []byte
	// the addresses as node prints them (socket.remoteAddress)
	RemoteAddress string
	LocalAddress  string
	// Fields are the header pairs (decoding only: the encoder takes Writer.Field)
	Fields FieldList
	// TLS is the TLS section (with ReqTLS): AppendTLSInfo's bytes
	TLS []byte
	// Head is, with ReqHead, what was read after an upgrade's head (the app's `head`)
	Head []byte
}

// Response is a RESPONSE or INFO frame's payload; Frame.Response decodes it as views.
type Response struct {
	Status   uint16
	Flags    uint8 // Res*
	CacheTTL uint32
	Reason   []byte
	// HeaderBlock is "Name: value\r\n" per header, as the worker wrote it
	HeaderBlock []byte
	Body        []byte
}

// FieldList is n name/value pairs encoded as u16-length strings (REQUEST's headers,
// BODY_END's trailers), read in place.
type FieldList struct {
	n int
	b []byte
}

// Len is the number of pairs.
func (l FieldList) Len() int { return l.n }

// All yields each pair in order, as views of the frame.
func (l FieldList) All() iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		b := l.b
		for range l.n {
			name, rest := cutStr(b)
			value, rest := cutStr(rest)
			if !yield(name, value) {
				return
			}
			b = rest
		}
	}
}

// cutStr reads a u16-length string that was checked to be there (scanFields).
func cutStr(b []byte) ([]byte, []byte) {
	n := int(binary.LittleEndian.Uint16(b))
	return b[2 : 2+n : 2+n], b[2+n:]
}

// scanStrs checks that b starts with n u16-length strings; returns their length in bytes.
func scanStrs(b []byte, n uint64) (int, bool) {
	p := 0
	for i := uint64(0); i < n; i++ {
		if len(b)-p < 2 {
			return 0, false
		}
		p += 2 + int(binary.LittleEndian.Uint16(b[p:]))
		if p > len(b) {
			return 0, false
		}
	}
	return p, true
}

func short(t Type, what string) error {
	return protocolError(t.String() + " payload too short for its " + what)
}

// U32 is the u32 of an ACK, READ or WINDOW frame.
func (f Frame) U32() (uint32, error) {
	if len(f.Payload) < 4 {
		return 0, protocolError(f.Type.String() + " without its u32")
	}
	return binary.LittleEndian.Uint32(f.Payload), nil
}

// Request decodes a REQUEST payload. Like src/wire/protocol.js decodeRequest it reads
// the fields in order and ignores bytes after them; unlike it, a length that runs
// past the payload is an error, not a crash.
func (f Frame) Request() (Request, error) {
	b := f.Payload
	if len(b) < 16 {
		return Request{}, short(TypeRequest, "16 fixed bytes")
	}
	r := Request{
		Flags:        b[0],
		VersionMajor: b[1],
		VersionMinor: b[2],
		Family:       b[3],
		RemotePort:   binary.LittleEndian.Uint16(b[4:]),
		LocalPort:    binary.LittleEndian.Uint16(b[6:]),
		ConnectionID: binary.LittleEndian.Uint32(b[8:]),
	}
	pairs := uint64(binary.LittleEndian.Uint32(b[12:]))
	p := 16
	n, ok := scanStrs(b[p:], 4)
	if !ok {
		return Request{}, short(TypeRequest, "strings")
	}
	s := b[p : p+n]
	var method, url, ra, la []byte
	method, s = cutStr(s)
	url, s = cutStr(s)
	ra, s = cutStr(s)
	la, _ = cutStr(s)
	r.Method, r.URL, r.RemoteAddress, r.LocalAddress = string(method), url, string(ra), string(la)
	p += n
	n, ok = scanStrs(b[p:], 2*pairs)
	if !ok {
		return Request{}, short(TypeRequest, "header pairs")
	}
	r.Fields = FieldList{n: int(pairs), b: b[p : p+n]}
	p += n
	if r.Flags&ReqTLS != 0 {
		_, n, err := DecodeTLSInfo(b[p:])
		if err != nil {
			return Request{}, err
		}
		r.TLS = b[p : p+n : p+n]
		p += n
	}
	if r.Flags&ReqHead != 0 {
		if len(b)-p < 4 {
			return Request{}, short(TypeRequest, "head length")
		}
		n := uint64(binary.LittleEndian.Uint32(b[p:]))
		if n > uint64(len(b)-p-4) {
			return Request{}, short(TypeRequest, "head bytes")
		}
		r.Head = b[p+4 : p+4+int(n) : p+4+int(n)]
	}
	return r, nil
}

// Trailers decodes a BODY_END payload: ok is false for one without trailers (a
// payload under 4 bytes, as src/wire/protocol.js decodeTrailers reads it).
func (f Frame) Trailers() (l FieldList, ok bool, err error) {
	b := f.Payload
	if len(b) < 4 {
		return FieldList{}, false, nil
	}
	pairs := uint64(binary.LittleEndian.Uint32(b))
	n, good := scanStrs(b[4:], 2*pairs)
	if !good {
		return FieldList{}, false, short(TypeBodyEnd, "trailer pairs")
	}
	return FieldList{n: int(pairs), b: b[4 : 4+n]}, true, nil
}

// Response decodes a RESPONSE or INFO payload after checking that every length stays
// inside it (CheckResponse and CheckInfo add the router's rules on top).
func (f Frame) Response() (Response, error) {
	b := f.Payload
	if err := checkLengths(f.Type, b); err != nil {
		return Response{}, err
	}
	rl := int(binary.LittleEndian.Uint16(b[8:]))
	bs := 14 + rl
	bl := int(binary.LittleEndian.Uint32(b[10+rl:]))
	return Response{
		Status:      binary.LittleEndian.Uint16(b),
		Flags:       b[2],
		CacheTTL:    binary.LittleEndian.Uint32(b[4:]),
		Reason:      b[10 : 10+rl : 10+rl],
		HeaderBlock: b[bs : bs+bl : bs+bl],
		Body:        b[bs+bl:],
	}, nil
}

// JSON is a control frame's JSON and, for HELLO and HELLO_OK, the version byte before
// it (-1 for the others). Invalid JSON is the error src/wire/protocol.js decodeJson gives.
func (f Frame) JSON() (version int, js []byte, err error) {
	b := f.Payload
	version = -1
	if hasVersion(f.Type) {
		if len(b) == 0 {
			return 0, nil, protocolError("a control frame is not valid JSON")
		}
		version = int(b[0])
		b = b[1:]
	}
	if !json.Valid(b) {
		return 0, nil, protocolError("a control frame is not valid JSON")
	}
	return version, b, nil
}

// checkLengths: the fixed bytes, the reason and the header block inside the payload.
// The wording is src/wire/protocol.js checkResponse's.
func checkLengths(t Type, b []byte) error {
	name := t.String()
	if len(b) < 14 {
		return protocolError(name + " payload of " + strconv.Itoa(len(b)) + " bytes is shorter than its 14 fixed bytes")
	}
	rl := int(binary.LittleEndian.Uint16(b[8:]))
	if 10+rl+4 > len(b) {
		return protocolError(name + " reason length " + strconv.Itoa(rl) + " runs past the frame")
	}
	bl := uint64(binary.LittleEndian.Uint32(b[10+rl:]))
	if bl > uint64(len(b)-14-rl) {
		return protocolError(name + " header block length " + strconv.FormatUint(bl, 10) + " runs past the frame")
	}
	return nil
}

// CheckResponse is the router's check of a RESPONSE before it reads it in place
// (src/wire/protocol.js checkResponse; docs/wire-protocol.md): every length inside
// the frame, status 101 or 200-999 (other 1xx only through CONTINUE and INFO), a
// reason without control characters, and a header block that is empty or ends in
// CRLF and does not start with one, so that it cannot swallow the blank line.
func CheckResponse(b []byte) error { return checkResponse(TypeResponse, b, false) }

// CheckInfo is CheckResponse for an INFO: status 102-199 (100 has CONTINUE, 101
// switches protocols) and no body (src/wire/protocol.js checkInfo).
func CheckInfo(b []byte) error { return checkResponse(TypeInfo, b, true) }

func checkResponse(t Type, b []byte, info bool) error {
	name := t.String()
	if len(b) < 14 {
		return protocolError(name + " payload of " + strconv.Itoa(len(b)) + " bytes is shorter than its 14 fixed bytes")
	}
	status := binary.LittleEndian.Uint16(b)
	if info {
		if status < 102 || status > 199 {
			return protocolError("INFO status " + strconv.Itoa(int(status)) + " is not 102-199")
		}
	} else if (status < 200 && status != 101) || status > 999 {
		return protocolError("RESPONSE status " + strconv.Itoa(int(status)) + " is not 101 or 200-999")
	}
	rl := int(binary.LittleEndian.Uint16(b[8:]))
	if 10+rl+4 > len(b) {
		return protocolError(name + " reason length " + strconv.Itoa(rl) + " runs past the frame")
	}
	for _, c := range b[10 : 10+rl] {
		if (c < 32 && c != 9) || c == 127 {
			return protocolError(name + " reason holds a control character")
		}
	}
	bs := 14 + rl
	bl := uint64(binary.LittleEndian.Uint32(b[10+rl:]))
	if bl > uint64(len(b)-bs) {
		return protocolError(name + " header block length " + strconv.FormatUint(bl, 10) + " runs past the frame")
	}
	if n := int(bl); n != 0 && (n < 4 || b[bs] == '\r' || b[bs+n-2] != '\r' || b[bs+n-1] != '\n') {
		return protocolError(name + ` header block does not hold whole "Name: value\r\n" lines`)
	}
	if info && bs+int(bl) != len(b) {
		return protocolError("INFO carries a body")
	}
	return nil
}

// CheckFromWorker is what the router checks of a frame a worker sent before acting on
// it: a RESPONSE or INFO that passes
// CheckResponse or CheckInfo, ACK and READ with their u32, RES_BODY with its flags
// byte, HELLO with a version byte and valid JSON, and no type a worker never sends.
// What needs the connection's state (a second HELLO, an ACK beyond what was sent:
// AckWindow) is the caller's, and so is a HELLO of another version: that one is
// answered HELLO_ERR, not dropped.
func CheckFromWorker(f Frame) error {
	switch f.Type {
	case TypeResponse:
		return CheckResponse(f.Payload)
	case TypeInfo:
		return CheckInfo(f.Payload)
	case TypeAck, TypeRead:
		_, err := f.U32()
		return err
	case TypeResBody:
		if len(f.Payload) == 0 {
			return protocolError("RES_BODY without its flags byte")
		}
		return nil
	case TypeHello:
		_, _, err := f.JSON()
		return err
	case TypeContinue, TypeCancel, TypeDetach, TypeConnEnd, TypeConnFin, TypeConnWrite, TypeConnDestroy:
		return nil
	case TypeConnIdle:
		if len(f.Payload) != 1 {
			return protocolError("CONN_IDLE payload of " + strconv.Itoa(len(f.Payload)) + " bytes is not 1")
		}
		return nil
	}
	return protocolError("unknown frame type " + strconv.Itoa(int(f.Type)))
}

// AckWindow counts the REQUEST frames sent to a worker against its cumulative ACKs
// (docs/wire-protocol.md "Flow control"): an ACK may not acknowledge more than was
// sent, or the receive window would open without bound.
type AckWindow struct {
	sent, acked uint64
	low         uint32 // the last ACK's value (it wraps at 2^32)
}

// Sent counts one more REQUEST frame.
func (a *AckWindow) Sent() { a.sent++ }

// InFlight is how many REQUEST frames were sent and not acknowledged.
func (a *AckWindow) InFlight() uint64 { return a.sent - a.acked }

// Ack takes an ACK's value; it returns how many frames it newly acknowledges.
func (a *AckWindow) Ack(n uint32) (uint32, error) {
	more := n - a.low
	if a.acked+uint64(more) > a.sent {
		return 0, protocolError("ACK " + strconv.FormatUint(uint64(n), 10) + " for " + strconv.FormatUint(a.sent, 10) + " REQUEST frames sent")
	}
	a.acked += uint64(more)
	a.low = n
	return more, nil
}
