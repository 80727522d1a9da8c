// Package wire is the router <-> worker frame codec, protocol version 6, as
// docs/wire-protocol.md defines it. Its JS twin is src/wire/protocol.js (the worker's
// side stays there); test/unit/router/wire-cross.test.js keeps the two byte for byte
// in step.
//
// A frame is u32 length (5 + payload) | u8 type | u32 id | payload, little-endian.
// Reader hands frames out as views of its read buffer; Writer appends frames to one
// buffer and writes them with one writev; Frame's methods decode and check payloads.
package wire

import (
	"encoding/binary"
	"strconv"
)

// Version is what HELLO and HELLO_OK carry. 2: REQUEST's TLS section; 3: INFO,
// CONN_CLOSED and CONN_END; 4: BODY_END's trailers; 5: REQUEST's head bytes (ReqHead),
// CONN_FIN, and a CONNECT's 2xx with ResOpaque; 6: a standalone server's connection
// lifecycle, CONN_OPEN to CONN_IDLE and CONN_FIN's answer (docs/wire-protocol.md).
const Version = 6

const (
	// HeaderSize is u32 length + u8 type + u32 id.
	HeaderSize = 9
	// MaxFrame is the largest length field; a larger one, or one below 5, is a
	// protocol error and the peer is dropped.
	MaxFrame = 64 << 20
	// RefThreshold: bodies of this many bytes or more are queued by reference (a
	// writev part of their own), smaller ones are copied into the batch.
	RefThreshold = 4096
	// MaxString is the longest REQUEST string (u16 length; the router caps
	// maxHeaderSize at 65535 so that no header can be longer).
	MaxString = 65535
)

// Type is a frame's type byte.
type Type uint8

// The frame types, docs/wire-protocol.md "Types".
const (
	TypeHello      Type = 1  // worker -> router: u8 version, JSON
	TypeHelloOK    Type = 2  // router -> worker: u8 version, JSON
	TypeHelloErr   Type = 3  // router -> worker: JSON
	TypeRequest    Type = 4  // router -> worker
	TypeBody       Type = 5  // router -> worker: request body bytes
	TypeBodyEnd    Type = 6  // router -> worker: trailers or nothing
	TypeAbort      Type = 7  // router -> worker
	TypeAck        Type = 8  // worker -> router: u32 REQUEST frames received (cumulative)
	TypeRead       Type = 9  // worker -> router: u32 request body credit
	TypeResponse   Type = 10 // worker -> router
	TypeResBody    Type = 11 // worker -> router: u8 flags, body bytes
	TypeWindow     Type = 12 // router -> worker: u32 response bytes the client accepted
	TypeContinue   Type = 13 // worker -> router
	TypeCancel     Type = 14 // worker -> router
	TypeDetach     Type = 15 // worker -> router
	TypeDetachOK   Type = 16 // router -> worker
	TypeClose      Type = 17 // router -> worker: JSON
	TypeInfo       Type = 18 // worker -> router: RESPONSE's layout, status 102-199, no body
	TypeConnClosed Type = 19 // router -> worker
	TypeConnEnd    Type = 20 // worker -> router
	TypeConnFin    Type = 21 // router -> worker: the client sent its FIN (a port a standalone server owns); worker -> router: what was unanswered is aborted
	// a port a standalone server owns (version 6, connframes.go)
	TypeConnOpen    Type = 22 // router -> worker: a connection was accepted
	TypeConnError   Type = 23 // router -> worker: u16 status, str reason, the bytes read (node's 'clientError')
	TypeConnTimeout Type = 24 // router -> worker: the keep-alive wait ran out (node's socket 'timeout')
	TypeConnWrite   Type = 25 // worker -> router: bytes for the client as they are
	TypeConnDestroy Type = 26 // worker -> router: close the connection at once
	TypeConnIdle    Type = 27 // worker -> router: u8 answered; end it if idle (closeIdleConnections)
	// router -> worker: its responses are all answered but wait for the client, its next
	// request unread behind them: not its keep-alive wait (node's socket timeout runs)
	TypeConnHeld Type = 28
	// router -> worker: a CONN_IDLE answered 1 found the connection reading a request
	// (or one on its way to the worker): kept; what the worker got of it before this
	// frame was dispatched before the router learnt of the close (issue 25 "idle race")
	TypeConnKept Type = 29
)

// REQUEST flags (src/wire/protocol.js REQ_*).
const (
	ReqHasBody        = 1
	ReqKeepAlive      = 2
	ReqTLS            = 4 // the TLS section follows the header pairs
	ReqExpectContinue = 8
	ReqUpgrade        = 16
	ReqExpectOther    = 32 // an Expect other than 100-continue (HTTP/1.1)
	// ReqGrantedWindow: the router grants this request's response window (an h2
	// stream's), starting at GrantedWindowStart.
	ReqGrantedWindow = 64
	// ReqHead: an upgrade's (or CONNECT's) bytes read after its head follow the pairs
	// and the TLS section, as u32 length + bytes (Request.Head).
	ReqHead = 128
)

// RESPONSE and RES_BODY flags: the contract's (src/wire/contract.js) and the wire's own.
const (
	ResMore          = 1
	ResClose         = 2
	ResOpaque        = 4 // with 101: the connection becomes a tunnel
	ResKeepOpen      = 8
	ResHasConnection = 64 // the header block holds a Connection header
)

// Flow control defaults, docs/wire-protocol.md "Flow control".
const (
	DefaultReceiveWindow = 128
	InitialBodyWindow    = 64 << 10
	ResponseWindow       = 256 << 10
	GrantedWindowStart   = 8 << 10
)

// TLS section flags.
const (
	tlsAuthorized  = 1
	tlsCertificate = 2
)

// Code is the stable code of every ProtocolError (src/errors.js, README "Errors").
const Code = "ERR_HTTPSYS_PROTOCOL"

// ProtocolError is a peer breaking the wire's rules: the connection is dropped. Reason
// is the JS codec's wording, so logs read the same whichever side found it.
type ProtocolError struct {
	Reason string
}

func (e *ProtocolError) Error() string { return Code + ": " + e.Reason }

func protocolError(reason string) error { return &ProtocolError{Reason: reason} }

func badLength(n uint32) error {
	return protocolError("bad frame length " + strconv.FormatUint(uint64(n), 10))
}

// Frame is one frame as a view: Payload is a slice of the reader's buffer (or of the
// bytes given to Parse), valid until the next call that reads.
type Frame struct {
	Type    Type
	ID      uint32
	Payload []byte
	// Rest is how many payload bytes are still on the stream: only for a body frame
	// that Reader streams (Reader.StreamBodies); Payload holds what was buffered.
	Rest int
}

// Parse splits one frame off the front of b.
// It returns the frame, the bytes it took, and n == 0 without an error when b does not
// hold a whole frame yet.
func Parse(b []byte) (f Frame, n int, err error) {
	if len(b) < 4 {
		return Frame{}, 0, nil
	}
	l := binary.LittleEndian.Uint32(b)
	if l < 5 || l > MaxFrame {
		return Frame{}, 0, badLength(l)
	}
	total := 4 + int(l)
	if len(b) < total {
		return Frame{}, 0, nil
	}
	return Frame{Type: Type(b[4]), ID: binary.LittleEndian.Uint32(b[5:]), Payload: b[HeaderSize:total:total]}, total, nil
}
