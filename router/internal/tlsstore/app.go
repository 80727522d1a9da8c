package tlsstore

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"regexp"
	"strings"
	"time"
)

// AppLabel is what an app's key material is called in messages (src/tls-material.js).
const AppLabel = "the key and certificate the app passed to https.createServer()"

// MaterialError is key material an app sent that cannot serve: Reason is in the words
// of ERR_HTTPSYS_TLS_CERT's reason (src/tls-material.js loadMaterial).
type MaterialError struct{ Reason string }

func (e *MaterialError) Error() string { return e.Reason }

// an encrypted PEM private key: PKCS#8's own label, or a traditional key's header
var encryptedKey = regexp.MustCompile(`-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type:\s*4,ENCRYPTED`)

// AppMaterial decodes and checks an app's key material as HELLO carries it (`tls`:
// src/wire/protocol.js encodeTlsOptions: each value PEM text, {base64}, {pem,
// passphrase} or a list of them). ok is false when it holds none.
func AppMaterial(raw json.RawMessage, now time.Time) (e Entry, ok bool, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return Entry{}, false, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return Entry{}, false, nil
	}
	fail := func(reason string) (Entry, bool, error) { return Entry{}, true, &MaterialError{Reason: reason} }
	var passphrase string
	_ = json.Unmarshal(m["passphrase"], &passphrase)
	certs, _ := values(m["cert"])
	keys, keyPass := values(m["key"])
	pfx, _ := values(m["pfx"])
	cas, _ := values(m["ca"])
	if keyPass != "" {
		passphrase = keyPass
	}
	if len(certs) == 0 && len(keys) == 0 && len(pfx) == 0 && len(cas) == 0 {
		return Entry{}, false, nil
	}
	if len(pfx) > 0 {
		return fail("a .pfx is not served by the native router yet (HTTPSYS_ROUTER=native): pass key and cert in PEM")
	}
	if len(certs) == 0 || len(keys) == 0 {
		if len(certs) == 0 {
			return fail("no certificate was given (cert, or pfx)")
		}
		return fail("the certificate has no private key (key)")
	}
	cert := bytes.Join(certs, []byte("\n"))
	leaf, err := firstCertificate(cert)
	if err != nil {
		return fail("it holds no PEM certificate (" + err.Error() + ")")
	}
	key := keys[0]
	if encryptedKey.Match(key) {
		if key, err = decryptKey(key, passphrase); err != nil {
			return fail("the private key is encrypted and the passphrase is wrong or missing")
		}
	}
	if _, err := tls.X509KeyPair(cert, key); err != nil {
		if strings.Contains(err.Error(), "does not match") {
			return fail("the private key does not belong to the certificate")
		}
		return fail("it is not a PEM certificate and key, or not the one it claims (" + err.Error() + ")")
	}
	ca := bytes.Join(cas, []byte("\n"))
	if len(cas) > 0 {
		if _, err := firstCertificate(ca); err != nil {
			return fail("it holds no PEM CA certificate (" + err.Error() + ")")
		}
	}
	if now.After(leaf.NotAfter) {
		return fail("the certificate (" + subjectOf(leaf) + ") expired on " + isoTime(leaf.NotAfter))
	}
	if now.Before(leaf.NotBefore) {
		return fail("the certificate (" + subjectOf(leaf) + ") is not valid before " + isoTime(leaf.NotBefore))
	}
	var requestCert, reject bool
	reject = true
	_ = json.Unmarshal(m["requestCert"], &requestCert)
	_ = json.Unmarshal(m["rejectUnauthorized"], &reject)
	reject = requestCert && reject
	return Entry{Cert: string(cert), Key: string(key), CA: string(ca), RequestCert: requestCert, RejectUnauthorized: &reject, Label: AppLabel}, true, nil
}

// values reads one option: a value or a list; a {pem, passphrase} form's passphrase.
func values(raw json.RawMessage) (out [][]byte, passphrase string) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, ""
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		list = []json.RawMessage{raw}
	}
	for _, r := range list {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out = append(out, []byte(s))
			continue
		}
		var o struct {
			Base64     *string         `json:"base64"`
			PEM        json.RawMessage `json:"pem"`
			Passphrase string          `json:"passphrase"`
		}
		if json.Unmarshal(r, &o) != nil {
			continue
		}
		switch {
		case o.Base64 != nil:
			if b, err := base64.StdEncoding.DecodeString(*o.Base64); err == nil {
				out = append(out, b)
			}
		case len(o.PEM) > 0:
			inner, _ := values(o.PEM)
			out = append(out, inner...)
			passphrase = o.Passphrase
		}
	}
	return out, passphrase
}

func firstCertificate(b []byte) (*x509.Certificate, error) {
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			return nil, errors.New("no PEM CERTIFICATE block")
		}
		if blk.Type == "CERTIFICATE" {
			return x509.ParseCertificate(blk.Bytes)
		}
	}
}

// decryptKey opens a traditional encrypted PEM key (RFC 1421 headers); an encrypted
// PKCS#8 key is not opened here (the standard library has no PBES2 decoder).
func decryptKey(key []byte, passphrase string) ([]byte, error) {
	blk, _ := pem.Decode(key)
	if blk == nil || passphrase == "" || !x509.IsEncryptedPEMBlock(blk) { //nolint:staticcheck // legacy keys are what apps pass
		return nil, errors.New("cannot open")
	}
	der, err := x509.DecryptPEMBlock(blk, []byte(passphrase)) //nolint:staticcheck // as above
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: blk.Type, Bytes: der}), nil
}

func subjectOf(c *x509.Certificate) string {
	if c.Subject.CommonName != "" {
		return "CN=" + c.Subject.CommonName
	}
	return c.Subject.String()
}

// isoTime is JS's Date.toISOString().
func isoTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
