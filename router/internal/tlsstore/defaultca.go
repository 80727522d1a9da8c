package tlsstore

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
)

// node's default CA store (issue 25): an https server or a config entry that asks for
// client certificates (requestCert) without a `ca` has node check them against its
// default roots (tls.rootCertificates, with NODE_EXTRA_CA_CERTS), and the standard
// library has no such bundle of its own to give, so the node side sends its own
// (src/tls-default-ca.js) and a slot without a CA verifies against it. As node's
// context does with those roots (SecureContext::AddRootCerts adds no client CA
// names), they are not named in the CertificateRequest (RFC 8446 4.3.2): only a `ca`
// given and a pfx's other certificates are.

// SetDefaultCA replaces the default roots with the certificates of pemText (PEM,
// concatenated); slots made from now on verify against them when their entry has no CA.
func (s *Store) SetDefaultCA(pemText string) error {
	var roots []*x509.Certificate
	rest := []byte(pemText)
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			// node's bundle holds none it cannot read; one that does not parse here is
			// left out rather than failing every certificate with it
			continue
		}
		roots = append(roots, c)
	}
	if len(roots) == 0 && pemText != "" {
		return errors.New("the default CA holds no PEM certificate")
	}
	s.mu.Lock()
	s.roots = roots
	clear(s.configs)
	s.mu.Unlock()
	return nil
}

// defaultRoots is what a slot without a CA verifies against.
func (s *Store) defaultRoots() []*x509.Certificate {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roots
}
