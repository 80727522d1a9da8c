package wire

import "encoding/binary"

// A REQUEST payload built once per request, where the request is read, and written as
// it is to whichever worker takes the request: a request whose worker died before it
// acknowledged it goes to the next worker with the same bytes, and the client
// connection's goroutine, not the worker's, pays for the encoding.

// AppendRequestHead appends REQUEST's fixed fields and its four strings (method, url,
// remote and local address) to dst; pairsAt is where the pair count goes
// (SetRequestPairs, once every AppendField is done). With ReqTLS, the caller appends
// the TLS section after the pairs.
func AppendRequestHead(dst []byte, r *Request) (out []byte, pairsAt int) {
	dst = append(dst, r.Flags, r.VersionMajor, r.VersionMinor, r.Family)
	dst = binary.LittleEndian.AppendUint16(dst, r.RemotePort)
	dst = binary.LittleEndian.AppendUint16(dst, r.LocalPort)
	dst = binary.LittleEndian.AppendUint32(dst, r.ConnectionID)
	pairsAt = len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst = appendStr(dst, r.Method)
	dst = appendStr(dst, r.URL)
	dst = appendStr(dst, r.RemoteAddress)
	dst = appendStr(dst, r.LocalAddress)
	return dst, pairsAt
}

// AppendField appends one name and value pair (a string is cut at MaxString: the
// router's header limit keeps every one shorter).
func AppendField[S string | []byte](dst []byte, name, value S) []byte {
	return appendStr(appendStr(dst, name), value)
}

// SetRequestPairs writes the pair count AppendRequestHead left room for.
func SetRequestPairs(payload []byte, pairsAt int, n uint32) {
	binary.LittleEndian.PutUint32(payload[pairsAt:], n)
}

// Prebuilt appends a frame whose payload the caller encoded (AppendRequestHead). A
// payload of RefThreshold bytes or more is referenced until WriteTo: it must not change.
func (w *Writer) Prebuilt(t Type, id uint32, payload []byte) {
	w.header(t, id, len(payload))
	w.payload(payload)
}

func appendStr[S string | []byte](dst []byte, s S) []byte {
	n := min(len(s), MaxString)
	dst = binary.LittleEndian.AppendUint16(dst, uint16(n))
	return append(dst, s[:n]...)
}
