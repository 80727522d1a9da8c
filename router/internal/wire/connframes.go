package wire

import "encoding/binary"

// A standalone server's connection lifecycle (version 6, docs/wire-protocol.md
// "Connections of a port a standalone server owns"): what node's server learns of a
// connection by holding its socket ('connection', 'clientError', 'timeout') and what it
// does to one (closeIdleConnections(), closeAllConnections(), a 'clientError'
// listener's own answer) crosses the process boundary as these frames.

// ConnOpen is CONN_OPEN's payload: the accepted connection's addresses as node prints
// them (socket.remoteAddress and the rest).
type ConnOpen struct {
	Family        uint8 // 4 or 6
	RemotePort    uint16
	LocalPort     uint16
	RemoteAddress string
	LocalAddress  string
}

// ConnOpen appends CONN_OPEN: u8 family, u16 remotePort, u16 localPort, str
// remoteAddress, str localAddress.
func (w *Writer) ConnOpen(id uint32, o *ConnOpen) {
	w.header(TypeConnOpen, id, 5+2+len(o.RemoteAddress)+2+len(o.LocalAddress))
	w.slab = append(w.slab, o.Family)
	w.slab = binary.LittleEndian.AppendUint16(w.slab, o.RemotePort)
	w.slab = binary.LittleEndian.AppendUint16(w.slab, o.LocalPort)
	putStr(w, o.RemoteAddress)
	putStr(w, o.LocalAddress)
}

// ConnError appends CONN_ERROR: u16 status (the router's answer to what it could not
// parse, 408 for a head that did not come within headersTimeout), str reason (the
// parser's words, from which the worker names node's llhttp code), then the bytes the
// router was parsing (node's err.rawPacket). raw is copied.
func (w *Writer) ConnError(id uint32, status uint16, reason string, raw []byte) {
	if len(reason) > MaxString {
		reason = reason[:MaxString]
	}
	if 4+len(reason)+len(raw) > MaxFrame-5 {
		raw = raw[:MaxFrame-5-4-len(reason)]
	}
	w.header(TypeConnError, id, 4+len(reason)+len(raw))
	w.slab = binary.LittleEndian.AppendUint16(w.slab, status)
	putStr(w, reason)
	w.slab = append(w.slab, raw...)
}

// ConnOpen decodes CONN_OPEN (views of the frame).
func (f Frame) ConnOpen() (ConnOpen, bool) {
	p := f.Payload
	if len(p) < 7 {
		return ConnOpen{}, false
	}
	o := ConnOpen{Family: p[0], RemotePort: binary.LittleEndian.Uint16(p[1:]), LocalPort: binary.LittleEndian.Uint16(p[3:])}
	p = p[5:]
	ra, p, ok := str(p)
	if !ok {
		return ConnOpen{}, false
	}
	la, _, ok := str(p)
	if !ok {
		return ConnOpen{}, false
	}
	o.RemoteAddress, o.LocalAddress = string(ra), string(la)
	return o, true
}

// ConnError decodes CONN_ERROR (views of the frame).
func (f Frame) ConnError() (status uint16, reason, raw []byte, ok bool) {
	p := f.Payload
	if len(p) < 4 {
		return 0, nil, nil, false
	}
	status = binary.LittleEndian.Uint16(p)
	reason, raw, ok = str(p[2:])
	return status, reason, raw, ok
}

func str(p []byte) (s, rest []byte, ok bool) {
	if len(p) < 2 {
		return nil, nil, false
	}
	n := int(binary.LittleEndian.Uint16(p))
	if len(p) < 2+n {
		return nil, nil, false
	}
	return p[2 : 2+n], p[2+n:], true
}
