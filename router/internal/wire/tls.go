package wire

import "encoding/binary"

// TLSInfo is REQUEST's TLS section: the client connection's session as the contract's
// TlsInfo (src/wire/contract.js). An empty string stands for null or false.
type TLSInfo struct {
	Authorized         bool
	Protocol           string
	CipherName         string
	CipherStandardName string
	CipherVersion      string
	ALPNProtocol       string
	ServerName         string
	AuthorizationError string
	Certificate        []byte // DER; nil: none
}

// AppendTLSInfo appends the TLS section (src/wire/protocol.js encodeTlsInfo): u8
// flags (1 authorized, 2 a certificate follows), seven strings, then with flag 2 the
// u32-length certificate. The router encodes it once per connection (the session does not
// change: no renegotiation) and every REQUEST of that connection carries a copy.
// A string is cut at 65535 bytes, as the JS encoder cuts it.
func AppendTLSInfo(dst []byte, t *TLSInfo) []byte {
	var flags byte
	if t.Authorized {
		flags |= tlsAuthorized
	}
	if len(t.Certificate) > 0 {
		flags |= tlsCertificate
	}
	dst = append(dst, flags)
	for _, s := range [...]string{t.Protocol, t.CipherName, t.CipherStandardName, t.CipherVersion, t.ALPNProtocol, t.ServerName, t.AuthorizationError} {
		s = s[:min(len(s), MaxString)]
		dst = binary.LittleEndian.AppendUint16(dst, uint16(len(s)))
		dst = append(dst, s...)
	}
	if len(t.Certificate) > 0 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(t.Certificate)))
		dst = append(dst, t.Certificate...)
	}
	return dst
}

// DecodeTLSInfo reads a TLS section at the start of b; n is its length. Flag bits
// other than 1 and 2 are ignored, as src/wire/protocol.js decodeTlsInfo ignores them.
func DecodeTLSInfo(b []byte) (t TLSInfo, n int, err error) {
	if len(b) < 1 {
		return TLSInfo{}, 0, short(TypeRequest, "TLS section")
	}
	flags := b[0]
	p, ok := scanStrs(b[1:], 7)
	if !ok {
		return TLSInfo{}, 0, short(TypeRequest, "TLS section")
	}
	var strs [7][]byte
	s := b[1 : 1+p]
	for i := range strs {
		strs[i], s = cutStr(s)
	}
	p++
	t = TLSInfo{
		Authorized: flags&tlsAuthorized != 0, Protocol: string(strs[0]), CipherName: string(strs[1]),
		CipherStandardName: string(strs[2]), CipherVersion: string(strs[3]), ALPNProtocol: string(strs[4]),
		ServerName: string(strs[5]), AuthorizationError: string(strs[6]),
	}
	if flags&tlsCertificate != 0 {
		if len(b)-p < 4 {
			return TLSInfo{}, 0, short(TypeRequest, "TLS certificate")
		}
		cl := uint64(binary.LittleEndian.Uint32(b[p:]))
		if cl > uint64(len(b)-p-4) {
			return TLSInfo{}, 0, short(TypeRequest, "TLS certificate")
		}
		t.Certificate = b[p+4 : p+4+int(cl) : p+4+int(cl)]
		p += 4 + int(cl)
	}
	return t, p, nil
}
