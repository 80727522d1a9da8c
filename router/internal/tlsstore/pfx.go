package tlsstore

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"strings"

	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// The reasons node's tls.createSecureContext({ pfx, passphrase }) gives, in the words
// of src/tls-material.js explain: OpenSSL's own message where it passes it on.
const (
	reasonPassphrase  = "the passphrase is wrong (or missing)"
	reasonUnsupported = "it is not a PEM certificate and key, or not the one it claims (Unsupported PKCS12 PFX data)"
	reasonPFXNoKey    = "Unable to load private key from PFX data"
	reasonPFXNoCert   = "Unable to load certificate from PFX data"
)

// RC2 (RFC 7292 appendix C, pbeWithSHAAnd128BitRC2-CBC and pbeWithSHAAnd40BitRC2-CBC):
// `openssl pkcs12 -export -legacy` encrypts the certificates with it, and node's
// OpenSSL 3 has it only in the legacy provider, which node does not load by default.
// Node (and so the supervisor, which checks the config's files with it) refuses such a
// file, so the router does too, in src/tls-material.js's words, although go-pkcs12
// reads it.
var (
	oidRC2With128 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 5}
	oidRC2With40  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 6}
	oidData       = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}
	oidEncrypted  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 6}
)

// RFC 7292 4 and RFC 2315 13, as far as the algorithm of an encryptedData.
type pfxPDU struct {
	Version  int
	AuthSafe contentInfo
	MacData  asn1.RawValue `asn1:"optional"`
}

type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"tag:0,explicit,optional"`
}

type encryptedData struct {
	Version int
	Info    struct {
		ContentType asn1.ObjectIdentifier
		Algorithm   pkix.AlgorithmIdentifier
		Content     asn1.RawValue `asn1:"tag:0,optional"`
	}
}

// usesRC2 reports whether a part of the file is encrypted with RC2. A file it cannot
// walk is left to the decoder, whose error names the problem.
func usesRC2(der []byte) bool {
	var pfx pfxPDU
	if _, err := asn1.Unmarshal(der, &pfx); err != nil || !pfx.AuthSafe.ContentType.Equal(oidData) {
		return false
	}
	var safe []byte
	if _, err := asn1.Unmarshal(pfx.AuthSafe.Content.Bytes, &safe); err != nil {
		return false
	}
	var parts []contentInfo
	if _, err := asn1.Unmarshal(safe, &parts); err != nil {
		return false
	}
	for _, p := range parts {
		if !p.ContentType.Equal(oidEncrypted) {
			continue
		}
		var ed encryptedData
		if _, err := asn1.Unmarshal(p.Content.Bytes, &ed); err != nil {
			continue
		}
		if a := ed.Info.Algorithm.Algorithm; a.Equal(oidRC2With128) || a.Equal(oidRC2With40) {
			return true
		}
	}
	return false
}

// loadPFX reads a PKCS#12 file (DER) as node's context takes it: the certificate that
// belongs to the key, the file's other certificates as its chain (and, for a client
// certificate's verification, as trusted CAs: node adds them to the context's store).
// The error is a *MaterialError in src/tls-material.js's words.
func loadPFX(der []byte, passphrase string) (tls.Certificate, []*x509.Certificate, error) {
	fail := func(reason string) (tls.Certificate, []*x509.Certificate, error) {
		return tls.Certificate{}, nil, &MaterialError{Reason: reason}
	}
	if usesRC2(der) {
		return fail(reasonUnsupported)
	}
	key, leaf, others, err := pkcs12.DecodeChain(der, passphrase)
	if err != nil {
		var ni pkcs12.NotImplementedError
		switch {
		case errors.Is(err, pkcs12.ErrIncorrectPassword), errors.Is(err, pkcs12.ErrDecryption):
			return fail(reasonPassphrase)
		case err.Error() == "pkcs12: private key missing":
			return fail(reasonPFXNoKey)
		case err.Error() == "pkcs12: certificate missing":
			return fail(reasonPFXNoCert)
		case errors.As(err, &ni):
			return fail("it is not a PEM certificate and key, or not the one it claims (Unsupported PKCS12 PFX data: " + ni.Error() + ")")
		}
		// Go's ASN.1 message up to its dump of the decoder's state
		msg := strings.TrimPrefix(err.Error(), "pkcs12: error reading P12 data: ")
		if i := strings.IndexAny(msg, "({"); i > 0 {
			msg = strings.TrimSpace(msg[:i])
		}
		return fail("it is not a .pfx (PKCS#12) file (" + msg + ")")
	}
	// the file's order is not the chain's: the leaf is the certificate of the key
	all := append([]*x509.Certificate{leaf}, others...)
	pub, _ := key.(interface{ Public() crypto.PublicKey })
	at := -1
	for i, c := range all {
		if pub != nil && publicKeyEqual(c.PublicKey, pub.Public()) {
			at = i
			break
		}
	}
	if at == -1 {
		return fail("the private key does not belong to the certificate")
	}
	leaf = all[at]
	chain := append(append([]*x509.Certificate{}, all[:at]...), all[at+1:]...)
	out := tls.Certificate{PrivateKey: key, Leaf: leaf, Certificate: [][]byte{leaf.Raw}}
	for _, c := range chain {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	return out, chain, nil
}

func publicKeyEqual(a, b crypto.PublicKey) bool {
	ka, err1 := x509.MarshalPKIXPublicKey(a)
	kb, err2 := x509.MarshalPKIXPublicKey(b)
	return err1 == nil && err2 == nil && bytes.Equal(ka, kb)
}
