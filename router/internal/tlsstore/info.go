package tlsstore

import (
	"crypto/tls"

	"httpsys/router/internal/wire"
)

// Info is a connection's TlsInfo (src/wire/contract.js) as the worker gets it: the
// session as node's TLSSocket reports it, and the router's verdict on the client's
// certificate.
func Info(cs *tls.ConnectionState, v Verdict) wire.TLSInfo {
	t := wire.TLSInfo{
		Authorized:         v.Authorized,
		Protocol:           protocolName(cs.Version),
		ALPNProtocol:       cs.NegotiatedProtocol,
		ServerName:         cs.ServerName,
		AuthorizationError: v.AuthorizationError,
	}
	t.CipherStandardName = tls.CipherSuiteName(cs.CipherSuite)
	t.CipherName, t.CipherVersion = t.CipherStandardName, "TLSv1.3"
	if c, ok := openSSLNames[cs.CipherSuite]; ok {
		t.CipherName, t.CipherVersion = c.name, c.version
	}
	if v.Peer != nil {
		t.Certificate = v.Peer.Raw
	}
	return t
}

func protocolName(v uint16) string {
	switch v {
	case tls.VersionTLS13:
		return "TLSv1.3"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS10:
		return "TLSv1"
	}
	return ""
}

// openSSLNames: node's getCipher() names a TLS 1.2 suite as OpenSSL does, with the
// lowest protocol version the suite needs (SSL_CIPHER_get_version); TLS 1.3 suites keep
// their standard name.
var openSSLNames = map[uint16]struct{ name, version string }{
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256:         {"ECDHE-RSA-AES128-GCM-SHA256", "TLSv1.2"},
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384:         {"ECDHE-RSA-AES256-GCM-SHA384", "TLSv1.2"},
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256:       {"ECDHE-ECDSA-AES128-GCM-SHA256", "TLSv1.2"},
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384:       {"ECDHE-ECDSA-AES256-GCM-SHA384", "TLSv1.2"},
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256:   {"ECDHE-RSA-CHACHA20-POLY1305", "TLSv1.2"},
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: {"ECDHE-ECDSA-CHACHA20-POLY1305", "TLSv1.2"},
	tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA:            {"ECDHE-RSA-AES128-SHA", "TLSv1"},
	tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA:            {"ECDHE-RSA-AES256-SHA", "TLSv1"},
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA:          {"ECDHE-ECDSA-AES128-SHA", "TLSv1"},
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA:          {"ECDHE-ECDSA-AES256-SHA", "TLSv1"},
	tls.TLS_RSA_WITH_AES_128_GCM_SHA256:               {"AES128-GCM-SHA256", "TLSv1.2"},
	tls.TLS_RSA_WITH_AES_256_GCM_SHA384:               {"AES256-GCM-SHA384", "TLSv1.2"},
	tls.TLS_RSA_WITH_AES_128_CBC_SHA:                  {"AES128-SHA", "SSLv3"},
	tls.TLS_RSA_WITH_AES_256_CBC_SHA:                  {"AES256-SHA", "SSLv3"},
}
